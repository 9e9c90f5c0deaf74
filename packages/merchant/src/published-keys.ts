import { publicKeyFrom } from '@paygate/protocol/web';
import { z } from 'zod';
import { PaygateConfigError } from './errors.js';

/** Where and how often to fetch the platform's published webhook keys. */
export interface PublishedWebhookKeysOptions {
  /** The platform's base URL, e.g. `http://127.0.0.1:8080` (the keys are at `/.well-known/paygate/webhook-keys`). */
  readonly baseUrl: string;
  /**
   * How long a fetched key set is used before it is fetched again, in milliseconds (default: the
   * answer's `Cache-Control: max-age`, else 300 000). A retired key stops verifying once the set
   * it was in expires.
   */
  readonly ttlMs?: number;
  /**
   * The shortest time between two fetches caused by an unknown keyid, in milliseconds (default
   * 30 000): a flood of webhooks with made-up keyids costs at most one fetch per interval.
   */
  readonly minRefetchIntervalMs?: number;
  /** Time limit of one fetch, in milliseconds (default 10 000). */
  readonly timeoutMs?: number;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** The clock, milliseconds since the epoch (default `Date.now`): drives the TTL and the refetch limit. */
  readonly clock?: () => number;
}

const answerSchema = z.object({
  environment: z.string().optional(),
  keys: z.array(z.object({ keyid: z.string().min(1), publicKey: z.string().min(1), status: z.string().optional() })),
});

/** One fetched key set. */
interface KeySet {
  readonly keys: ReadonlyMap<string, Uint8Array>;
  readonly fetchedAt: number;
  readonly ttlMs: number;
}

/** The path of the published webhook keys under the platform's base URL. */
export const WEBHOOK_KEYS_PATH = '/.well-known/paygate/webhook-keys';

/**
 * The platform's webhook public keys, fetched from its published endpoint
 * (`GET /.well-known/paygate/webhook-keys`) and cached, for {@link WebhookVerifier}'s
 * `publishedKeys` option. Rotation needs no redeploy: a keyid not in the cached set triggers one
 * refetch (at most once per `minRefetchIntervalMs`), and the set is refetched when its TTL runs
 * out, so retired keys stop verifying. Concurrent lookups share one fetch.
 *
 * @example
 * ```ts
 * const verifier = new WebhookVerifier({ publishedKeys: new PublishedWebhookKeys({ baseUrl: 'https://api.paygate.example' }) });
 * ```
 */
export class PublishedWebhookKeys {
  /** The URL the keys are fetched from. */
  readonly url: string;
  readonly #ttlMs: number | undefined;
  readonly #minRefetchIntervalMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #clock: () => number;
  #set: KeySet | undefined;
  #inFlight: Promise<KeySet> | undefined;
  #lastRefetch = Number.NEGATIVE_INFINITY;
  #fetches = 0;

  /** @throws {@link PaygateConfigError} when `baseUrl` is not an http(s) URL. */
  constructor(options: PublishedWebhookKeysOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new PaygateConfigError(`publishedKeys.baseUrl: not a URL: ${options.baseUrl}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new PaygateConfigError(`publishedKeys.baseUrl: an http(s) URL, not ${base.protocol}`);
    }
    this.url = `${base.origin}${base.pathname.replace(/\/$/, '')}${WEBHOOK_KEYS_PATH}`;
    this.#ttlMs = options.ttlMs;
    this.#minRefetchIntervalMs = options.minRefetchIntervalMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#clock = options.clock ?? Date.now;
  }

  /** How many times the keys were fetched (for monitoring and tests). */
  get fetches(): number {
    return this.#fetches;
  }

  /**
   * The key set to verify a webhook signed with `keyid`: the cached set while its TTL lasts;
   * fetched again when it expired, or when it lacks `keyid` and no refetch happened within
   * `minRefetchIntervalMs`.
   *
   * @throws Error when no key set could be fetched at all (a stale set is used when a refetch fails).
   */
  async keysFor(keyid: string | undefined): Promise<ReadonlyMap<string, Uint8Array>> {
    const now = this.#clock();
    const set = this.#set;
    if (!set || now - set.fetchedAt >= set.ttlMs) return (await this.#refresh(set)).keys;
    if (keyid === undefined || set.keys.has(keyid)) return set.keys;
    if (now - this.#lastRefetch < this.#minRefetchIntervalMs) return set.keys;
    this.#lastRefetch = now;
    return (await this.#refresh(set)).keys;
  }

  /** Fetches the keys now (whatever the cache holds) and returns their keyids. */
  async refresh(): Promise<string[]> {
    return [...(await this.#refresh(undefined)).keys.keys()];
  }

  async #refresh(stale: KeySet | undefined): Promise<KeySet> {
    this.#inFlight ??= this.#load().finally(() => {
      this.#inFlight = undefined;
    });
    try {
      return await this.#inFlight;
    } catch (error) {
      // Keep verifying with what we had rather than refusing everything while the platform is away.
      if (stale) return stale;
      throw error;
    }
  }

  async #load(): Promise<KeySet> {
    this.#fetches++;
    const response = await this.#fetch(this.url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`GET ${this.url} answered ${response.status}`);
    let parsed: z.infer<typeof answerSchema>;
    try {
      parsed = answerSchema.parse(JSON.parse(text));
    } catch {
      throw new Error(`GET ${this.url} did not answer the published webhook keys ({"keys":[{"keyid","publicKey"}]})`);
    }
    const keys = new Map<string, Uint8Array>();
    for (const key of parsed.keys) {
      if (key.status === 'retired') continue;
      const publicKey = publicKeyFrom(key.publicKey);
      if (publicKey.ok) keys.set(key.keyid, publicKey.value);
    }
    const maxAge = /(?:^|,)\s*max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '');
    const ttlMs = this.#ttlMs ?? (maxAge ? Number(maxAge[1]) * 1000 : 300_000);
    const set = { keys, fetchedAt: this.#clock(), ttlMs };
    this.#set = set;
    return set;
  }
}
