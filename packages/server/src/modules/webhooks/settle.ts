import type { Db } from '../../db/db.js';

/** One attempt's record and its event's new state, as the settle statement reads them. */
export interface Settlement {
  /** events.id, as text (JSON has no 64-bit integers). */
  readonly id: string;
  /** The worker that must still hold the lease. */
  readonly worker: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly next_attempt_at: Date | null;
  readonly status_code: number | null;
  readonly error: string | null;
  /** 1 when the claim sent nothing (it is not counted as an attempt), else 0. */
  readonly uncount: number;
  readonly event_id: string;
  readonly attempt: number;
  readonly started_at: Date;
  readonly latency_ms: number;
  readonly excerpt: string | null;
  /** The attempt's signature nonce; null when nothing was sent (no attempt is recorded). */
  readonly nonce: string | null;
}

/** Settlements written by one statement at most. */
const MAX_BATCH = 256;
/** How long a settlement waits for those of attempts still running, at most. */
const LINGER_MS = 20;

/**
 * Every attempt of the batch recorded, and each event's new state written where its worker still
 * holds the lease, in one statement (so each attempt and its event's state commit together);
 * answers the ids written. An attempt is recorded even when its lease ran out: it was sent.
 */
const SETTLE_SQL = `WITH input AS (
    SELECT * FROM json_to_recordset($1::json) AS i(
      id bigint, worker text, status text, next_attempt_at timestamptz, status_code integer, error text,
      uncount integer, event_id text, attempt integer, started_at timestamptz, latency_ms integer,
      excerpt text, nonce text)),
  attempt AS (
    INSERT INTO delivery_attempts (event_id, attempt, worker, started_at, latency_ms, status_code, response_excerpt, error, nonce)
    SELECT event_id, attempt, worker, started_at, latency_ms, status_code, excerpt, error, nonce
      FROM input WHERE nonce IS NOT NULL
    ON CONFLICT (event_id, attempt) DO NOTHING)
  UPDATE events e SET delivery_status = i.status, next_attempt_at = i.next_attempt_at,
         lease_owner = NULL, lease_expires_at = NULL,
         delivered_at = CASE WHEN i.status = 'delivered' THEN $2::timestamptz ELSE e.delivered_at END,
         last_status_code = i.status_code, last_error = i.error,
         attempt_count = e.attempt_count - i.uncount
    FROM input i
   WHERE e.id = i.id AND e.lease_owner = i.worker
  RETURNING e.id`;

/**
 * Text PostgreSQL can store: a receiver's answer may hold NUL bytes, which a text column refuses
 * (and which would fail the whole batch); they become U+FFFD.
 */
export function storable(text: string | undefined): string | null {
  return text === undefined ? null : text.replaceAll('\u0000', '\uFFFD');
}

/** An attempt's place in a {@link SettleBatcher}: settled once, or cancelled (it failed). */
export interface SettleSlot {
  /** Resolves true once written, false when the worker no longer held the lease. */
  settle(settlement: Settlement): Promise<boolean>;
  /** Frees the slot without a settlement (the attempt threw); nothing once settled. */
  cancel(): void;
}

interface Queued {
  /** performance.now() when it was queued. */
  readonly at: number;
  readonly settlement: Settlement;
  readonly done: (held: boolean) => void;
  readonly failed: (error: unknown) => void;
}

/**
 * Writes settlements in batches, one statement (and one commit) for many attempts. Attempts take
 * a slot when they start (`expect`), so the batcher knows whether more are coming: while none is
 * running, a settlement goes out at once (a lone attempt waits for nothing); while others run, it
 * waits up to LINGER_MS for theirs (or a full batch). Settlements that arrive while a statement
 * runs go out together in the next one.
 */
export class SettleBatcher {
  private queue: Queued[] = [];
  /** Attempts started and not yet settled or cancelled. */
  private running = 0;
  private writing = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
  ) {}

  /** A slot for an attempt about to start. */
  expect(): SettleSlot {
    this.running++;
    let open = true;
    const close = () => {
      if (!open) return false;
      open = false;
      this.running--;
      return true;
    };
    return {
      settle: (settlement) =>
        new Promise((done, failed) => {
          if (!close()) throw new Error('settled twice');
          this.queue.push({ at: performance.now(), settlement, done, failed });
          this.schedule();
        }),
      cancel: () => {
        // The batch may have been waiting for this attempt.
        if (close()) this.schedule();
      },
    };
  }

  private schedule(): void {
    if (this.writing || this.queue.length === 0) return;
    const now = this.running === 0 || this.queue.length >= MAX_BATCH;
    if (now) {
      clearTimeout(this.timer);
      this.timer = undefined;
      // After the I/O callbacks of this turn of the event loop, so that attempts answered together
      // go out together even where a statement does not yield while it runs (PGlite).
      this.writing = true;
      setImmediate(() => void this.write());
    } else {
      const waited = performance.now() - (this.queue[0] as Queued).at;
      this.timer ??= setTimeout(
        () => {
          this.timer = undefined;
          this.writing = true;
          void this.write();
        },
        Math.max(0, LINGER_MS - waited),
      );
    }
  }

  private async write(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    try {
      const written = await this.db.query<{ id: bigint }>(SETTLE_SQL, [
        JSON.stringify(batch.map((entry) => entry.settlement)),
        new Date(this.now()),
      ]);
      const held = new Set(written.rows.map((row) => String(row.id)));
      for (const entry of batch) entry.done(held.has(entry.settlement.id));
    } catch (error) {
      for (const entry of batch) entry.failed(error);
    } finally {
      this.writing = false;
      this.schedule();
    }
  }
}
