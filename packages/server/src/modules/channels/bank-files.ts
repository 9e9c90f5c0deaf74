/**
 * The bank files of the file channels (kind sepa-sftp) as the back office reads them: which file
 * a payout travelled in and what the bank's files said of it, the orders of a file (found by its
 * MsgId), and a sent file's exact XML. Reads over the channels module's tables, beside the kind's
 * own folder (sepa-sftp/ writes them; this file only reads).
 * A received file's bytes too (kept RECEIVED_FILES_KEPT_MS, compressed); the unmatched credits
 * and mismatched batch bookings are read by sepa-sftp/files.ts.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Db, Queryable } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { formatAmount } from '../../money.js';

/** The file a payout travelled in, and the bank's word on the file and on the payout. */
export interface PayoutBankStory {
  readonly channel: string;
  readonly msgId: string;
  readonly name: string;
  /** `built`, `uploaded`, `acknowledged` (the bank said something of it). */
  readonly state: 'built' | 'uploaded' | 'acknowledged';
  readonly createdAt: number;
  readonly uploadedAt: number | null;
  /** The bank's word on the whole file (pain.002 GrpSts). */
  readonly groupStatus: string | null;
  readonly acknowledgedAt: number | null;
  readonly transactions: number;
  readonly controlSum: string;
  /** The bank's word on this payout: pain.002 TxSts or a camt booking, its reason code, a return's reference. */
  readonly bankStatus: string | null;
  readonly bankReason: string | null;
  readonly bankStatusAt: number | null;
  readonly returnReference: string | null;
}

export async function payoutBankStory(db: Queryable, orderNo: string): Promise<PayoutBankStory | undefined> {
  const rows = await db.query<{
    channel: string;
    msg_id: string;
    name: string;
    state: 'built' | 'uploaded';
    created_at: Date;
    uploaded_at: Date | null;
    group_status: string | null;
    acknowledged_at: Date | null;
    transactions: number;
    ctrl_sum_minor: bigint;
    bank_status: string | null;
    bank_reason: string | null;
    bank_status_at: Date | null;
    return_ref: string | null;
  }>(
    `SELECT f.channel, f.msg_id, f.name, f.state, f.created_at, f.uploaded_at, f.group_status, f.acknowledged_at,
            f.transactions, f.ctrl_sum_minor, p.bank_status, p.bank_reason, p.bank_status_at, p.return_ref
       FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id WHERE p.order_no = $1`,
    [orderNo],
  );
  const row = rows.rows[0];
  if (!row) return undefined;
  return {
    channel: row.channel,
    msgId: row.msg_id,
    name: row.name,
    state: row.acknowledged_at !== null ? 'acknowledged' : row.state,
    createdAt: row.created_at.getTime(),
    uploadedAt: row.uploaded_at?.getTime() ?? null,
    groupStatus: row.group_status,
    acknowledgedAt: row.acknowledged_at?.getTime() ?? null,
    transactions: row.transactions,
    controlSum: formatAmount(BigInt(row.ctrl_sum_minor), 2),
    bankStatus: row.bank_status,
    bankReason: row.bank_reason,
    bankStatusAt: row.bank_status_at?.getTime() ?? null,
    returnReference: row.return_ref,
  };
}

/** The payouts of the file a MsgId names (a search by MsgId finds them all). */
export async function ordersOfFile(db: Queryable, msgId: string): Promise<string[]> {
  const rows = await db.query<{ order_no: string }>(
    `SELECT p.order_no FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id
      WHERE f.msg_id = $1 ORDER BY p.order_no LIMIT 10000`,
    [msgId],
  );
  return rows.rows.map((r) => r.order_no);
}

/** A sent file's exact bytes (what was uploaded, again and again the same), or undefined. */
export async function sentFileXml(
  db: Pick<Db, 'query'>,
  channel: string,
  msgId: string,
): Promise<{ name: string; bytes: Buffer } | undefined> {
  const rows = await db.query<{ name: string; bytes: Uint8Array }>(
    'SELECT name, bytes FROM sepa_files WHERE channel = $1 AND msg_id = $2',
    [channel, msgId],
  );
  const row = rows.rows[0];
  return row && { name: row.name, bytes: Buffer.from(row.bytes) };
}

const gunzipped = promisify(gunzip);

/** How long a received bank file's bytes are kept (the sweeper clears older ones; the record stays). */
export const RECEIVED_FILES_KEPT_MS = 30 * 86_400_000;

/**
 * A file received from the bank, by its name in the channel's download directory, as it was read:
 * its bytes (undefined for `bytes` once past RECEIVED_FILES_KEPT_MS, or read before they were kept),
 * or undefined when the channel never read such a file.
 */
export async function receivedFileXml(
  db: Pick<Db, 'query'>,
  channel: string,
  name: string,
): Promise<{ name: string; bytes: Buffer | undefined } | undefined> {
  const rows = await db.query<{ name: string; bytes_gzip: Uint8Array | null }>(
    'SELECT name, bytes_gzip FROM sepa_inbox WHERE channel = $1 AND name = $2',
    [channel, name],
  );
  const row = rows.rows[0];
  if (!row) return undefined;
  return { name: row.name, bytes: row.bytes_gzip === null ? undefined : await gunzipped(row.bytes_gzip) };
}

/** Clears the bytes of received bank files older than RECEIVED_FILES_KEPT_MS (the sweeper); answers how many. */
export async function purgeReceivedFiles(db: Queryable, now: number): Promise<number> {
  const purged = await db.query(
    'UPDATE sepa_inbox SET bytes_gzip = NULL WHERE bytes_gzip IS NOT NULL AND received_at < $1',
    [new Date(now - RECEIVED_FILES_KEPT_MS)],
  );
  return purged.rowCount;
}

/** The embedded database only: vacuums the received files' table, whose bytes the purge clears as they age. */
export function vacuumReceivedFiles(db: Db): Promise<Vacuumed[]> {
  return vacuumTables(db, ['sepa_inbox']);
}

/** Files read from the bank and set aside (not parsed, or neither pain.002 nor camt), with why. */
export async function setAsideFiles(db: Queryable, channel: string, limit = 100) {
  const rows = await db.query<{ name: string; size: bigint; sha256: string; reason: string | null; received_at: Date }>(
    `SELECT name, size, sha256, reason, received_at FROM sepa_inbox
      WHERE channel = $1 AND state = 'set_aside' ORDER BY id DESC LIMIT $2`,
    [channel, limit],
  );
  return rows.rows.map((r) => ({
    name: r.name,
    size: Number(r.size),
    sha256: r.sha256,
    reason: r.reason,
    receivedAt: r.received_at.getTime(),
  }));
}
