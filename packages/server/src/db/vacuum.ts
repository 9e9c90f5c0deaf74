import type { Db } from './db.js';

/** What one vacuum pass did to a table, for the sweeper's log. */
export interface Vacuumed {
  readonly table: string;
  /** Dead rows the statistics counted before the pass. */
  readonly dead: number;
  /** Whether the pass also refreshed the planner's statistics. */
  readonly analyzed: boolean;
  readonly ms: number;
}

/**
 * The table's dead rows and whether its statistics are stale by autovacuum's own rule
 * (autovacuum_analyze_threshold + autovacuum_analyze_scale_factor × rows, read from the settings).
 */
const TABLE_STATS = `
  SELECT s.n_dead_tup AS dead,
         s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
           + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0) AS stale
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
   WHERE s.relid = $1::regclass`;

/**
 * The embedded database's stand-in for autovacuum, which a single-user PGlite backend does not
 * run (no postmaster, so no launcher and no workers): without it a purged or updated table keeps
 * its dead rows, its file only grows (freed space is never reused) and its statistics never change.
 *
 * The table is vacuumed once it has any dead rows: the visibility map limits a vacuum to the
 * pages changed since the previous one, so passes at a short interval stay small, and PGlite is
 * one session (every request waits while a statement runs). Statistics are refreshed only when
 * autovacuum would refresh them: ANALYZE samples the whole table however little changed.
 *
 * Modules call it through {@link vacuumTables}, naming their tables as literals.
 */
async function vacuumTable(db: Db, { table }: { readonly table: string }): Promise<Vacuumed | undefined> {
  if (db.kind !== 'pglite') return undefined;
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  // Counters reach the statistics views when the session is next idle and a flush is due (at
  // most once a second): force one, so that a purge just made is counted.
  await db.query('SELECT pg_stat_force_next_flush()');
  const stats = await db.query<{ dead: bigint; stale: boolean }>(TABLE_STATS, [table]);
  const row = stats.rows[0];
  if (!row || (row.dead === 0n && !row.stale)) return undefined;
  const started = performance.now();
  if (row.dead > 0n) await db.query(row.stale ? `VACUUM (ANALYZE) ${table}` : `VACUUM ${table}`);
  else await db.query(`ANALYZE ${table}`);
  return { table, dead: Number(row.dead), analyzed: row.stale, ms: Math.round(performance.now() - started) };
}

/**
 * {@link vacuumTable} for each of a module's tables, in turn; what was done. The tables come from
 * their owning module, as literals (`vacuumTables(this.db, ['payments'])`).
 */
export async function vacuumTables(db: Db, tables: readonly string[]): Promise<Vacuumed[]> {
  const done: Vacuumed[] = [];
  for (const table of tables) {
    const vacuumed = await vacuumTable(db, { table });
    if (vacuumed) done.push(vacuumed);
  }
  return done;
}
