import { type Camt054, readBankFile } from '@paygate/iso20022';
import type { Queryable } from '../../db/db.js';
import { formatAmount, parseAmount } from '../../money.js';
import { scaleOf } from '../../catalog.js';
import { paymentBook, paymentsByChannelTradeNo } from '../payments/service.js';
import type { ChannelReceipt } from '../channels/connector.js';
import { failedRegistrations } from '../channels/exchanges.js';
import { payoutBook } from '../payouts/service.js';

/**
 * Reconciliation of a channel's daily settlement file against our books (issue 13, item 6). A
 * module of its own, above the payments and payouts modules whose books it reads: they import the
 * channels module's connectors, so the channels module cannot read them back.
 * The file (the simulator's format): header `type,id,reference,status,currency,amount,paid_amount,fee,updated_at`,
 * one line per charge, transfer or return whose final state the channel reached that day (UTC).
 */
export const SETTLEMENT_HEADER = 'type,id,reference,status,currency,amount,paid_amount,fee,updated_at';

export interface SettlementLine {
  type: 'charge' | 'transfer' | 'return';
  id: string;
  reference: string;
  status: string;
  currency: string;
  amount: string;
  paidAmount: string;
}

export type MismatchKind = 'missing_in_books' | 'missing_in_file' | 'amount' | 'status';

export interface Mismatch {
  kind: MismatchKind;
  type: 'charge' | 'transfer' | 'return';
  reference: string;
  ours?: string;
  theirs?: string;
}

/**
 * A charge the channel made for a create that answered CHANNEL_UNAVAILABLE (the order removed, the
 * merchant told to retry), which the channel then let expire, withdrew or declined: no money moved,
 * and no one had its payer code. Listed, not a mismatch. Had it been paid, it would be one
 * (`missing_in_books`).
 */
export interface AbandonedCharge {
  reference: string;
  theirs: string;
}

export interface ReconcileReport {
  channel: string;
  date: string;
  fileLines: number;
  matched: number;
  mismatches: Mismatch[];
  abandoned: AbandonedCharge[];
}

/** A charge's channel statuses in which no money moved. */
const UNPAID_CHARGE = new Set(['expired', 'canceled', 'declined']);

/** Parses the settlement CSV; a malformed file throws an Error naming the line. */
export function parseSettlement(text: string): SettlementLine[] {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines[0]?.trim() !== SETTLEMENT_HEADER) throw new Error(`the first line must be the header ${SETTLEMENT_HEADER}`);
  return lines.slice(1).map((line, i) => {
    const cells = line.split(',');
    const [type, id, reference, status, currency, amount, paidAmount] = cells as string[];
    if (cells.length !== 9 || (type !== 'charge' && type !== 'transfer' && type !== 'return') || !reference) {
      throw new Error(`line ${i + 2} is not a settlement line: ${line}`);
    }
    return {
      type,
      id: id ?? '',
      reference,
      status: status ?? '',
      currency: currency ?? '',
      amount: amount ?? '',
      paidAmount: paidAmount ?? '',
    };
  });
}

/**
 * A bank's camt.054 (kind sepa-sftp) as settlement lines: each booked (`BOOK`) entry's
 * transactions by their EndToEndId (the payout's orderNo) — a `DBIT` is the transfer `sent`, a
 * `CRDT` with bank transaction code PMNT/ICDT/RRTN its return; the transaction's amount (the
 * entry's when it holds one transaction). Other entries (the account's other movements, pending
 * ones) are not the channel's.
 */
export function camt054Lines(notification: Camt054): SettlementLine[] {
  return notification.entries.flatMap((entry) => {
    if (entry.status !== 'BOOK') return [];
    const code = entry.bankTransactionCode;
    const isReturn =
      entry.creditDebit === 'CRDT' && code?.domain === 'PMNT' && code.family === 'ICDT' && code.subFamily === 'RRTN';
    if (entry.creditDebit === 'CRDT' && !isReturn) return [];
    return entry.transactions.flatMap((transaction): SettlementLine[] =>
      transaction.endToEndId === undefined
        ? []
        : [
            {
              type: isReturn ? 'return' : 'transfer',
              id: transaction.accountServicerRef ?? '',
              reference: transaction.endToEndId,
              status: isReturn ? 'returned' : 'sent',
              currency: transaction.currency ?? entry.currency,
              amount: transaction.amount ?? (entry.transactions.length === 1 ? entry.amount : ''),
              paidAmount: '',
            },
          ],
    );
  });
}

