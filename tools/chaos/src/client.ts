/**
 * A merchant's API client for the campaign: signed, sealed requests built with the protocol
 * package and sent with node:http, one attempt each (the flows decide about retries, as a shop
 * does), every attempt recorded with its nonce, timing and answer for the checker.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import {
  boxPublicKeyFrom,
  generateSigningKey,
  type SigningKey,
  signReadRequest,
  signWriteRequest,
} from '@paygate/protocol';

export interface Onboarded {
  readonly name: string;
  readonly accessKey: string;
  readonly key: SigningKey;
  readonly bodyKey: { keyId: string; publicKey: Buffer };
  readonly webhookKeys: { keyid: string; publicKey: string }[];
}

/** Onboards a merchant through the operator API (`POST /admin/v1/merchants`). */
export async function onboard(baseUrl: string, adminToken: string, name: string): Promise<Onboarded> {
  const key = generateSigningKey();
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await fetch(`${baseUrl}/admin/v1/merchants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, publicKey: key.publicKey.toString('base64') }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as {
        data: {
          accessKey: string;
          bodyKey: { keyId: string; publicKey: string };
          webhookKeys: { keyid: string; publicKey: string }[];
        };
      };
      if (response.status !== 200) throw new Error(`merchant create answered ${response.status}`);
      const bodyPublic = boxPublicKeyFrom(body.data.bodyKey.publicKey);
      if (!bodyPublic.ok) throw new Error('bad body key');
      return {
        name,
        accessKey: body.data.accessKey,
        key,
        bodyKey: { keyId: body.data.bodyKey.keyId, publicKey: bodyPublic.value },
        webhookKeys: body.data.webhookKeys,
      };
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** One attempt as the client saw it. */
export interface Attempt {
  readonly merchant: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly nonce: string;
  readonly sentAt: number;
  answeredAt: number;
  /** HTTP status, or 0 when no answer came (`error` says why). */
  status: number;
  msg?: string;
  error?: string;
  /** Which API instance answered (the Paygate-Server-Id header), when it said. */
  server?: string;
  /** Whether this attempt sent bytes already sent once (a deliberate replay). */
  readonly replay: boolean;
}

export interface Answer {
  readonly status: number;
  readonly body: { msg?: string; data?: Record<string, unknown>; [key: string]: unknown };
}

/** A signed write ready to send, kept so the very same bytes can be sent again. */
export interface BuiltWrite {
  readonly path: string;
  readonly nonce: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export class MerchantClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });

  constructor(
    readonly merchant: Onboarded,
    private readonly baseUrl: string,
    private readonly record: (attempt: Attempt) => void,
    private readonly timeoutMs = 30_000,
  ) {}

  build(path: string, payload: unknown): BuiltWrite {
    const nonce = randomUUID();
    const signed = signWriteRequest(
      {
        path,
        plaintext: Buffer.from(JSON.stringify(payload)),
        bodyKey: this.merchant.bodyKey,
        idempotencyKey: randomUUID(),
      },
      {
        accessKey: this.merchant.accessKey,
        key: this.merchant.key,
        created: Math.floor(Date.now() / 1000),
        nonce,
      },
    );
    return { path, nonce, headers: signed.headers as Record<string, string>, body: Buffer.from(signed.body) };
  }

  /** Sends a built write (again, when `replay`); undefined when no answer came. */
  send(built: BuiltWrite, replay = false): Promise<Answer | undefined> {
    return this.exchange('POST', built.path, built.headers, built.body, built.nonce, replay);
  }

  post(path: string, payload: unknown): Promise<Answer | undefined> {
    return this.send(this.build(path, payload));
  }

  get(path: string, query: string): Promise<Answer | undefined> {
    const nonce = randomUUID();
    const signed = signReadRequest(
      { path, query },
      {
        accessKey: this.merchant.accessKey,
        key: this.merchant.key,
        created: Math.floor(Date.now() / 1000),
        nonce,
      },
    );
    return this.exchange('GET', `${path}?${query}`, signed.headers as Record<string, string>, undefined, nonce, false);
  }

  close(): void {
    this.agent.destroy();
  }

  private exchange(
    method: 'GET' | 'POST',
    target: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    nonce: string,
    replay: boolean,
  ): Promise<Answer | undefined> {
    const attempt: Attempt = {
      merchant: this.merchant.accessKey,
      method,
      path: target.split('?')[0] as string,
      nonce,
      sentAt: Date.now(),
      answeredAt: 0,
      status: 0,
      replay,
    };
    return new Promise((resolve) => {
      const done = (answer: Answer | undefined, error?: string) => {
        attempt.answeredAt = Date.now();
        if (answer) {
          attempt.status = answer.status;
          if (typeof answer.body.msg === 'string') attempt.msg = answer.body.msg;
        }
        if (error) attempt.error = error;
        this.record(attempt);
        resolve(answer);
      };
      const req = httpRequest(
        new URL(target, this.baseUrl),
        { method, headers, agent: this.agent, timeout: this.timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          const server = res.headers['paygate-server-id'];
          if (typeof server === 'string') attempt.server = server;
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (error: NodeJS.ErrnoException) => done(undefined, error.code ?? error.message));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Answer['body'];
            try {
              parsed = JSON.parse(text) as Answer['body'];
            } catch {
              parsed = { unparsable: text.slice(0, 200) };
            }
            done({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })));
      req.on('error', (error: NodeJS.ErrnoException) => done(undefined, error.code ?? error.message));
      req.end(body);
    });
  }
}
