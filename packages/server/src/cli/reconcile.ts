import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseSettlement, reconcile, type SettlementLine } from '../modules/channels/reconcile.js';
import { openCommandDatabase } from './database.js';
import { CliError } from './failure.js';

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
  const db = await openCommandDatabase(env, 'paygate reconcile');
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
