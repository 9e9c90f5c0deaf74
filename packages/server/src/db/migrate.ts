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
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
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
