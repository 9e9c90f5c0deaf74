import type { Db } from '../../db/db.js';

/** How long past its signature's expiry a nonce is kept before it is purged. */
const KEEP_AFTER_EXPIRY_MS = 60_000;

/**
 * One-time request nonces, decided by a unique insert in the shared database, so that every
 * instance agrees on the first use of a nonce.
 */
export class Nonces {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the nonce; `true` when it was new, `false` when this merchant used it before. */
  async consume(merchantId: bigint, nonce: string, expiresUnixSeconds: number): Promise<boolean> {
    const result = await this.db.query(
      `INSERT INTO request_nonces (merchant_id, nonce, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [merchantId, nonce.toLowerCase(), new Date(expiresUnixSeconds * 1000)],
    );
    return result.rows.length === 1;
  }

  /** Deletes nonces whose signatures can no longer verify; returns how many. */
  async purge(): Promise<number> {
    const result = await this.db.query('DELETE FROM request_nonces WHERE expires_at < $1', [
      new Date(this.now() - KEEP_AFTER_EXPIRY_MS),
    ]);
    return result.rowCount;
  }
}