/** The platform statuses a settlement line's channel status stands for. */
function expectedStatuses(line: SettlementLine): readonly string[] {
  if (line.type === 'return') return ['REFUNDED'];
  if (line.type === 'charge') {
    // A charge withdrawn at the platform's request: the merchant canceled the order, or it expired.
    const charge: Record<string, readonly string[]> = {
      paid: ['SUCCEEDED'],
      declined: ['FAILED'],
      expired: ['EXPIRED'],
      canceled: ['CANCELED', 'EXPIRED'],
    };
    return charge[line.status] ?? [line.status];
  }
  // A payout that reached SUCCEEDED and was later returned still matches its day's "sent" line.
  const transfer: Record<string, readonly string[]> = {
    sent: ['SUCCEEDED', 'REFUNDED'],
    returned: ['SUCCEEDED', 'REFUNDED'],
    rejected: ['FAILED'],
    canceled: ['FAILED'],
  };
  return transfer[line.status] ?? [line.status];
}

function sameStatus(line: SettlementLine, ours: string): boolean {
  return expectedStatuses(line).includes(ours);
}

/**
 * Compares the file with our books for `channel` on `date` (YYYY-MM-DD, UTC): each line's order
 * is looked up (missing in books, status, amount); every order of that channel final that day
 * (payments SUCCEEDED/FAILED/EXPIRED/CANCELED, payouts SUCCEEDED/FAILED, returns by their refund time)
 * must have its line (missing in file).
 */
export async function reconcile(
  db: Queryable,
  channel: string,
  date: string,
  lines: readonly SettlementLine[],
  /**
   * The file lists only what was booked (a bank's camt.054): a payout that FAILED (rejected
   * before booking) is in no such file and is not missing from it.
   */
  bookedOnly = false,
): Promise<ReconcileReport> {
  const from = new Date(`${date}T00:00:00.000Z`);
  if (Number.isNaN(from.getTime())) throw new Error(`not a date: ${date} (YYYY-MM-DD)`);
  const to = new Date(from.getTime() + 86_400_000);
  const references = lines.map((line) => line.reference);
  // Each order module reads its own table: the channel's orders final that day or named in the file.
  const day = { channel, from, to, references };
  const books = { rows: [...(await paymentBook(db, day)), ...(await payoutBook(db, day))] };
  const key = (type: string, reference: string) => `${type}:${reference}`;
  const ours = new Map(books.rows.map((row) => [key(row.type, row.reference), row]));
  // A charge unknown here that moved no money: abandoned if the platform's create of it failed.
  const unpaidStranger = (line: SettlementLine) =>
    line.type === 'charge' && UNPAID_CHARGE.has(line.status) && !ours.has(key(line.type, line.reference));
  const registrationsFailed = await failedRegistrations(
    db,
    channel,
    lines.filter(unpaidStranger).map((line) => line.reference),
  );
  const seen = new Set<string>();
  const mismatches: Mismatch[] = [];
  const abandoned: AbandonedCharge[] = [];
  let matched = 0;
  for (const line of lines) {
    const k = key(line.type, line.reference);
    seen.add(k);
    const row = ours.get(k);
    if (!row) {
      if (unpaidStranger(line) && registrationsFailed.has(line.reference)) {
        abandoned.push({ reference: line.reference, theirs: line.status });
        continue;
      }
      mismatches.push({ kind: 'missing_in_books', type: line.type, reference: line.reference, theirs: line.status });
      continue;
    }
    if (!sameStatus(line, row.status)) {
      mismatches.push({
        kind: 'status',
        type: line.type,
        reference: line.reference,
        ours: row.status,
        theirs: line.status,
      });
      continue;
    }
    const scale = scaleOf(row.currency);
    const money = line.type === 'charge' && line.paidAmount !== '' ? line.paidAmount : line.amount;
    const oursMinor =
      line.type === 'charge' && line.paidAmount !== '' ? (row.paid_minor ?? row.amount_minor) : row.amount_minor;
    if (line.currency !== row.currency || parseAmount(money, scale) !== oursMinor) {
      mismatches.push({
        kind: 'amount',
        type: line.type,
        reference: line.reference,
        ours: `${formatAmount(oursMinor, scale)} ${row.currency}`,
        theirs: `${money} ${line.currency}`,
      });
      continue;
    }
    matched++;
  }
  for (const row of books.rows) {
    if (bookedOnly && row.type === 'transfer' && row.status === 'FAILED') continue;
    if (row.in_day && !seen.has(key(row.type, row.reference))) {
      mismatches.push({ kind: 'missing_in_file', type: row.type, reference: row.reference, ours: row.status });
    }
  }
  return { channel, date, fileLines: lines.length, matched, mismatches, abandoned };
}

