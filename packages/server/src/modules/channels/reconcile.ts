import type { Queryable } from '../../db/db.js';
import { formatAmount, parseAmount } from '../../money.js';
import { scaleOf } from '../../catalog.js';
import { paymentBook } from '../payments/service.js';
import { payoutBook } from '../payouts/service.js';

/**
 * Reconciliation of a channel's daily settlement file against our books (issue 13, item 6).
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

export interface ReconcileReport {
  channel: string;
  date: string;
  fileLines: number;
  matched: number;
  mismatches: Mismatch[];
}

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
  const seen = new Set<string>();
  const mismatches: Mismatch[] = [];
  let matched = 0;
  for (const line of lines) {
    const k = key(line.type, line.reference);
    seen.add(k);
    const row = ours.get(k);
    if (!row) {
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
    if (row.in_day && !seen.has(key(row.type, row.reference))) {
      mismatches.push({ kind: 'missing_in_file', type: row.type, reference: row.reference, ours: row.status });
    }
  }
  return { channel, date, fileLines: lines.length, matched, mismatches };
}

/**
 * `npx paygate reconcile --channel NAME --file settlement.csv [--date YYYY-MM-DD] [--json]`: a
 * direct-database command (like `migrate`). The day is --date, else the YYYY-MM-DD in the file
 * name. Prints the mismatches as a table (or the report as JSON); returns whether it was clean,
 * so the command exits 0 when clean and 1 when there are mismatches.
 */
export async function runReconcile(
  env: NodeJS.ProcessEnv,
  options: { channel: string; file: string; date?: string | undefined; json: boolean },
  print: (line: string) => void,
): Promise<boolean> {
  const { readFileSync } = await import('node:fs');
  const { basename } = await import('node:path');
  const { parseConfig } = await import('../../config.js');
  const { openDatabase } = await import('../../db/db.js');
  const { CliError } = await import('../../cli/failure.js');
  const date = options.date ?? /\d{4}-\d{2}-\d{2}/.exec(basename(options.file))?.[0];
  if (!date) throw new CliError('give --date YYYY-MM-DD: the file name carries no date', 2);
  let text: string;
  try {
    text = readFileSync(options.file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the settlement file ${options.file}: ${(error as Error).message}`, 1, {
      cause: error,
    });
  }
  let lines: SettlementLine[];
  try {
    lines = parseSettlement(text);
  } catch (error) {
    throw new CliError(`${options.file}: ${(error as Error).message}`, 1, { cause: error });
  }
  const config = parseConfig(env);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
  try {
    const report = await reconcile(db, options.channel, date, lines);
    if (options.json) print(JSON.stringify(report));
    else {
      print(
        `${options.channel} ${date}: ${report.fileLines} lines, ${report.matched} matched, ${report.mismatches.length} mismatches`,
      );
      for (const m of report.mismatches) {
        print(
          `${m.kind.padEnd(17)} ${m.type.padEnd(8)} ${m.reference.padEnd(20)} ours=${m.ours ?? '-'} theirs=${m.theirs ?? '-'}`,
        );
      }
    }
    return report.mismatches.length === 0;
  } finally {
    await db.close();
  }
}
