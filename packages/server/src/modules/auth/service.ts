import { type Db, prepared } from '../../db/db.js';
import { perTurnLoader } from '../../db/per-turn.js';
import { type NonceRecording, RequestNonce } from '../../db/request-nonce.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';

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

/**
 * One nonce, recorded as the first statement of a write's transaction; RETURNING answers whether it
 * was new. The primary key decides across instances, as for the batches.
 */
const RECORD_NONCE = prepared(
  'nonce_record_one',
  `INSERT INTO request_nonces (merchant_id, nonce, expires_at) VALUES ($1, $2, $3)
   ON CONFLICT DO NOTHING RETURNING nonce`,
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * RECORD_NONCE as literal SQL (see NonceRecording.literal). Only checked values are written into it:
 * the merchant's id (a bigint), the nonce (a lowercase UUID, as the signature's parameters allow)
 * and the expiry (whole seconds).
 */
function recordNonceLiteral(use: RequestNonce): string {
  if (!UUID.test(use.nonce)) throw new Error('a nonce to record is a lowercase UUID');
  const seconds = use.expiresAt.getTime() / 1000;
  if (!Number.isInteger(seconds)) throw new Error('a nonce expires at a whole second');
  return `INSERT INTO request_nonces (merchant_id, nonce, expires_at)
    VALUES (${BigInt(use.merchantId).toString()}, '${use.nonce}', to_timestamp(${seconds}))
    ON CONFLICT DO NOTHING`;
}

/**
 * A common table expression `fresh` that records the nonces of a batch given as three arrays from
 * parameter `$first` on (merchant ids, nonces, expiries), returning `merchant_id` and `nonce` of
 * those that were new: for a business statement that inserts its rows only for the requests whose
 * nonce it returned (the payment creates' batch), one statement and one commit for both.
 */
export function freshNoncesCte(first: number): string {
  return `fresh AS (
     INSERT INTO request_nonces (merchant_id, nonce, expires_at)
     SELECT * FROM unnest($${first}::bigint[], $${first + 1}::text[], $${first + 2}::timestamptz[])
     ON CONFLICT DO NOTHING
     RETURNING merchant_id, nonce)`;
}

/** How long past its signature's expiry a nonce is kept before it is purged. */
export const KEEP_AFTER_EXPIRY_MS = 60_000;
/** Nonces one purge statement deletes at most. */
export const PURGE_BATCH = 5_000;

/**
 * Up to $2 spent nonces, oldest first by the expiry index, deleted by row address (a TID scan; a
 * join on the key would scan the whole table for every batch). Rows another purge holds are
 * skipped; nonces are never updated, so a locked row keeps its address.
 */
const PURGE_NONCES = `DELETE FROM request_nonces WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM request_nonces WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED))`;

/** One request's use of a nonce (lowercased), kept until its signature has expired. */
interface NonceUse {
  readonly merchantId: bigint;
  readonly nonce: string;
  readonly expiresAt: Date;
}

/** What the primary key decides on, as RETURNING names it. */
const useKey = (merchantId: bigint | string, nonce: string) => `${merchantId}:${nonce}`;

/**
 * One-time request nonces, decided by a unique insert in the shared database, so that every
 * instance agrees on the first use of a nonce.
 *
 * Every authenticated request consumes one, so the nonces that arrive in the same turn of the
 * event loop go to the database together (db/per-turn.ts): one statement and one commit for all
 * of them instead of one each. Each nonce is still decided by the primary key alone; within a
 * batch the first request with a nonce is the one that may win it, any other is a replay.
 */
export class Nonces {
  private readonly uses = perTurnLoader<NonceUse, boolean>((batch) => this.record(batch));

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    /** Nonces one purge statement deletes at most (tests lower it). */
    private readonly purgeBatch = PURGE_BATCH,
  ) {}

  /** Records the nonce; `true` when it was new, `false` when this merchant used it before. */
  consume(merchantId: bigint, nonce: string, expiresUnixSeconds: number): Promise<boolean> {
    return this.uses.load({
      merchantId,
      nonce: nonce.toLowerCase(),
      expiresAt: new Date(expiresUnixSeconds * 1000),
    });
  }

  /**
   * The nonce of a request whose signature verified, to be recorded by the request's own write
   * (see RequestNonce), or alone by `consume`'s batch when the route settles it.
   */
  pending(merchantId: bigint, nonce: string, expiresUnixSeconds: number): RequestNonce {
    return new RequestNonce(merchantId, nonce.toLowerCase(), new Date(expiresUnixSeconds * 1000), this.recording);
  }

  /** How the database layer records a request's nonce (see NonceRecording). */
  private readonly recording: NonceRecording = {
    alone: (use) => this.uses.load({ merchantId: use.merchantId, nonce: use.nonce, expiresAt: use.expiresAt }),
    statement: RECORD_NONCE,
    params: (use) => [use.merchantId, use.nonce, use.expiresAt],
    literal: recordNonceLiteral,
  };

  /**
   * Inserts the first use of each nonce of a batch with one statement; each use is answered with
   * whether it won its nonce. A later use of a nonce within the batch is a replay (`false`) even
   * when the statement fails; the statement's error is the answer of the uses it carried.
   */
  private async record(batch: readonly NonceUse[]): Promise<(boolean | Error)[]> {
    const seen = new Set<string>();
    const first = batch.map(({ merchantId, nonce }) => {
      const key = useKey(merchantId, nonce);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    const uses = batch.filter((_, i) => first[i]);
    try {
      const inserted = await this.db.query<{ merchant_id: string; nonce: string }>(CONSUME_NONCES, [
        uses.map((use) => use.merchantId.toString()),
        uses.map((use) => use.nonce),
        uses.map((use) => use.expiresAt.toISOString()),
      ]);
      const fresh = new Set(inserted.rows.map((row) => useKey(row.merchant_id, row.nonce)));
      return batch.map(({ merchantId, nonce }, i) => first[i] === true && fresh.has(useKey(merchantId, nonce)));
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      return first.map((isFirst) => (isFirst ? failure : false));
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
  vacuum(): Promise<Vacuumed[]> {
    return vacuumTables(this.db, ['request_nonces']);
  }

  /**
   * Deletes nonces whose signatures can no longer verify, at most `PURGE_BATCH` per statement;
   * returns how many. A backlog (a window's worth after the sweeper was down, hundreds of
   * thousands of rows at a busy rate) is so taken in short statements with the requests served
   * between them, rather than in one that holds the embedded database's only session for seconds
   * (or one long transaction on PostgreSQL). Rows another sweeper is deleting are skipped.
   */
  async purge(): Promise<number> {
    const horizon = new Date(this.now() - KEEP_AFTER_EXPIRY_MS);
    let purged = 0;
    for (;;) {
      const result = await this.db.query(PURGE_NONCES, [horizon, this.purgeBatch]);
      purged += result.rowCount;
      if (result.rowCount < this.purgeBatch) return purged;
    }
  }
}
