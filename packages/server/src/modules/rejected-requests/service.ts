import type { RejectedRequest } from '@paygate/wire';
import type { Db } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';

/** How long a rejection is kept (the sweeper purges older ones). */
export const REJECTED_REQUEST_TTL_MS = 7 * 86_400_000;

/** A sandbox authentication failure, as the merchant sees it in the portal (the wire schema). */
export type RejectedRequestView = RejectedRequest;

/** One refused merchant-API request, as the authentication scope reports it. */
export interface Rejection {
  /** The access key the request named, if any; it decides which merchant sees the record. */
  readonly accessKey: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly step: string;
  readonly reason: string;
  readonly signatureBase: string | undefined;
  readonly requestId: string;
}

/**
 * Sandbox integration help: the merchant API's authentication failures with the signature base
 * the platform built, kept a week for the merchant to compare with its own (portal). Only the
 * sandbox records them; elsewhere the table stays empty.
 */
export class RejectedRequests {
  constructor(
    private readonly db: Db,
    /** The merchant an access key belongs to (any environment), or undefined. */
    private readonly merchantIdOf: (accessKey: string) => Promise<bigint | undefined>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records one rejection; the path is cut to 512 characters. */
  async record(rejection: Rejection): Promise<void> {
    const merchantId = rejection.accessKey === undefined ? undefined : await this.merchantIdOf(rejection.accessKey);
    await this.db.query(
      `INSERT INTO rejected_requests (merchant_id, access_key, method, path, step, reason, signature_base, request_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        merchantId ?? null,
        rejection.accessKey ?? null,
        rejection.method,
        rejection.path.slice(0, 512),
        rejection.step,
        rejection.reason,
        rejection.signatureBase ?? null,
        rejection.requestId,
        new Date(this.now()),
      ],
    );
  }

  /** The merchant's newest rejections first, at most `limit`. */
  async list(merchantId: bigint, limit = 100): Promise<RejectedRequestView[]> {
    const result = await this.db.query<{
      request_id: string;
      method: string;
      path: string;
      step: string;
      reason: string;
      signature_base: string | null;
      created_at: Date;
    }>(
      `SELECT request_id, method, path, step, reason, signature_base, created_at FROM rejected_requests
        WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [merchantId, limit],
    );
    return result.rows.map((r) => ({
      requestId: r.request_id,
      method: r.method,
      path: r.path,
      step: r.step,
      reason: r.reason,
      signatureBase: r.signature_base,
      createdAt: r.created_at.getTime(),
    }));
  }

  /** Deletes rejections older than the retention (the sweeper); returns how many. */
  async purge(): Promise<number> {
    const result = await this.db.query('DELETE FROM rejected_requests WHERE created_at < $1', [
      new Date(this.now() - REJECTED_REQUEST_TTL_MS),
    ]);
    return result.rowCount ?? 0;
  }

  /** The embedded database only: vacuums rejected_requests (purged by the sweeper) when it has dead rows (see vacuumTable). */
  vacuum(): Promise<Vacuumed[]> {
    return vacuumTables(this.db, ['rejected_requests']);
  }
}
