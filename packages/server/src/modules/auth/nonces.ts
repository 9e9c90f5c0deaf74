import { type Db, prepared } from '../../db/db.js';
import { vacuumTable, type Vacuumed } from '../../db/vacuum.js';

/**
 * Records a batch of nonces in one statement; the primary key (merchant_id, nonce) decides which
 * are new, and RETURNING names them. Arrays travel as text so both drivers bind them alike.
 */
const CONSUME_NONCES = prepared(
  'nonces_consume',
  `INSERT INTO request_nonces (merchant_id, nonce, expires_at)
   SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[])
   ON CONFLICT DO NOTHING
   RETURNING merchant_id::text AS merchant_id, nonce`,
);

/** How long past its signature's expiry a nonce is kept before it is purged. */
export const KEEP_AFTER_EXPIRY_MS = 60_000;

/** At most this many nonces per statement. */
const MAX_BATCH = 256;

interface Waiting {
  readonly key: string;
  readonly merchantId: bigint;
  readonly nonce: string;
  readonly expiresAt: Date;
  readonly resolve: (fresh: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One-time request nonces, decided by a unique insert in the shared database, so that every
 * instance agrees on the first use of a nonce.
 *
 * Every authenticated request consumes one, so the nonces that arrive in the same turn of the
 * event loop go to the database together: one statement and one commit for all of them instead
 * of one each. Each nonce is still decided by the primary key alone; within a batch the first
 * request with a nonce is the one that may win it, any other is a replay.
 */
export class Nonces {
  private waiting: Waiting[] = [];

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the nonce; `true` when it was new, `false` when this merchant used it before. */
  consume(merchantId: bigint, nonce: string, expiresUnixSeconds: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const normalized = nonce.toLowerCase();
      this.waiting.push({
        key: `${merchantId}:${normalized}`,
        merchantId,
        nonce: normalized,
        expiresAt: new Date(expiresUnixSeconds * 1000),
        resolve,
        reject,
      });
      if (this.waiting.length === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting.splice(0, MAX_BATCH);
    if (this.waiting.length > 0) setImmediate(() => void this.flush());
    const first = new Map<string, Waiting>();
    for (const entry of batch) {
      if (first.has(entry.key)) entry.resolve(false);
      else first.set(entry.key, entry);
    }
    const entries = [...first.values()];
    try {
      const inserted = await this.db.query<{ merchant_id: string; nonce: string }>(CONSUME_NONCES, [
        entries.map((e) => e.merchantId.toString()),
        entries.map((e) => e.nonce),
        entries.map((e) => e.expiresAt.toISOString()),
      ]);
      const fresh = new Set(inserted.rows.map((row) => `${row.merchant_id}:${row.nonce}`));
      for (const entry of entries) entry.resolve(fresh.has(entry.key));
    } catch (error) {
      for (const entry of entries) entry.reject(error);
    }
  }

  /** Rows in the nonce store (metrics; bounded by the request rate times the signature window). */
  async count(): Promise<number> {
    const result = await this.db.query<{ n: bigint }>('SELECT count(*)::bigint AS n FROM request_nonces');
    return Number(result.rows[0]?.n ?? 0);
  }

  /**
   * The embedded database only: vacuums request_nonces when the purge left dead rows (see
   * vacuumTable). Without it the table's file grows by a signature window's worth of rows every
   * window, since space freed by the purge is never reused.
   */
  vacuum(): Promise<Vacuumed | undefined> {
    return vacuumTable(this.db, { table: 'request_nonces' });
  }

  /** Deletes nonces whose signatures can no longer verify; returns how many. */
  async purge(): Promise<number> {
    const result = await this.db.query('DELETE FROM request_nonces WHERE expires_at < $1', [
      new Date(this.now() - KEEP_AFTER_EXPIRY_MS),
    ]);
    return result.rowCount;
  }
}
