import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseConfig } from '../config.js';
import type { ChannelReceipt } from '../modules/channels/connector.js';
import { readBankFile } from '@paygate/iso20022';
import {
  camt054Lines,
  dayOf,
  parseSettlement,
  reconcile,
  reconcileReceipts,
  type SettlementLine,
} from '../modules/reconciliation/service.js';
import { channelRegistry } from '../modules/channels/registry.js';
import { openCommandDatabase } from './database.js';
import { CliError } from './failure.js';

/**
 * `npx paygate reconcile --channel NAME (--file settlement.csv | --date YYYY-MM-DD) [--json]`: a
 * direct-database command (like `migrate`). With a file, the day is --date, else the YYYY-MM-DD
 * in the file name. Without one, the channel's own list of the day's received payments is asked
 * for (a channel whose kind has one, pix-api: `GET /pix?inicio&fim`; its settings from
 * PAYGATE_CHANNELS). Prints the mismatches as a table (or the report as JSON); returns whether
 * it was clean, so the command exits 0 when clean and 1 when there are mismatches.
 */
export async function runReconcile(
  env: NodeJS.ProcessEnv,
  options: { channel: string; file?: string | undefined; date?: string | undefined; json: boolean },
  print: (line: string) => void,
): Promise<boolean> {
  const date =
    options.date ?? (options.file !== undefined ? /\d{4}-\d{2}-\d{2}/.exec(basename(options.file))?.[0] : undefined);
  if (!date) throw new CliError('give --date YYYY-MM-DD: the file name carries no date', 2);
  let day: { from: number; to: number };
  try {
    day = dayOf(date);
  } catch (error) {
    throw new CliError((error as Error).message, 2, { cause: error });
  }
  const settlement = options.file === undefined ? undefined : readSettlement(options.file);
  const lines = settlement?.lines;
  const receipts = lines === undefined ? await receivedOn(env, options.channel, day) : undefined;
  const db = await openCommandDatabase(env, 'paygate reconcile');
  try {
    const report =
      lines !== undefined
        ? await reconcile(db, options.channel, date, lines, settlement?.booked)
        : await reconcileReceipts(db, options.channel, date, receipts ?? []);
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

/**
 * A channel's daily settlement file, parsed: the CSV settlement file, or a bank's camt.054 (an
 * XML file; kind sepa-sftp), whose booked entries are the lines (`booked`: a payout rejected
 * before booking is in no such file).
 */
function readSettlement(file: string): { lines: SettlementLine[]; booked: boolean } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the settlement file ${file}: ${(error as Error).message}`, 1, { cause: error });
  }
  if (text.trimStart().startsWith('<')) {
    const read = readBankFile(text);
    if (!read.ok) throw new CliError(`${file}: ${read.reason}`, 1);
    if (read.file.kind !== 'camt.054') throw new CliError(`${file}: a ${read.file.kind}, not a camt.054`, 1);
    return { lines: camt054Lines(read.file), booked: true };
  }
  try {
    return { lines: parseSettlement(text), booked: false };
  } catch (error) {
    throw new CliError(`${file}: ${(error as Error).message}`, 1, { cause: error });
  }
}

/** The payments a channel says it received in `day`, from its own list (no file). */
async function receivedOn(
  env: NodeJS.ProcessEnv,
  channel: string,
  day: { from: number; to: number },
): Promise<readonly ChannelReceipt[]> {
  const registry = channelRegistry(parseConfig(env), { metrics: undefined, now: Date.now });
  const connector = registry.get(channel);
  if (!connector?.receivedBetween) {
    throw new CliError(
      `give --file: ${connector ? `the ${connector.kind} channel ${channel} has no list of received payments` : `no channel ${channel} in PAYGATE_CHANNELS`}`,
      2,
    );
  }
  try {
    return await connector.receivedBetween(day.from, day.to);
  } catch (error) {
    throw new CliError(`${channel}: ${(error as Error).message}`, 1, { cause: error });
  } finally {
    await connector.close?.();
  }
}
