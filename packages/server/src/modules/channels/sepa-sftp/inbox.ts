import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import {
  type BankFile,
  type CamtEntry,
  type CamtTransaction,
  findCreditorReferences,
  normalizeCreditorReference,
  type Pain002,
  readBankFile,
} from '@paygate/iso20022';
import type { Queryable } from '../../../db/db.js';
import { formatAmount, parseAmount } from '../../../money.js';
import { applyUpdate, type ApplyOutcome, type ChannelServices } from '../apply.js';
import type { ChannelStatus } from '../connector.js';
import type { FileStepOptions } from './outbox.js';
import { type SepaSftpConnector, transferOrderOf } from './sepa-sftp.js';

const gzipped = promisify(gzip);

/** The largest bank file read (a day's camt.053 of a very busy account is a few MB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** What one inbox step did. */
export interface InboxResult {
  readonly applied: readonly string[];
  readonly setAside: readonly { readonly name: string; readonly reason: string }[];
}

/** A payout of one of the channel's files, as the bank's files are matched against. */
interface Member {
  order_no: string;
  merchant_id: bigint;
  amount_minor: bigint;
  msg_id: string;
}

/** A file that is not applied: recorded as set aside with this reason, nothing in it applied. */
class SetAside extends Error {}

/** Statuses of a transaction that settle it: anything else is an intermediate word, kept only. */
const FINAL_TRANSACTION = new Set(['RJCT', 'ACSC', 'ACCC']);

/** Why a credit received matched no payment (decisions.md: kept for the operator, no order changed). */
export type UnmatchedReason = 'no_reference' | 'unknown_reference' | 'other_amount' | 'payment_final' | 'expired';

/** What applying a file found, counted once its transaction committed (metrics, log). */
export interface FileTally {
  readonly outcomes: Partial<Record<ApplyOutcome, number>>;
  /** Every bank status read: `level/status` → how many. */
  readonly statuses: Record<string, number>;
  readonly batches: { applied: number; mismatch: number };
  readonly credits: { matched: number; unmatched: number };
}

/**
 * Reads the channel's download directory (one step, every `pollEvery`): lists it, fetches each
 * file not recorded yet (oldest first), and records and applies each in ONE transaction per file
 * (its name, size and SHA-256 in `sepa_inbox`, unique per channel and name, and every order change
 * it brings through the services, the path every channel's news takes): a file is applied once, as
 * a whole or not at all, whatever the instances. A file that does not parse, or is neither a
 * pain.002, a camt.054 nor a camt.053, or reports on a file this channel never sent, is set aside
 * (recorded with its reason, a log line, `paygate_sepa_files_set_aside_total`), nothing in it
 * applied; the files after it still are. Nothing in the directory is ever deleted or renamed.
 */
