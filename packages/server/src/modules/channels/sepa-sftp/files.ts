import type { Db } from '../../../db/db.js';
import { formatAmount } from '../../../money.js';

/** A status the bank's pain.002 gave of a file (GrpSts), its block (PmtInfSts) or a payout (TxSts). */
export interface BankStatus {
  readonly at: number;
  readonly level: 'file' | 'block' | 'transaction';
  readonly status: string;
  readonly reason: string | null;
}

/** The statuses kept of files (and, with `orderNo`, of that payout), oldest first, by file id. */
export async function statusesOf(
  db: Pick<Db, 'query'>,
  fileIds: readonly bigint[],
  orderNo?: string,
): Promise<Map<bigint, BankStatus[]>> {
  const byFile = new Map<bigint, BankStatus[]>();
  if (fileIds.length === 0) return byFile;
  const result = await db.query<{
    file_id: bigint;
    level: BankStatus['level'];
    status: string;
    reason: string | null;
    reported_at: Date;
  }>(
    `SELECT file_id, level, status, reason, reported_at FROM sepa_statuses
      WHERE file_id = ANY($1::bigint[]) AND (level <> 'transaction' OR order_no = $2)
      ORDER BY id`,
    [fileIds.map(String), orderNo ?? null],
  );
  for (const row of result.rows) {
    const id = BigInt(row.file_id);
    const list = byFile.get(id) ?? [];
    list.push({ at: row.reported_at.getTime(), level: row.level, status: row.status, reason: row.reason });
    byFile.set(id, list);
  }
  return byFile;
}

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
  /** `PmtInf/PmtInfId`: the block a batch booking or a block status names. */
  readonly pmtInfId: string;
  /** SEPA Instant transfers (`LclInstrm/Cd` `INST`). */
  readonly instant: boolean;
  /** Every status the bank gave of the file and of its block, oldest first (intermediate ones included). */
  readonly statuses: readonly BankStatus[];
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
  /** `pain.002`, `camt.054` or `camt.053`; null for a file that did not parse. */
  readonly message: string | null;
  readonly state: 'applied' | 'set_aside';
  readonly reason: string | null;
  readonly receivedAt: number;
}

/** A batch booking read (one DBIT entry for a whole file), as the operator sees it. */
export interface BatchBooking {
  readonly channel: string;
  readonly msgId: string | null;
  readonly pmtInfId: string | null;
  /** `NbOfTxs` as the bank wrote it. */
  readonly transactions: number | null;
  /** EUR, the entry's amount. */
  readonly amount: string;
  /** `applied` (every payout of the file settled) or `mismatch` (nothing changed: see `reason`). */
  readonly state: 'applied' | 'mismatch';
  readonly reason: string | null;
  /** The bank file it came in. */
  readonly file: string;
  readonly receivedAt: number;
}

/**
 * The newest `limit` files sent and received by the sepa-sftp channels (one channel's when
 * `channel` is given), newest first, with the batch bookings read (operator API
 * `GET /admin/v1/channels/files`, `paygate channels files`).
 */
