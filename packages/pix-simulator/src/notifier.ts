import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { OutboxEntry } from './model.js';
import type { Store } from './store.js';

export interface NotifierOptions {
  /** Deliveries per step at most (one after another, oldest due first). */
  readonly batch: number;
  /** First retry delay; doubled per failed attempt up to `retryMaxMs`. */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly timeoutMs: number;
  /** What an https callback presents and trusts: the simulator's own client certificate, and the system roots plus its CA. */
  readonly tls: { readonly cert: string; readonly key: string; readonly ca: readonly string[] };
}

/** The delay before attempt `attempts + 1` after `attempts` failures. */
export function backoff(attempts: number, options: Pick<NotifierOptions, 'retryBaseMs' | 'retryMaxMs'>): number {
  return Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
}

/**
 * Delivers the persisted outbox: `POST {webhookUrl}/pix` with the stored body, over HTTPS
 * presenting the simulator's client certificate (as the API Pix protects callbacks with mTLS), or
 * plain HTTP when the registered URL is http (a deployment that terminates mTLS at its edge). A
 * 2xx acknowledges; anything else is retried with backoff, and a restart resumes where it stopped.
 */
export class Notifier {
  #running = false;
  readonly #agent: Agent;

  constructor(
    private readonly store: Store,
    private readonly options: NotifierOptions,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.#agent = new Agent({
      cert: options.tls.cert,
      key: options.tls.key,
      ca: [...options.tls.ca],
      keepAlive: false,
    });
  }

  due(now = this.clock()): OutboxEntry[] {
    return [...this.store.outbox.values()]
      .filter((entry) => entry.nextAttemptAt <= now)
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.seq - b.seq)
      .slice(0, this.options.batch);
  }

  /** One step: attempts up to `batch` due deliveries; returns how many were acknowledged. */
  async deliverDue(): Promise<number> {
    if (this.#running) return 0;
    this.#running = true;
    try {
      let acknowledged = 0;
      for (const entry of this.due()) {
        if (await this.#attempt(entry)) acknowledged++;
      }
      return acknowledged;
    } finally {
      this.#running = false;
    }
  }

  close(): void {
    this.#agent.destroy();
  }

  async #attempt(entry: OutboxEntry): Promise<boolean> {
    let failure: string;
    try {
      const status = await this.#post(entry.url, entry.body);
      if (status >= 200 && status < 300) {
        this.store.commit([{ t: 'outbox-done', key: entry.key }]);
        this.log.info({ txid: entry.txid, url: entry.url, attempts: entry.attempts + 1 }, 'callback acknowledged');
        return true;
      }
      failure = `HTTP ${status}`;
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    const attempts = entry.attempts + 1;
    const nextAttemptAt = this.clock() + backoff(attempts, this.options);
    this.store.commit([{ t: 'outbox', v: { ...entry, attempts, nextAttemptAt, lastError: failure } }]);
    this.log.warn(
      { txid: entry.txid, url: entry.url, attempts, nextAttemptAt, error: failure },
      'callback not acknowledged',
    );
    return false;
  }

  #post(url: string, body: string): Promise<number> {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(
        target,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          timeout: this.options.timeoutMs,
          ...(target.protocol === 'https:' ? { agent: this.#agent } : {}),
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      request.on('error', reject);
      request.end(body);
    });
  }
}