/**
 * A channel's own list of the payments it received on a day (kind pix-api: `GET /pix`) as
 * settlement lines: each found in the books by the channel's id of it (the endToEndId a
 * SUCCEEDED payment keeps), else by the charge's id (the txid an open payment keeps: paid at the
 * channel, not yet here). One found by neither is named by its charge id, `missing_in_books`.
 */
export async function receiptLines(
  db: Queryable,
  channel: string,
  receipts: readonly ChannelReceipt[],
): Promise<SettlementLine[]> {
  const ids = receipts.flatMap((r) => (r.chargeId === undefined ? [r.channelTradeNo] : [r.channelTradeNo, r.chargeId]));
  const orders = await paymentsByChannelTradeNo(db, channel, ids);
  return receipts.map((receipt) => {
    const reference =
      orders.get(receipt.channelTradeNo) ??
      (receipt.chargeId !== undefined ? orders.get(receipt.chargeId) : undefined) ??
      `txid:${receipt.chargeId ?? receipt.channelTradeNo}`;
    return {
      type: 'charge',
      id: receipt.channelTradeNo,
      reference,
      status: 'paid',
      currency: 'BRL',
      amount: receipt.amount,
      paidAmount: receipt.amount,
    };
  });
}

/**
 * Compares a channel's list of received payments for `date` with the books: only payments that
 * SUCCEEDED that day are expected in it (a list of money received names no expired or canceled
 * charge).
 */
export async function reconcileReceipts(
  db: Queryable,
  channel: string,
  date: string,
  receipts: readonly ChannelReceipt[],
): Promise<ReconcileReport> {
  const report = await reconcile(db, channel, date, await receiptLines(db, channel, receipts));
  return {
    ...report,
    mismatches: report.mismatches.filter((m) => m.kind !== 'missing_in_file' || m.ours === 'SUCCEEDED'),
  };
}

/** The UTC day [from, to) of a YYYY-MM-DD date, in unix ms. */
export function dayOf(date: string): { from: number; to: number } {
  const from = Date.parse(`${date}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(from)) throw new Error(`not a date: ${date} (YYYY-MM-DD)`);
  return { from, to: from + 86_400_000 };
}

/** A settlement file read: its lines, whether it lists booked entries only, and the days it books. */
export interface SettlementFile {
  readonly lines: SettlementLine[];
  /** A bank's camt.054: only booked entries are listed (a payout rejected before booking is in none). */
  readonly booked: boolean;
  /** The camt.054's booking dates (`BookgDt`) of its booked entries, distinct and sorted; none for a CSV. */
  readonly bookingDates: readonly string[];
}

/**
 * A channel's daily settlement file from its text: the CSV settlement file, or a bank's camt.054
 * (XML; kind sepa-sftp), whose booked entries are the lines. A file that is neither throws an
 * Error saying why.
 */
export function readSettlementText(text: string): SettlementFile {
  if (text.trimStart().startsWith('<')) {
    const read = readBankFile(text);
    if (!read.ok) throw new Error(read.reason);
    if (read.file.kind !== 'camt.054') throw new Error(`a ${read.file.kind}, not a camt.054`);
    const bookingDates = [
      ...new Set(
        read.file.entries.flatMap((entry) =>
          entry.status === 'BOOK' && entry.bookingDate !== undefined ? [entry.bookingDate] : [],
        ),
      ),
    ].sort();
    return { lines: camt054Lines(read.file), booked: true, bookingDates };
  }
  return { lines: parseSettlement(text), booked: false, bookingDates: [] };
}

/**
 * The day a settlement file is reconciled for: `date` when given, else the YYYY-MM-DD in the
 * file's name, else the one day a camt.054's entries are booked on. Throws an Error saying what
 * to give when none of these decides (no date anywhere, or a camt.054 booking on several days).
 */
export function settlementDate(
  date: string | undefined,
  fileName: string | undefined,
  file: Pick<SettlementFile, 'bookingDates'>,
): string {
  if (date !== undefined) return date;
  const named = fileName === undefined ? undefined : /\d{4}-\d{2}-\d{2}/.exec(fileName)?.[0];
  if (named !== undefined) return named;
  if (file.bookingDates.length === 1) return file.bookingDates[0] as string;
  if (file.bookingDates.length > 1) {
    throw new Error(`give --date YYYY-MM-DD: the file books entries on ${file.bookingDates.join(', ')}`);
  }
  throw new Error('give --date YYYY-MM-DD: neither the file name nor the file carries a date');
}
