import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PIX_SCOPES, TokenAnswer } from '@paygate/pix';
import { Agent, type Dispatcher, request } from 'undici';
import { channelSpan } from '../../../observability/tracing.js';
import { ChannelUnavailable } from '../connector.js';

/** What the client needs of a `pix-api` channel's settings. */
export interface PixClientSettings {
  readonly name: string;
  readonly baseUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile?: string | undefined;
  readonly timeoutMs: number;
}

/** One answer of the provider: its status and its body parsed as JSON (undefined when empty). */
export interface PixAnswer {
  readonly status: number;
  readonly json: unknown;
}

type Outcome = 'ok' | 'error' | 'timeout';

/** A token is given up this long before the provider says it expires (clock skew, a slow call). */
const EXPIRY_MARGIN_MS = 30_000;
/** A token answer without `expires_in` is kept this long (RFC 6749 leaves it to the server). */
const DEFAULT_TOKEN_LIFE_MS = 300_000;
/** Answers are small JSON documents; more than this is not an answer of the API Pix. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * The HTTP side of a `pix-api` channel: every call, the token's included, over TLS with the
 * channel's client certificate (mTLS) on one keep-alive connection pool; with `caFile` that bundle
 * alone is trusted for the provider's certificate. Calls carry an OAuth 2.0 client-credentials
 * token (RFC 6749 §4.4), fetched once and shared by concurrent callers, reused until shortly
 * before it expires, and replaced once (with one retry of the call) when the API answers 401 or
 * 403: a token the provider revoked or expired early costs no failed request.
 */
export class PixApiClient {
  private readonly agent: Dispatcher;
  private token: { readonly value: string; readonly until: number } | undefined;
  /** The token fetch in flight, shared by every caller that needs a token meanwhile. */
  private fetching: Promise<string> | undefined;

  constructor(
    private readonly settings: PixClientSettings,
    private readonly now: () => number,
    private readonly count: (operation: string, outcome: Outcome) => void,
  ) {
    const read = (path: string) => readFileSync(resolve(path), 'utf8');
    this.agent = new Agent({
      connections: 32,
      keepAliveTimeout: 30_000,
      connect: {
        cert: read(settings.certFile),
        key: read(settings.keyFile),
        ...(settings.caFile !== undefined ? { ca: read(settings.caFile) } : {}),
        rejectUnauthorized: true,
        timeout: settings.timeoutMs,
      },
    });
  }

  /** Closes the connection pool. */
  close(): Promise<void> {
    return this.agent.close();
  }

  /**
   * One API call (`path` under baseUrl) with a bearer token; 401 or 403 gets a new token and one
   * retry. Network failures and timeouts throw ChannelUnavailable; any status is returned (the
   * caller decides what it means), its body parsed as JSON (not JSON: ChannelUnavailable).
   */
  async call(operation: string, method: 'GET' | 'PUT' | 'PATCH', path: string, body?: unknown): Promise<PixAnswer> {
    return channelSpan(`${this.settings.name}.${operation}`, async (span) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const send = async (token: string) =>
        this.send(operation, `${this.settings.baseUrl}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(text !== undefined ? { body: text } : {}),
        });
      const used = await this.accessToken();
      let answer = await send(used);
      if (answer.status === 401 || answer.status === 403) {
        // Revoked or expired before its time: one new token (shared with concurrent callers), one retry.
        answer = await send(await this.renewToken(used));
      }
      span.setAttribute('http.response.status_code', answer.status);
      this.count(operation, answer.status < 500 ? 'ok' : 'error');
      return answer;
    });
  }

  /** A valid token: the cached one, or one fetch shared by all callers waiting meanwhile. */
  private accessToken(): Promise<string> {
    const token = this.token;
    if (token && token.until > this.now()) return Promise.resolve(token.value);
    return this.fetchToken();
  }

  /** Drops `stale` (unless another caller already replaced it) and gets a new token. */
  private renewToken(stale: string): Promise<string> {
    if (this.token?.value === stale) this.token = undefined;
    return this.accessToken();
  }

  private fetchToken(): Promise<string> {
    this.fetching ??= this.requestToken().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  /** `POST tokenUrl`, the client-credentials grant with HTTP Basic client authentication (RFC 6749 §2.3.1). */
  private async requestToken(): Promise<string> {
    const { clientId, clientSecret } = this.settings;
    // RFC 6749 §2.3.1: the id and secret are form-urlencoded before they are joined for Basic.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const started = this.now();
    const answer = await this.send('token', this.settings.tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: PIX_SCOPES.join(' ') }).toString(),
    });
    if (answer.status !== 200) {
      this.count('token', 'error');
      throw new ChannelUnavailable(this.settings.name, `token: answered ${answer.status}`);
    }
    const parsed = TokenAnswer.safeParse(answer.json);
    if (!parsed.success) {
      this.count('token', 'error');
      throw new ChannelUnavailable(this.settings.name, 'token: an answer that is not an OAuth 2.0 token');
    }
    this.count('token', 'ok');
    const lifeMs = parsed.data.expires_in !== undefined ? parsed.data.expires_in * 1000 : DEFAULT_TOKEN_LIFE_MS;
    // Counted from when it was asked for; a short-lived token is still used once.
    const until = started + Math.max(lifeMs - EXPIRY_MARGIN_MS, lifeMs / 2);
    this.token = { value: parsed.data.access_token, until };
    return parsed.data.access_token;
  }

  /** One request over the mTLS pool, bounded by the channel's timeout; redirects are not followed. */
  private async send(
    operation: string,
    url: string,
    options: { method: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string },
  ): Promise<PixAnswer> {
    let status: number;
    let raw: string;
    try {
      const response = await request(url, {
        ...options,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      status = response.statusCode;
      const length = Number(response.headers['content-length'] ?? 0);
      if (length > MAX_ANSWER_BYTES) {
        response.body.destroy();
        throw new ChannelUnavailable(this.settings.name, `${operation}: an answer of ${length} bytes`);
      }
      raw = await response.body.text();
    } catch (error) {
      if (error instanceof ChannelUnavailable) throw error;
      const timeout = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      this.count(operation, timeout ? 'timeout' : 'error');
      throw new ChannelUnavailable(this.settings.name, `${operation}: ${timeout ? 'timed out' : 'unreachable'}`, {
        cause: error,
      });
    }
    if (raw.length > MAX_ANSWER_BYTES) throw new ChannelUnavailable(this.settings.name, `${operation}: too large`);
    if (raw.trim() === '') return { status, json: undefined };
    try {
      return { status, json: JSON.parse(raw) };
    } catch {
      this.count(operation, 'error');
      throw new ChannelUnavailable(this.settings.name, `${operation}: answered ${status} with something not JSON`);
    }
  }
}