export async function readInboxOnce(
  services: ChannelServices,
  connector: SepaSftpConnector,
  options: FileStepOptions,
): Promise<InboxResult> {
  const dir = connector.settings.downloadDir;
  const listed = await connector.sftp.use((ops) => ops.list(dir));
  if (listed.length === 0) return { applied: [], setAside: [] };
  const known = await services.db.query<{ name: string }>(
    'SELECT name FROM sepa_inbox WHERE channel = $1 AND name = ANY($2::text[])',
    [connector.name, listed.map((file) => file.name)],
  );
  const seen = new Set(known.rows.map((row) => row.name));
  const fresh = listed
    .filter((file) => !seen.has(file.name) && !file.name.startsWith('.'))
    .sort((a, b) => a.mtime - b.mtime || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const applied: string[] = [];
  const setAside: { name: string; reason: string }[] = [];
  for (const file of fresh) {
    const bytes = await connector.sftp.use((ops) => ops.read(`${dir}/${file.name}`, MAX_FILE_BYTES));
    if (bytes.length !== file.size) {
      // Still being written (or rewritten) by the bank: read again at the next poll, whole.
      options.log.info(
        { channel: connector.name, file: file.name, listed: file.size, read: bytes.length },
        'sepa bank file changed while read; read again at the next poll',
      );
      continue;
    }
    const outcome = await applyFile(services, connector, file.name, bytes, options);
    if (outcome.kind === 'applied') {
      applied.push(file.name);
      options.log.info(
        { channel: connector.name, file: file.name, message: outcome.message, ...outcome.tally.outcomes },
        'sepa bank file applied',
      );
    } else if (outcome.kind === 'set_aside') {
      setAside.push({ name: file.name, reason: outcome.reason });
      options.log.warn(
        { channel: connector.name, file: file.name, reason: outcome.reason },
        'sepa bank file set aside: nothing in it applied',
      );
    }
  }
  return { applied, setAside };
}

type FileOutcome =
  | { readonly kind: 'applied'; readonly message: BankFile['kind']; readonly tally: FileTally }
  | { readonly kind: 'set_aside'; readonly reason: string }
  | { readonly kind: 'recorded_elsewhere' };

/** Counts what a committed file did in the metrics. */
function count(connector: SepaSftpConnector, options: FileStepOptions, tally: FileTally): void {
  const metrics = options.metrics;
  if (!metrics) return;
  metrics.sepaFile(connector.name, 'applied');
  for (const [key, times] of Object.entries(tally.statuses)) {
    const [level, status] = key.split('/') as [string, string];
    metrics.sepaStatus(connector.name, level, status, times);
  }
  for (const outcome of ['applied', 'mismatch'] as const) {
    if (tally.batches[outcome] > 0) metrics.sepaBatchBooking(connector.name, outcome, tally.batches[outcome]);
  }
  for (const outcome of ['matched', 'unmatched'] as const) {
    if (tally.credits[outcome] > 0) metrics.sepaCredit(connector.name, outcome, tally.credits[outcome]);
  }
}

/** Records one bank file and applies it, in one transaction. */
export async function applyFile(
  services: ChannelServices,
  connector: SepaSftpConnector,
  name: string,
  bytes: Buffer,
  options: FileStepOptions,
): Promise<FileOutcome> {
  // The bytes are kept as received (compressed in libuv's threads, while the file is read here).
  const compressed = gzipped(bytes);
  compressed.catch(() => {});
  const parsed = readBankFile(bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const record = async (tx: Queryable, state: 'applied' | 'set_aside', message: string | null, reason: string | null) =>
    tx.query<{ id: bigint }>(
      `INSERT INTO sepa_inbox (channel, name, size, sha256, message, state, reason, received_at, msg_id, bytes_gzip)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (channel, name) DO NOTHING RETURNING id`,
      [
        connector.name,
        name,
        bytes.length,
        sha256,
        message,
        state,
        reason,
        new Date(services.now()),
        parsed.ok ? parsed.file.msgId.slice(0, 100) : null,
        await compressed,
      ],
    );
  const setAside = async (reason: string): Promise<FileOutcome> => {
    const inserted = await record(
      services.db,
      'set_aside',
      parsed.ok ? parsed.file.kind : null,
      reason.slice(0, 1_000),
    );
    if (inserted.rows.length === 0) return { kind: 'recorded_elsewhere' };
    options.metrics?.sepaFile(connector.name, 'set_aside');
    return { kind: 'set_aside', reason };
  };
  if (!parsed.ok) return setAside(parsed.reason);
  try {
    const outcome = await services.db.transaction(async (tx): Promise<FileOutcome> => {
      const inserted = await record(tx, 'applied', parsed.file.kind, null);
      const inboxId = inserted.rows[0]?.id;
      if (inboxId === undefined) return { kind: 'recorded_elsewhere' };
      const apply = new FileApplier(services, connector, tx, options, inboxId);
      await apply.file(parsed.file);
      await apply.flush();
      return { kind: 'applied', message: parsed.file.kind, tally: apply.tally };
    });
    if (outcome.kind === 'applied') count(connector, options, outcome.tally);
    return outcome;
  } catch (error) {
    if (error instanceof SetAside) return setAside(error.message);
    throw error;
  }
}

/** A status to keep in `sepa_statuses` (written once per file by `flush`). */
interface StatusRow {
  readonly fileId: bigint;
  readonly level: 'file' | 'block' | 'transaction';
  readonly orderNo: string | null;
  readonly status: string;
  readonly reason: string | null;
}

/** A credit transfer read from a file, before it is remembered and matched. */
interface ReceivedCreditRow {
  readonly key: string;
  readonly amount: string | undefined;
  readonly minor: bigint | undefined;
  readonly currency: string;
  readonly accountServicerRef: string | undefined;
  /** The creditor references it carries: structured ones first, then any within the text. */
  readonly candidates: readonly string[];
  readonly remittance: string | null;
  readonly debtorName: string | undefined;
  readonly debtorIban: string | undefined;
  readonly bookingDate: string | undefined;
  readonly accountIban: string | undefined;
}

/** The key a booked entry (or one transaction of it) is remembered by: the bank's reference, or a digest. */
function entryKey(entry: CamtEntry, transaction: CamtTransaction | undefined, index: number): string {
  const reference =
    transaction?.accountServicerRef ?? (entry.transactions.length <= 1 ? entry.accountServicerRef : undefined);
  if (reference !== undefined) return `ref:${reference}`;
  // No reference from the bank: the same entry in a notification and a statement reads into the
  // same record, so its digest is the same too.
  const { accountIban: _iban, ...rest } = entry;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify([rest, index]))
    .digest('hex')}`;
}

/** Applies one parsed bank file inside its transaction. */
class FileApplier {
  /** The bank's word on each payout, written once per file (`flush`). */
  private readonly said = new Map<string, { status: string; reason: string | null }>();
  /** The files the bank said something of. */
  private readonly acknowledged = new Set<string>();
  /**
   * SUCCEEDED and FAILED moves gathered to be applied together (`settle`): thousands of payouts
   * of one file in a few statements. The first word on a payout wins, as it would one by one.
   */
  private readonly pending = new Map<string, { member: Member; status: 'SUCCEEDED' | 'FAILED' }>();
  private readonly statuses: StatusRow[] = [];
  /** The credit transfers a file brought, in its order, applied together at its end (`applyCredits`). */
  private readonly received: ReceivedCreditRow[] = [];
  readonly tally: FileTally = {
    outcomes: {},
    statuses: {},
    batches: { applied: 0, mismatch: 0 },
    credits: { matched: 0, unmatched: 0 },
  };

  constructor(
    private readonly services: ChannelServices,
    private readonly connector: SepaSftpConnector,
    private readonly tx: Queryable,
    private readonly options: FileStepOptions,
    private readonly inboxId: bigint,
  ) {}

  private get log() {
    return this.options.log;
  }

  file(file: BankFile): Promise<void> {
    return file.kind === 'pain.002' ? this.pain002(file) : this.camt(file.msgId, file.kind, file.entries);
  }

  /** Keeps a status the bank gave (all of a file's and a block's; a transaction's short of a final one), and counts it. */
  private keep(row: StatusRow, final: boolean): void {
    const key = `${row.level}/${row.status}`;
    this.tally.statuses[key] = (this.tally.statuses[key] ?? 0) + 1;
    if (row.level !== 'transaction' || !final) this.statuses.push(row);
  }

  /**
   * A status report on one of the channel's files (OrgnlMsgId): each transaction's TxSts by
   * OrgnlEndToEndId — RJCT → FAILED with its reason kept, ACSC or ACCC → SUCCEEDED, others kept
   * only — then each block's (OrgnlPmtInfAndSts/PmtInfSts, for the file's PmtInfId) and the
   * group's: RJCT → every payout of the block (the file) without a status of its own in the
   * report FAILED, ACSC → SUCCEEDED, any other status kept and shown with the file.
   */
  private async pain002(report: Pain002): Promise<void> {
    const file = await this.tx.query<{ id: bigint; pmt_inf_id: string | null }>(
      'SELECT id, pmt_inf_id FROM sepa_files WHERE channel = $1 AND msg_id = $2',
      [this.connector.name, report.originalMsgId],
    );
    const fileId = file.rows[0]?.id;
    if (fileId === undefined) throw new SetAside(`OrgnlMsgId ${report.originalMsgId} is not a file of this channel`);
    const paymentInformationId = file.rows[0]?.pmt_inf_id ?? report.originalMsgId;
    if (report.groupStatus === 'RJCT' && report.groupReason === 'DU01') {
      // The bank refuses a repeat of a MsgId it has: the upload after a crash of a file that had
      // arrived. The file it has stands; this refusal is of the copy only.
      this.log.warn(
        { channel: this.connector.name, msgId: report.originalMsgId },
        'sepa bank refused a repeated upload of a file (DU01); the file it took stands',
      );
      return;
    }
    const members = await this.tx.query<Member>(
      `SELECT p.order_no, p.merchant_id, p.amount_minor, f.msg_id
         FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id WHERE p.file_id = $1`,
      [fileId],
    );
    const byOrder = new Map(members.rows.map((member) => [member.order_no, member]));
    const ownStatus = new Set<string>();
    const eventId = `pain002:${report.msgId}`;
    for (const transaction of report.transactions) {
      const member = byOrder.get(transaction.originalEndToEndId);
      if (!member) {
        this.log.warn(
          { channel: this.connector.name, msgId: report.originalMsgId, endToEndId: transaction.originalEndToEndId },
          'sepa status of a transaction that is not in the file; ignored',
        );
        continue;
      }
      ownStatus.add(member.order_no);
      const final = FINAL_TRANSACTION.has(transaction.status);
      this.keep(
        {
          fileId,
          level: 'transaction',
          orderNo: member.order_no,
          status: transaction.status,
          reason: transaction.reason ?? null,
        },
        final,
      );
      this.bankSaid(member, transaction.status, transaction.reason);
      if (transaction.status === 'RJCT') await this.apply(member, 'FAILED', eventId);
      else if (final) await this.apply(member, 'SUCCEEDED', eventId);
    }
    /** RJCT or ACSC of the block or the group: every payout without a status of its own. */
    const settleAll = async (status: string, reason: string | undefined) => {
      for (const member of members.rows) {
        if (ownStatus.has(member.order_no)) continue;
        this.bankSaid(member, status, reason);
        await this.apply(member, status === 'RJCT' ? 'FAILED' : 'SUCCEEDED', eventId);
      }
    };
    for (const block of report.paymentInformation ?? []) {
      if (block.status === undefined) continue;
      if (block.originalPaymentInformationId !== paymentInformationId) {
        this.log.warn(
          { channel: this.connector.name, msgId: report.originalMsgId, pmtInfId: block.originalPaymentInformationId },
          'sepa status of a payment information block that is not in the file; ignored',
        );
        continue;
      }
      this.keep({ fileId, level: 'block', orderNo: null, status: block.status, reason: block.reason ?? null }, true);
      if (block.status === 'RJCT' || block.status === 'ACSC') await settleAll(block.status, block.reason);
    }
    if (report.groupStatus !== undefined) {
      this.keep(
        { fileId, level: 'file', orderNo: null, status: report.groupStatus, reason: report.groupReason ?? null },
        true,
      );
      if (report.groupStatus === 'RJCT' || report.groupStatus === 'ACSC') {
        await settleAll(report.groupStatus, report.groupReason);
      }
      await this.tx.query('UPDATE sepa_files SET group_status = $2 WHERE id = $1', [fileId, report.groupStatus]);
    }
    this.acknowledged.add(report.originalMsgId);
  }

  /**
   * The booked entries of a camt.054 notification or a camt.053 statement, by the same rules
   * (an entry seen in both changes nothing the second time): a DBIT by EndToEndId → SUCCEEDED; a
   * DBIT booking a batch (`NtryDtls/Btch`, no transactions) → every payout of that file, when its
   * count and total are the file's; a CRDT PMNT/ICDT/RRTN (a returned credit transfer) → REFUNDED
   * with refundNo = AcctSvcrRef, when it returns the full amount (another amount is logged for
   * the operator and changes nothing); a CRDT PMNT/RCDT/… (a credit transfer received) → the
   * PENDING payment by bank transfer its reference names, SUCCEEDED, or an unmatched credit.
   */
  private async camt(msgId: string, kind: 'camt.054' | 'camt.053', entries: readonly CamtEntry[]): Promise<void> {
    const eventId = `${kind.replace('.', '')}:${msgId}`;
    // The channel's payouts the file names, read at once (a day's statement may name thousands).
    const named = entries.flatMap((entry) =>
      entry.status === 'BOOK'
        ? entry.transactions.flatMap((t) => (t.endToEndId === undefined ? [] : [t.endToEndId]))
        : [],
    );
    const found = await this.tx.query<Member>(
      `SELECT p.order_no, p.merchant_id, p.amount_minor, f.msg_id
         FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id
        WHERE p.order_no = ANY($1::text[]) AND f.channel = $2`,
      [[...new Set(named)], this.connector.name],
    );
    const members = new Map(found.rows.map((member) => [member.order_no, member]));
    for (const entry of entries) {
      if (entry.status !== 'BOOK') continue;
      const code = entry.bankTransactionCode;
      if (entry.creditDebit === 'CRDT' && code?.domain === 'PMNT' && code.family === 'RCDT') {
        this.credits(entry);
        continue;
      }
      const isReturn =
        entry.creditDebit === 'CRDT' && code?.domain === 'PMNT' && code.family === 'ICDT' && code.subFamily === 'RRTN';
      if (entry.creditDebit === 'CRDT' && !isReturn) continue;
      if (
        !isReturn &&
        (entry.batches ?? []).length > 0 &&
        entry.transactions.every((t) => t.endToEndId === undefined)
      ) {
        await this.batchBooking(entry, eventId);
        continue;
      }
      for (const transaction of entry.transactions) {
        if (transaction.endToEndId === undefined) continue;
        const member = members.get(transaction.endToEndId);
        if (!member) continue;
        if (!isReturn) {
          this.bankSaid(member, 'BOOK', undefined);
          await this.apply(member, 'SUCCEEDED', eventId);
          continue;
        }
        const amount = transaction.amount ?? (entry.transactions.length === 1 ? entry.amount : undefined);
        const minor = amount === undefined ? undefined : parseAmount(amount, 2);
        const reference = transaction.accountServicerRef;
        if (minor !== member.amount_minor || reference === undefined) {
          this.log.warn(
            {
              channel: this.connector.name,
              orderNo: member.order_no,
              amount,
              reference,
              reason: transaction.returnReason,
            },
            minor !== member.amount_minor
              ? 'sepa return of another amount than the payout: not a full return, nothing changed; see to it'
              : 'sepa return without AcctSvcrRef: nothing changed; see to it',
          );
          continue;
        }
        const refundNo = refundNoOf(reference);
        this.acknowledged.add(member.msg_id);
        await this.tx.query(
          `UPDATE sepa_file_payouts SET return_ref = COALESCE(return_ref, $2), bank_reason = $3, bank_status_at = $4
            WHERE order_no = $1`,
          [member.order_no, refundNo, transaction.returnReason ?? null, new Date(this.services.now())],
        );
        await this.apply(member, 'REFUNDED', eventId, refundNo);
      }
    }
    await this.applyCredits();
  }

  /**
   * A booked DBIT of a whole file (`NtryDtls/Btch`): each batch must name a file of the channel
   * (`MsgId`, and its `PmtInfId` when given) with that file's count (`NbOfTxs`) and total
   * (`TtlAmt`, else the entry's amount). Then every payout of those files not final yet
   * SUCCEEDED (one webhook each). Otherwise the booking is logged, kept as a mismatch for the
   * operator and counted, and nothing changes. An entry seen before (a statement repeating a
   * notification) changes nothing again.
   */
  private async batchBooking(entry: CamtEntry, eventId: string): Promise<void> {
    const batches = entry.batches ?? [];
    const key = entryKey(entry, undefined, 0);
    const first = batches[0];
    const entryMinor = parseAmount(entry.amount, 2) ?? 0n;
    const remembered = await this.tx.query<{ id: bigint }>(
      `INSERT INTO sepa_batch_bookings (channel, entry_key, msg_id, pmt_inf_id, transactions, amount_minor, state, inbox_id, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'mismatch', $7, $8) ON CONFLICT (channel, entry_key) DO NOTHING RETURNING id`,
      [
        this.connector.name,
        key,
        first?.msgId ?? null,
        first?.paymentInformationId ?? null,
        first?.numberOfTransactions ?? null,
        entryMinor,
        this.inboxId,
        new Date(this.services.now()),
      ],
    );
    const bookingId = remembered.rows[0]?.id;
    if (bookingId === undefined) return; // seen before
    const files: { id: bigint; msg_id: string }[] = [];
    /** The file the booking is compared with for the operator (the first batch's that names one). */
    let compared: bigint | undefined;
    let reason: string | undefined;
    let sum = 0n;
    for (const batch of batches) {
      const file = (
        await this.tx.query<{
          id: bigint;
          msg_id: string;
          pmt_inf_id: string | null;
          transactions: number;
          ctrl_sum_minor: bigint;
        }>(
          `SELECT id, msg_id, pmt_inf_id, transactions, ctrl_sum_minor FROM sepa_files
            WHERE channel = $1 AND (msg_id = $2 OR ($2 IS NULL AND pmt_inf_id = $3))`,
          [this.connector.name, batch.msgId ?? null, batch.paymentInformationId ?? null],
        )
      ).rows[0];
      const total =
        batch.totalAmount !== undefined
          ? parseAmount(batch.totalAmount, 2)
          : batches.length === 1
            ? entryMinor
            : undefined;
      compared ??= file?.id;
      if (!file)
        reason = `the batch names no file of this channel (MsgId ${batch.msgId ?? '-'}, PmtInfId ${batch.paymentInformationId ?? '-'})`;
      else if (
        batch.paymentInformationId !== undefined &&
        batch.paymentInformationId !== (file.pmt_inf_id ?? file.msg_id)
      ) {
        reason = `PmtInfId ${batch.paymentInformationId} is not the block of file ${file.msg_id}`;
      } else if (batch.numberOfTransactions === undefined) reason = `no NbOfTxs for file ${file.msg_id}`;
      else if (batch.numberOfTransactions !== file.transactions) {
        reason = `NbOfTxs ${batch.numberOfTransactions} is not the ${file.transactions} payouts of file ${file.msg_id}`;
      } else if (total === undefined || total !== BigInt(file.ctrl_sum_minor)) {
        reason = `total ${batch.totalAmount ?? entry.amount} is not ${formatAmount(BigInt(file.ctrl_sum_minor), 2)}, the control sum of file ${file.msg_id}`;
      }
      if (reason !== undefined) break;
      if (file) files.push(file);
      sum += total ?? 0n;
    }
    if (reason === undefined && sum !== entryMinor)
      reason = `the entry's amount ${entry.amount} is not the batches' total`;
    if (reason !== undefined || files.length === 0) {
      reason ??= 'no batch';
      await this.tx.query(`UPDATE sepa_batch_bookings SET reason = $2, file_id = $3 WHERE id = $1`, [
        bookingId,
        reason.slice(0, 1_000),
        compared ?? null,
      ]);
      this.tally.batches.mismatch++;
      this.log.warn(
        { channel: this.connector.name, msgId: first?.msgId, amount: entry.amount, reason },
        'sepa batch booking does not match the file sent: nothing changed; see to it',
      );
      return;
    }
    await this.tx.query(`UPDATE sepa_batch_bookings SET state = 'applied', file_id = $2 WHERE id = $1`, [
      bookingId,
      files[0]?.id,
    ]);
    this.tally.batches.applied++;
    const members = await this.tx.query<Member>(
      `SELECT p.order_no, p.merchant_id, p.amount_minor, f.msg_id
         FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id WHERE p.file_id = ANY($1::bigint[])`,
      [files.map((file) => file.id.toString())],
    );
    for (const member of members.rows) {
      this.bankSaid(member, 'BOOK', undefined);
      await this.apply(member, 'SUCCEEDED', eventId);
    }
  }

  /**
   * The credit transfers a booked CRDT entry (PMNT/RCDT/…) brings, one per transaction (or the
   * entry itself without any): each remembered once per channel by its AcctSvcrRef (a credit in a
   * notification and again in the statement changes nothing the second time), matched by the
   * creditor reference it carries (structured `CdtrRefInf/Ref`, or within `Ustrd`, without
   * spaces and case) to a PENDING payment by bank transfer of this channel with that amount:
   * SUCCEEDED with the credit's amount, AcctSvcrRef and payer name. Anything else is an
   * unmatched credit, kept with its reason, logged and counted.
   */
  private credits(entry: CamtEntry): void {
    const transactions: readonly (CamtTransaction | undefined)[] =
      entry.transactions.length > 0 ? entry.transactions : [undefined];
    for (const [index, transaction] of transactions.entries()) {
      const amount = transaction?.amount ?? (transactions.length === 1 ? entry.amount : undefined);
      const structured = (transaction?.creditorReferences ?? []).flatMap((ref) => {
        const normalized = normalizeCreditorReference(ref);
        return normalized === undefined ? [] : [normalized];
      });
      const unstructured = transaction?.unstructuredRemittance ?? [];
      this.received.push({
        key: entryKey(entry, transaction, index),
        amount,
        minor: amount === undefined ? undefined : parseAmount(amount, 2),
        currency: transaction?.currency ?? entry.currency,
        accountServicerRef:
          transaction?.accountServicerRef ?? (transactions.length === 1 ? entry.accountServicerRef : undefined),
        candidates: [...structured, ...findCreditorReferences(unstructured.join(' '))],
        remittance: [...(transaction?.creditorReferences ?? []), ...unstructured].join(' / ').slice(0, 500) || null,
        debtorName: transaction?.debtor?.name,
        debtorIban: transaction?.debtor?.iban,
        bookingDate: entry.bookingDate,
        accountIban: entry.accountIban,
      });
    }
  }

  /**
   * The credits a file brought, applied together in its order: remembered in one statement (those
   * seen before, in this file or another, go no further), the payments they name settled in one
   * call (`settleBankCredits`: one lock, one UPDATE, the ledger credits and events together), and
   * each one's outcome written in one statement.
   */
  private async applyCredits(): Promise<void> {
    if (this.received.length === 0) return;
    const received = this.received.splice(0);
    const now = new Date(this.services.now());
    const remembered = await this.tx.query<{ id: bigint; entry_key: string }>(
      `INSERT INTO sepa_credits (channel, entry_key, account_servicer_ref, amount_minor, currency, remittance,
                                 debtor_name, debtor_iban, booking_date, state, inbox_id, received_at, account_iban)
       SELECT $1, t.entry_key, t.account_servicer_ref, t.amount_minor, t.currency, t.remittance, t.debtor_name,
              t.debtor_iban, t.booking_date::date, 'unmatched', $10, $11, t.account_iban
         FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                     $12::text[]) WITH ORDINALITY
              AS t(entry_key, account_servicer_ref, amount_minor, currency, remittance, debtor_name, debtor_iban,
                   booking_date, account_iban, n)
        ORDER BY t.n
       ON CONFLICT (channel, entry_key) DO NOTHING RETURNING id, entry_key`,
      [
        this.connector.name,
        received.map((c) => c.key),
        received.map((c) => c.accountServicerRef ?? null),
        received.map((c) => (c.minor ?? 0n).toString()),
        received.map((c) => c.currency),
        received.map((c) => c.remittance),
        received.map((c) => c.debtorName ?? null),
        received.map((c) => c.debtorIban ?? null),
        received.map((c) => c.bookingDate ?? null),
        this.inboxId,
        now,
        received.map((c) => c.accountIban ?? null),
      ],
    );
    const ids = new Map(remembered.rows.map((row) => [row.entry_key, row.id]));
    // Seen before (in this file or another): nothing more. The first of a key in the file is the one kept.
    const fresh = received.flatMap((credit) => {
      const id = ids.get(credit.key);
      if (id === undefined) return [];
      ids.delete(credit.key);
      // The references this platform issued: RF, check digits and a payment's order number digits.
      const ours = credit.candidates.flatMap((reference) => {
        const orderNo = transferOrderOf(reference);
        return orderNo === undefined ? [] : [{ reference, orderNo }];
      });
      const reason: UnmatchedReason | undefined =
        credit.candidates.length === 0
          ? 'no_reference'
          : ours.length === 0
            ? 'unknown_reference'
            : credit.minor === undefined
              ? 'other_amount'
              : undefined;
      return [{ credit, id, ours, reason: reason as UnmatchedReason | undefined, named: ours[0] }];
    });
    const settling = fresh.filter((item) => item.reason === undefined);
    const settled = await this.services.payments.settleBankCredits(
      this.tx,
      this.connector.name,
      settling.map(({ credit, ours }) => ({
        orderNos: ours.map((ref) => ref.orderNo),
        amountMinor: credit.minor ?? 0n,
        currency: credit.currency,
        channelTradeNo: credit.accountServicerRef,
        payerName: credit.debtorName,
      })),
    );
    for (const [i, item] of settling.entries()) {
      const outcome = settled[i];
      if (!outcome) continue;
      if (outcome.outcome !== 'matched') item.reason = outcome.outcome;
      item.named = item.ours.find((ref) => ref.orderNo === outcome.orderNo) ?? item.named;
      if (outcome.outcome === 'matched') this.tally.outcomes.applied = (this.tally.outcomes.applied ?? 0) + 1;
    }
    await this.tx.query(
      `UPDATE sepa_credits c SET state = t.state, reason = t.reason, reference = t.reference, order_no = t.order_no
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, state, reason, reference, order_no)
        WHERE c.id = t.id`,
      [
        fresh.map((item) => item.id.toString()),
        fresh.map((item) => (item.reason === undefined ? 'matched' : 'unmatched')),
        fresh.map((item) => item.reason ?? null),
        fresh.map((item) => item.named?.reference ?? item.credit.candidates[0] ?? null),
        fresh.map((item) =>
          item.reason === 'unknown_reference' || item.reason === 'no_reference' ? null : (item.named?.orderNo ?? null),
        ),
      ],
    );
    for (const { credit, reason, named } of fresh) {
      if (reason === undefined) {
        this.tally.credits.matched++;
        continue;
      }
      this.tally.credits.unmatched++;
      this.log.warn(
        {
          channel: this.connector.name,
          reason,
          amount: credit.amount,
          reference: named?.reference ?? credit.candidates[0],
          orderNo: named?.orderNo,
          accountServicerRef: credit.accountServicerRef,
        },
        'sepa credit received matches no open payment: kept as an unmatched credit; see to it',
      );
    }
  }

  /**
   * Keeps the bank's status and reason of a payout (shown in the portal and to the operator); its
   * file counts as acknowledged from the bank's first word about any of its payouts. Gathered
   * here and written once per file by `flush`.
   */
  private bankSaid(member: Member, status: string, reason: string | undefined): void {
    const before = this.said.get(member.order_no);
    this.said.set(member.order_no, { status, reason: reason ?? before?.reason ?? null });
    this.acknowledged.add(member.msg_id);
  }

  /** Applies the gathered SUCCEEDED and FAILED moves through the payouts service, together. */
  private async settle(): Promise<void> {
    if (this.pending.size === 0) return;
    const moves = [...this.pending.values()];
    this.pending.clear();
    const outcomes = await this.services.payouts.applyChannelReports(
      this.tx,
      this.connector.name,
      moves.map(({ member, status }) => ({ orderNo: member.order_no, status, channelTradeNo: member.msg_id })),
    );
    for (const outcome of outcomes.values()) this.tally.outcomes[outcome] = (this.tally.outcomes[outcome] ?? 0) + 1;
  }

  /** Writes what the bank said of each payout, its statuses, and that it said something of their files. */
  async flush(): Promise<void> {
    await this.settle();
    const now = new Date(this.services.now());
    if (this.said.size > 0) {
      const entries = [...this.said];
      await this.tx.query(
        `UPDATE sepa_file_payouts p SET bank_status = t.status, bank_reason = COALESCE(t.reason, p.bank_reason),
                bank_status_at = $4
           FROM unnest($1::text[], $2::text[], $3::text[]) AS t(order_no, status, reason)
          WHERE p.order_no = t.order_no`,
        [entries.map(([orderNo]) => orderNo), entries.map(([, s]) => s.status), entries.map(([, s]) => s.reason), now],
      );
    }
    if (this.statuses.length > 0) {
      const rows = this.statuses;
      await this.tx.query(
        `INSERT INTO sepa_statuses (file_id, level, order_no, status, reason, inbox_id, reported_at)
         SELECT file_id, level, order_no, status, reason, $6, $7
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(file_id, level, order_no, status, reason)`,
        [
          rows.map((row) => row.fileId.toString()),
          rows.map((row) => row.level),
          rows.map((row) => row.orderNo),
          rows.map((row) => row.status),
          rows.map((row) => row.reason),
          this.inboxId,
          now,
        ],
      );
    }
    if (this.acknowledged.size > 0) {
      // The bank answering on a file is proof that it has the file: one still 'built' was renamed
      // into place by an instance that died before recording it (or whose mark was lost). It is
      // marked uploaded here, so that it is not sent again once its lease runs out: the bank would
      // take the copy as a repeat at best (DU01 at worst), and an operator would see a file
      // waiting to be uploaded that the bank has long answered.
      const marked = await this.tx.query<{ msg_id: string; unrecorded: boolean }>(
        `UPDATE sepa_files f
            SET acknowledged_at = COALESCE(f.acknowledged_at, $2), state = 'uploaded',
                uploaded_at = COALESCE(f.uploaded_at, $2),
                lease_until = NULL, last_error = NULL
           FROM (SELECT id, state FROM sepa_files
                  WHERE msg_id = ANY($1::text[]) AND (acknowledged_at IS NULL OR state = 'built') FOR UPDATE) AS was
          WHERE f.id = was.id
          RETURNING f.msg_id, was.state = 'built' AS unrecorded`,
        [[...this.acknowledged], now],
      );
      for (const row of marked.rows) {
        if (!row.unrecorded) continue;
        this.log.info(
          { channel: this.connector.name, msgId: row.msg_id },
          'sepa file answered by the bank before its upload was recorded: marked uploaded, not sent again',
        );
      }
    }
  }

  private async apply(member: Member, status: ChannelStatus, eventId: string, refundNo?: string): Promise<void> {
    if (status === 'SUCCEEDED' || status === 'FAILED') {
      if (!this.pending.has(member.order_no)) this.pending.set(member.order_no, { member, status });
      return;
    }
    // A return settles the payout first (through applyUpdate): what was gathered goes before it.
    await this.settle();
    const result = await applyUpdate(
      this.services,
      this.connector.name,
      {
        kind: 'payout',
        reference: member.order_no,
        eventId,
        status,
        channelTradeNo: member.msg_id,
        refundNo,
      },
      { tx: this.tx, order: { merchantId: member.merchant_id, channel: this.connector.name } },
    );
    this.tally.outcomes[result.outcome] = (this.tally.outcomes[result.outcome] ?? 0) + 1;
  }
}

/**
 * A return's refundNo from the bank's AcctSvcrRef: kept as it is when it fits the platform's
 * channel references (letters, digits and `._:-`, at most 64), else a stable digest of it.
 */
export function refundNoOf(reference: string): string {
  if (/^[A-Za-z0-9._:-]{1,64}$/.test(reference)) return reference;
  return `RTRN-${createHash('sha256').update(reference).digest('hex').slice(0, 32)}`;
}
