import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { sign } from './auth.js';
import type { OutboxEntry } from './model.js';
import type { Store } from './store.js';

export interface NotifierOptions {
  readonly secret: string;
  /** Deliveries per step at most (one step runs them one after another, oldest due first). */
  readonly batch: number;
  /** First retry delay; doubled per failed attempt up to `retryMaxMs`. */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly timeoutMs: number;
}

/** The delay before attempt `attempts + 1` after `attempts` failures. */
export function backoff(attempts: number, options: Pick<NotifierOptions, 'retryBaseMs' | 'retryMaxMs'>): number {
  return Math.min(options.retryMaxMs, options.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
}

/**
 * Delivers the persisted outbox to the platform: each entry's stored body bytes, freshly signed
 * per attempt (new timestamp and nonce), POSTed until a 2xx acknowledges it. A failure (non-2xx,
 * network error, timeout) is recorded with the next attempt time, so a restart resumes exactly
 * where the process stopped.
 */
export class Notifier {
  #running = false;

  constructor(
    private readonly store: Store,
    private readonly options: NotifierOptions,
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The entries due now, in delivery order. */
  due(now = this.clock()): OutboxEntry[] {
    return [...this.store.outbox.values()]
      .filter((entry) => !entry.held && entry.nextAttemptAt <= now)
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

  async #attempt(entry: OutboxEntry): Promise<boolean> {
    const url = new URL(entry.url);
    const path = `${url.pathname}${url.search}`;
    const headers = sign(
      this.options.secret,
      { method: 'POST', path, body: entry.body },
      { now: this.clock(), nonce: randomUUID() },
    );
    let failure: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: entry.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.status >= 200 && response.status < 300) {
        this.store.commit([{ t: 'outbox-done', key: entry.key }]);
        this.log.info(
          { event: entry.eventId, url: entry.url, attempts: entry.attempts + 1 },
          'notification acknowledged',
        );
        return true;
      }
      failure = `HTTP ${response.status}`;
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    // Only a held entry is ever changed by anyone else (its release), so the copy we read is still current.
    const attempts = entry.attempts + 1;
    const nextAttemptAt = this.clock() + backoff(attempts, this.options);
    this.store.commit([{ t: 'outbox', v: { ...entry, attempts, nextAttemptAt, lastError: failure } }]);
    this.log.warn(
      { event: entry.eventId, url: entry.url, attempts, nextAttemptAt, error: failure },
      'notification not acknowledged',
    );
    return false;
  }
}
