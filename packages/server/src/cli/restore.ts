import { existsSync, openAsBlob, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lockDirectory } from '@paygate/dir-lock';
import { parseConfig } from '../config.js';
import { openDatabase } from '../db/db.js';
import { knownMigrations, schemaStatus } from '../db/migrate.js';
import { CliError } from './failure.js';

/** What `paygate restore` did. */
export interface RestoreReport {
  readonly dataDir: string;
  /** Where the database that was there before went (`--replace`), if there was one. */
  readonly replaced: string | undefined;
  readonly migrations: number;
  /** Migrations this build has that the backup had not applied; the next start applies them. */
  readonly pending: readonly string[];
}

const GZIP = [0x1f, 0x8b];

/**
 * `npx paygate restore --from FILE [--replace]`: puts a `paygate backup` archive in place as the
 * embedded database of `PAYGATE_DATA_DIR`, for a server that is stopped. The command holds the
 * data directory's lock throughout, so while a server owns the directory it is refused with one
 * line naming that server's pid. The archive is unpacked and opened in a staging directory first
 * (PostgreSQL replays its WAL there, and the schema is read), and moved to `pgdata` only once it
 * opened: a bad archive changes nothing. A database already there is refused, or with `replace`
 * moved aside to `pgdata.replaced-<time>` (kept, never deleted).
 */
export async function runRestore(env: NodeJS.ProcessEnv, from: string, replace: boolean): Promise<RestoreReport> {
  const config = parseConfig(env);
  if (config.databaseUrl !== undefined) {
    throw new CliError(
      'paygate restore is for the embedded database; DATABASE_URL is set: restore PostgreSQL with pg_restore (docs/operations.md, "Backups and restore")',
    );
  }
  let head: Buffer;
  try {
    head = readFileSync(from).subarray(0, 2);
  } catch (error) {
    throw new CliError(`cannot read the backup ${from}: ${(error as Error).message}`, 1, { cause: error });
  }
  if (head[0] !== GZIP[0] || head[1] !== GZIP[1]) {
    throw new CliError(`${from} is not a paygate backup (a gzip archive written by paygate backup)`);
  }
  const lock = lockDirectory(config.dataDir, 'paygate restore');
  const staging = join(config.dataDir, 'restore-staging');
  const target = join(config.dataDir, 'pgdata');
  try {
    if (existsSync(target) && readdirSync(target).length > 0 && !replace) {
      throw new CliError(
        `the data directory ${config.dataDir} already holds a database: restore into a new PAYGATE_DATA_DIR, or add --replace (the database there is kept as pgdata.replaced-<time>)`,
      );
    }
    rmSync(staging, { recursive: true, force: true });
    let status: Awaited<ReturnType<typeof schemaStatus>>;
    try {
      const db = await openDatabase({
        dataDir: staging,
        loadDataDir: await openAsBlob(from),
        owner: 'paygate restore',
      });
      try {
        status = await schemaStatus(db);
      } finally {
        await db.close();
      }
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw new CliError(
        `${from} could not be opened as an embedded database (${(error as Error).message}); nothing was changed`,
        1,
        { cause: error },
      );
    }
    if (status.unknown.length > 0) {
      rmSync(staging, { recursive: true, force: true });
      throw new CliError(
        `${from} was taken by a newer build (its schema has ${status.unknown.join(', ')}, which this build does not know): restore it with that build; nothing was changed`,
      );
    }
    let replaced: string | undefined;
    if (existsSync(target)) {
      replaced = join(config.dataDir, `pgdata.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      renameSync(target, replaced);
    }
    renameSync(join(staging, 'pgdata'), target);
    rmSync(staging, { recursive: true, force: true });
    return {
      dataDir: config.dataDir,
      replaced,
      migrations: knownMigrations().length - status.pending.length,
      pending: status.pending,
    };
  } finally {
    lock.release();
  }
}
