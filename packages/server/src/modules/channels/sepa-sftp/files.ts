import type { Db } from '../../../db/db.js';
import { formatAmount } from '../../../money.js';

/** A file sent to the bank, as the operator sees it. */
export interface SentFile {
  readonly channel: string;
  readonly msgId: string;
  readonly name: string;
  readonly transactions: number;
  /** EUR, the sum of the file's payouts. */
  readonly controlSum: string;
  /** `built` (stored, not yet confirmed uploaded), `uploaded`, `acknowledged` (the bank said something of it). */
  readonly state: 'built' | 'uploaded' | 'acknowledged';
  /** The bank's word on the whole file (pain.002 GrpSts), when it said. */
  readonly groupStatus: string | null;
  readonly createdAt: number;
  readonly uploadedAt: number | null;
  readonly acknowledgedAt: number | null;
  readonly attempts: number;
  readonly lastError: string | null;
}

/** A file read from the bank, as the operator sees it. */
export interface ReceivedFile {
  readonly channel: string;
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  /** `pain.002` or `camt.054`; null for a file that did not parse. */
  readonly message: string | null;
  readonly state: 'applied' | 'set_aside';
  readonly reason: string | null;
  readonly receivedAt: number;
}

/**
 * The newest `limit` files sent and received by the sepa-sftp channels (one channel's when
 * `channel` is given), newest first (operator API `GET /admin/v1/channels/files`,
 * `paygate channels files`).
 */
export async function listSepaFiles(
  db: Pick<Db, 'query'>,
  channel: string | undefined,
  limit = 100,
): Promise<{ sent: SentFile[]; received: ReceivedFile[] }> {
  const sent = await db.query<{
    channel: string;
    msg_id: string;
    name: string;
    transactions: number;
    ctrl_sum_minor: bigint;
    state: 'built' | 'uploaded';
    group_status: string | null;
    created_at: Date;
    uploaded_at: Date | null;
    acknowledged_at: Date | null;
    attempts: number;
    last_error: string | null;
  }>(
    `SELECT channel, msg_id, name, transactions, ctrl_sum_minor, state, group_status, created_at, uploaded_at,
            acknowledged_at, attempts, last_error
       FROM sepa_files WHERE ($1::text IS NULL OR channel = $1) ORDER BY id DESC LIMIT $2`,
    [channel ?? null, limit],
  );
  const received = await db.query<{
    channel: string;
    name: string;
    size: bigint;
    sha256: string;
    message: string | null;
    state: 'applied' | 'set_aside';
    reason: string | null;
    received_at: Date;
  }>(
    `SELECT channel, name, size, sha256, message, state, reason, received_at
       FROM sepa_inbox WHERE ($1::text IS NULL OR channel = $1) ORDER BY id DESC LIMIT $2`,
    [channel ?? null, limit],
  );
  return {
    sent: sent.rows.map((row) => ({
      channel: row.channel,
      msgId: row.msg_id,
      name: row.name,
      transactions: row.transactions,
      controlSum: formatAmount(BigInt(row.ctrl_sum_minor), 2),
      state: row.acknowledged_at !== null ? 'acknowledged' : row.state,
      groupStatus: row.group_status,
      createdAt: row.created_at.getTime(),
      uploadedAt: row.uploaded_at?.getTime() ?? null,
      acknowledgedAt: row.acknowledged_at?.getTime() ?? null,
      attempts: row.attempts,
      lastError: row.last_error,
    })),
    received: received.rows.map((row) => ({
      channel: row.channel,
      name: row.name,
      size: Number(row.size),
      sha256: row.sha256,
      message: row.message,
      state: row.state,
      reason: row.reason,
      receivedAt: row.received_at.getTime(),
    })),
  };
}

/**
 * Per channel, the age in seconds of its oldest file uploaded and not yet acknowledged by the
 * bank (no pain.002 about it, no camt.054 about any of its payouts): the gauge
 * `paygate_sepa_oldest_unacknowledged_file_age_seconds`, which an alert rule watches. 0 when
 * there is none.
 */
export async function unacknowledgedFileAges(
  db: Pick<Db, 'query'>,
  now: number,
  channels: readonly string[],
): Promise<{ channel: string; ageSeconds: number }[]> {
  if (channels.length === 0) return [];
  const result = await db.query<{ channel: string; oldest: Date }>(
    `SELECT channel, min(uploaded_at) AS oldest FROM sepa_files
      WHERE state = 'uploaded' AND acknowledged_at IS NULL GROUP BY channel`,
  );
  const oldest = new Map(result.rows.map((row) => [row.channel, row.oldest.getTime()]));
  return channels.map((channel) => {
    const at = oldest.get(channel);
    return { channel, ageSeconds: at === undefined ? 0 : Math.max(0, (now - at) / 1000) };
  });
}
