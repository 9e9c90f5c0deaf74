import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { DirectoryInUseError } from '@paygate/dir-lock';
import { parseConfig } from '../config.js';
import type { Db } from '../db/db.js';
import type { ChannelReceipt } from '../modules/channels/connector.js';
import {
  dayOf,
  readSettlementText,
  reconcile,
  reconcileReceipts,
  type ReconcileReport,
  settlementDate,
  type SettlementFile,
} from '../modules/reconciliation/service.js';
import { channelRegistry } from '../modules/channels/registry.js';
import { openCommandDatabase } from './database.js';
import { CliError } from './failure.js';

/** What `POST /admin/v1/reconciliation` takes: the running server reconciles when it owns the data directory. */
export interface ReconcileRequest {
  readonly channel: string;
  readonly date: string;
  readonly file?: string;
  readonly fileName?: string;
}

/**
 * `npx paygate reconcile --channel NAME (--file settlement.csv | --date YYYY-MM-DD) [--json]`.
 * With a file, the day is --date, else the YYYY-MM-DD in the file name, else the one day a
 * camt.054's entries are booked on. Without one, the channel's own list of the day's received
 * payments is asked for (a channel whose kind has one, pix-api: `GET /pix?inicio&fim`; its
 * settings from PAYGATE_CHANNELS). It reads the database itself (PostgreSQL, or an embedded data
 * directory no server holds); while a running server owns the embedded data directory it sends
 * the file to that server's operator API (`viaServer`), as the other commands do. Prints the
 * mismatches as a table (or the report as JSON); returns whether it was clean, so the command
 * exits 0 when clean and 1 when there are mismatches.
 */
export async function runReconcile(
  env: NodeJS.ProcessEnv,
  options: { channel: string; file?: string | undefined; date?: string | undefined; json: boolean },
  print: (line: string) => void,
  viaServer: (request: ReconcileRequest) => Promise<ReconcileReport>,
): Promise<boolean> {
  const text = options.file === undefined ? undefined : readText(options.file);
  const settlement = text === undefined ? undefined : parsed(options.file as string, text);
  let date: string;
  let day: { from: number; to: number };
  try {
    date =
      settlement === undefined
        ? (options.date ?? settlementDate(undefined, undefined, { bookingDates: [] }))
        : settlementDate(options.date, basename(options.file as string), settlement);
    day = dayOf(date);
  } catch (error) {
    throw new CliError((error as Error).message, 2, { cause: error });
  }
  let db: Db | undefined;
  try {
    db = await openCommandDatabase(env, 'paygate reconcile');
  } catch (error) {
    if (!(error instanceof DirectoryInUseError)) throw error;
  }
  let report: ReconcileReport;
  if (db === undefined) {
    report = await viaServer({
      channel: options.channel,
      date,
      ...(text === undefined ? {} : { file: text, fileName: basename(options.file as string) }),
    });
  } else {
    try {
      report =
        settlement !== undefined
          ? await reconcile(db, options.channel, date, settlement.lines, settlement.booked)
          : await reconcileReceipts(db, options.channel, date, await receivedOn(env, options.channel, day));
    } finally {
      await db.close();
    }
  }
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
    for (const a of report.abandoned) {
      print(
        `${'abandoned'.padEnd(17)} ${'charge'.padEnd(8)} ${a.reference.padEnd(20)} ours=- theirs=${a.theirs} (not a mismatch)`,
      );
    }
  }
  return report.mismatches.length === 0;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the settlement file ${file}: ${(error as Error).message}`, 1, { cause: error });
  }
}

/**
 * A channel's daily settlement file, parsed: the CSV settlement file, or a bank's camt.054 (an
 * XML file; kind sepa-sftp), whose booked entries are the lines.
 */
function parsed(file: string, text: string): SettlementFile {
  try {
    return readSettlementText(text);
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