export async function listSepaFiles(
  db: Pick<Db, 'query'>,
  channel: string | undefined,
  limit = 100,
): Promise<{ sent: SentFile[]; received: ReceivedFile[]; batchBookings: BatchBooking[] }> {
  const sent = await db.query<{
    id: bigint;
    pmt_inf_id: string | null;
    instant: boolean;
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
    `SELECT id, pmt_inf_id, instant, channel, msg_id, name, transactions, ctrl_sum_minor, state, group_status, created_at,
            uploaded_at, acknowledged_at, attempts, last_error
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
  const bookings = await db.query<{
    channel: string;
    msg_id: string | null;
    pmt_inf_id: string | null;
    transactions: number | null;
    amount_minor: bigint;
    state: 'applied' | 'mismatch';
    reason: string | null;
    file: string;
    received_at: Date;
  }>(
    `SELECT b.channel, b.msg_id, b.pmt_inf_id, b.transactions, b.amount_minor, b.state, b.reason, i.name AS file, b.received_at
       FROM sepa_batch_bookings b JOIN sepa_inbox i ON i.id = b.inbox_id
      WHERE ($1::text IS NULL OR b.channel = $1) ORDER BY b.id DESC LIMIT $2`,
    [channel ?? null, limit],
  );
  const statuses = await statusesOf(
    db,
    sent.rows.map((row) => BigInt(row.id)),
  );
  return {
    batchBookings: bookings.rows.map((row) => ({
      channel: row.channel,
      msgId: row.msg_id,
      pmtInfId: row.pmt_inf_id,
      transactions: row.transactions,
      amount: formatAmount(BigInt(row.amount_minor), 2),
      state: row.state,
      reason: row.reason,
      file: row.file,
      receivedAt: row.received_at.getTime(),
    })),
    sent: sent.rows.map((row) => ({
      channel: row.channel,
      msgId: row.msg_id,
      name: row.name,
      transactions: row.transactions,
      controlSum: formatAmount(BigInt(row.ctrl_sum_minor), 2),
      state: row.acknowledged_at !== null ? 'acknowledged' : row.state,
      groupStatus: row.group_status,
      pmtInfId: row.pmt_inf_id ?? row.msg_id,
      instant: row.instant,
      statuses: statuses.get(BigInt(row.id)) ?? [],
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

/** A credit transfer received on a sepa-sftp channel's account, as the operator sees it. */
export interface ReceivedCredit {
  readonly id: string;
  readonly channel: string;
  /** `matched`: it settled `orderNo`; `unmatched`: no order changed (see `reason`). */
  readonly state: 'matched' | 'unmatched';
  /** `no_reference`, `unknown_reference`, `other_amount`, `payment_final` or `expired`; null when matched. */
  readonly reason: string | null;
  /** The payment it settled, or (other amount, final, expired) the one its reference named. */
  readonly orderNo: string | null;
  readonly amount: string;
  readonly currency: string;
  /** The creditor reference found (structured, or within the text), if any. */
  readonly reference: string | null;
  /** The remittance information as the bank gave it (references and text lines). */
  readonly remittance: string | null;
  readonly debtorName: string | null;
  readonly debtorIban: string | null;
  /** The bank's reference of the booking (`AcctSvcrRef`). */
  readonly accountServicerRef: string | null;
  readonly bookingDate: string | null;
  /** The channel's account it was booked to (the file's `Acct/Id/IBAN`); null for credits read before it was kept. */
  readonly accountIban: string | null;
  /** The bank file that brought it first. */
  readonly file: string;
  readonly receivedAt: number;
}

/**
 * The newest `limit` credit transfers received by the sepa-sftp channels (one channel's when
 * `channel` is given; only the unmatched ones unless `all`), newest first (operator API
 * `GET /admin/v1/channels/credits`, `paygate channels credits`): what the back office resolves.
 */
export async function listSepaCredits(
  db: Pick<Db, 'query'>,
  channel: string | undefined,
  options: { readonly all?: boolean; readonly limit?: number } = {},
): Promise<ReceivedCredit[]> {
  const result = await db.query<{
    id: bigint;
    channel: string;
    state: 'matched' | 'unmatched';
    reason: string | null;
    order_no: string | null;
    amount_minor: bigint;
    currency: string;
    reference: string | null;
    remittance: string | null;
    debtor_name: string | null;
    debtor_iban: string | null;
    account_servicer_ref: string | null;
    booking_date: Date | string | null;
    account_iban: string | null;
    file: string;
    received_at: Date;
  }>(
    `SELECT c.id, c.channel, c.state, c.reason, c.order_no, c.amount_minor, c.currency, c.reference, c.remittance,
            c.debtor_name, c.debtor_iban, c.account_servicer_ref, c.booking_date::text AS booking_date, c.account_iban,
            i.name AS file, c.received_at
       FROM sepa_credits c JOIN sepa_inbox i ON i.id = c.inbox_id
      WHERE ($1::text IS NULL OR c.channel = $1) AND ($2 OR c.state = 'unmatched')
      ORDER BY c.id DESC LIMIT $3`,
    [channel ?? null, options.all === true, options.limit ?? 100],
  );
  return result.rows.map((row) => ({
    id: String(row.id),
    channel: row.channel,
    state: row.state,
    reason: row.reason,
    orderNo: row.order_no,
    amount: formatAmount(BigInt(row.amount_minor), 2),
    currency: row.currency,
    reference: row.reference,
    remittance: row.remittance,
    debtorName: row.debtor_name,
    debtorIban: row.debtor_iban,
    accountServicerRef: row.account_servicer_ref,
    bookingDate: row.booking_date === null ? null : String(row.booking_date).slice(0, 10),
    accountIban: row.account_iban,
    file: row.file,
    receivedAt: row.received_at.getTime(),
  }));
}

/** A batch booking that did not match the file it names, with what was expected and what was booked. */
export interface MismatchedBatch {
  readonly id: string;
  readonly channel: string;
  /** The file and block the booking named (`Btch/MsgId`, `Btch/PmtInfId`). */
  readonly msgId: string | null;
  readonly pmtInfId: string | null;
  /** Why it was not applied (nothing changed). */
  readonly reason: string | null;
  /** What the bank booked: its `NbOfTxs` and the entry's amount (EUR). */
  readonly booked: { readonly transactions: number | null; readonly total: string };
  /** The file sent that it was compared with (by MsgId, else PmtInfId): its payouts and control sum; null when it named none. */
  readonly expected: {
    readonly msgId: string;
    readonly pmtInfId: string;
    readonly transactions: number;
    readonly total: string;
  } | null;
  /** The bank file it came in. */
  readonly file: string;
  readonly receivedAt: number;
}

/**
 * The newest `limit` batch bookings that did not match their file, across the sepa-sftp channels
 * (one channel's when `channel` is given), newest first: what the back office resolves.
 */
export async function listMismatchedBatches(
  db: Pick<Db, 'query'>,
  channel: string | undefined,
  limit = 100,
): Promise<MismatchedBatch[]> {
  const result = await db.query<{
    id: bigint;
    channel: string;
    msg_id: string | null;
    pmt_inf_id: string | null;
    reason: string | null;
    transactions: number | null;
    amount_minor: bigint;
    file: string;
    received_at: Date;
    file_msg_id: string | null;
    file_pmt_inf_id: string | null;
    file_transactions: number | null;
    file_ctrl_sum_minor: bigint | null;
  }>(
    `SELECT b.id, b.channel, b.msg_id, b.pmt_inf_id, b.reason, b.transactions, b.amount_minor, i.name AS file,
            b.received_at, f.msg_id AS file_msg_id, f.pmt_inf_id AS file_pmt_inf_id, f.transactions AS file_transactions,
            f.ctrl_sum_minor AS file_ctrl_sum_minor
       FROM sepa_batch_bookings b JOIN sepa_inbox i ON i.id = b.inbox_id
       LEFT JOIN sepa_files f ON f.id = COALESCE(b.file_id,
         (SELECT id FROM sepa_files g WHERE g.channel = b.channel AND g.msg_id = b.msg_id))
      WHERE b.state = 'mismatch' AND ($1::text IS NULL OR b.channel = $1)
      ORDER BY b.id DESC LIMIT $2`,
    [channel ?? null, limit],
  );
  return result.rows.map((row) => ({
    id: String(row.id),
    channel: row.channel,
    msgId: row.msg_id,
    pmtInfId: row.pmt_inf_id,
    reason: row.reason,
    booked: { transactions: row.transactions, total: formatAmount(BigInt(row.amount_minor), 2) },
    expected:
      row.file_msg_id === null
        ? null
        : {
            msgId: row.file_msg_id,
            pmtInfId: row.file_pmt_inf_id ?? row.file_msg_id,
            transactions: Number(row.file_transactions),
            total: formatAmount(BigInt(row.file_ctrl_sum_minor ?? 0n), 2),
          },
    file: row.file,
    receivedAt: row.received_at.getTime(),
  }));
}

/** How many credits received are unmatched and how many batch bookings mismatched, per channel. */
export async function exceptionsOf(
  db: Pick<Db, 'query'>,
  channel: string,
): Promise<{ unmatchedCredits: number; mismatchedBatches: number }> {
  const result = await db.query<{ credits: bigint; batches: bigint }>(
    `SELECT (SELECT count(*) FROM sepa_credits WHERE channel = $1 AND state = 'unmatched') AS credits,
            (SELECT count(*) FROM sepa_batch_bookings WHERE channel = $1 AND state = 'mismatch') AS batches`,
    [channel],
  );
  const row = result.rows[0];
  return { unmatchedCredits: Number(row?.credits ?? 0), mismatchedBatches: Number(row?.batches ?? 0) };
}
