import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from './db.js';

// Outside src/ so that the same files serve the sources and the build (dist/db → ../../migrations).
const MIGRATIONS_DIR = join(import.meta.dirname, '../../migrations');
/** Any fixed number: serializes migrations across every instance sharing a PostgreSQL. */
const MIGRATION_LOCK = 727_001;

/**
 * Applies the SQL files in `migrations/` in name order, each once and in its own transaction.
 * The same files run on PostgreSQL and on PGlite.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = knownMigrations();
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    // A migration may rewrite a large table: the pool's statement timeout is for requests.
    await tx.query('SET LOCAL statement_timeout = 0');
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    const unknown = [...done].filter((name) => !files.includes(name));
    if (unknown.length > 0) throw new SchemaError(newerSchemaMessage(unknown));
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = readFileSync(join(MIGRATIONS_DIR, file), 'utf8');
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
  });
  return applied;
}

/** The migrations this build knows, in the order they apply. */
export function knownMigrations(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort();
}

/** The schema is not one this build can run against (newer, or still missing migrations). */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

const newerSchemaMessage = (unknown: readonly string[]) =>
  `the database schema is newer than this build (it has ${unknown.join(', ')}, which this build does not know): ` +
  'run the newer build, or restore a backup taken before that migration';

/** Where the database's schema stands against this build's migrations. */
export async function schemaStatus(db: Db): Promise<{ pending: string[]; unknown: string[] }> {
  const files = knownMigrations();
  const table = await db.query<{ present: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  const done = table.rows[0]?.present
    ? (await db.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name)
    : [];
  return {
    pending: files.filter((file) => !done.includes(file)),
    unknown: done.filter((name) => !files.includes(name)),
  };
}

/**
 * Makes sure the schema is the one this build needs before an instance starts: with `migrate`
 * it applies what is missing (under the migration lock, so instances starting together are
 * safe); without, it waits up to `waitMs` for `npx paygate migrate` to have run. Either way it
 * refuses a schema newer than this build, since old code on a new schema may corrupt data.
 */
export async function ensureSchema(
  db: Db,
  options: { migrate: boolean; waitMs: number; pollMs?: number; onWait?: (pending: string[]) => void },
): Promise<string[]> {
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    const status = await schemaStatus(db);
    if (status.unknown.length > 0) throw new SchemaError(newerSchemaMessage(status.unknown));
    if (options.migrate) return migrate(db);
    if (status.pending.length === 0) return [];
    if (Date.now() >= deadline) {
      throw new SchemaError(
        `the database schema lacks ${status.pending.join(', ')}: run \`npx paygate migrate\` (PAYGATE_AUTO_MIGRATE is off)`,
      );
    }
    options.onWait?.(status.pending);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}

/**
 * Splits a migration into statements on semicolons at the end of a line. Migrations keep
 * function bodies in `$$` blocks, whose inner semicolons are not at a `$$`-free line end.
 */
function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBlock = false;
  for (const line of sql.split('\n')) {
    if (/^\s*--/.test(line) && !inBlock) continue;
    current.push(line);
    const dollars = line.match(/\$\$/g)?.length ?? 0;
    if (dollars % 2 === 1) inBlock = !inBlock;
    if (!inBlock && /;\s*$/.test(line)) {
      statements.push(current.join('\n'));
      current = [];
    }
  }
  const rest = current.join('\n').trim();
  if (rest) statements.push(rest);
  return statements.filter((s) => s.trim().length > 0);
}
