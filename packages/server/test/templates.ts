/**
 * Migrate once, clone per platform (the rafiki pattern): a fresh embedded database starts from a
 * dump of a migrated one, and a fresh PostgreSQL database is copied from a migrated template
 * database. Both are keyed by a hash of the migration files, so a changed migration makes a new
 * template instead of reusing a stale one, and both are shared by every test process of a run
 * (and later runs), made once under a lock.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { dumpEmbedded, openDatabase } from '../src/db/db.js';
import { knownMigrations, migrate } from '../src/db/migrate.js';

const MIGRATIONS_DIR = join(import.meta.dirname, '../migrations');

/** A short hash of every migration's name and text. */
const migrationsHash = (() => {
  let hash: string | undefined;
  return () => {
    if (hash) return hash;
    const digest = createHash('sha256');
    for (const name of knownMigrations())
      digest
        .update(name)
        .update('\0')
        .update(readFileSync(join(MIGRATIONS_DIR, name)));
    hash = digest.digest('hex').slice(0, 16);
    return hash;
  };
})();

let embedded: Promise<Blob> | undefined;

/**
 * A dump of a migrated embedded database. Made once per machine and migrations (a file in the
 * temporary directory, published by an atomic rename) and read once per test process.
 */
export function embeddedTemplate(): Promise<Blob> {
  embedded ??= (async () => {
    const file = join(tmpdir(), `paygate-test-template-${migrationsHash()}.tar`);
    if (existsSync(file)) return new Blob([readFileSync(file)]);
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      await migrate(db);
      const dump = await dumpEmbedded(db);
      const partial = `${file}.${randomBytes(4).toString('hex')}`;
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, file);
      return dump;
    } finally {
      await db.close();
    }
  })();
  return embedded;
}

/** Any fixed number: serializes template creation across test processes. */
const TEMPLATE_LOCK = 727_002;

/**
 * The name of a migrated template database on the server at `base`, created the first time it is
 * needed. It is built under another name and renamed when complete, so a copy never starts from
 * a half-migrated template, and nothing stays connected to it (PostgreSQL copies only a template
 * nobody is connected to).
 */
export async function postgresTemplate(base: string): Promise<string> {
  const name = `paygate_template_${migrationsHash()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      const building = `${name}_${randomBytes(4).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${building}`);
      const url = new URL(base);
      url.pathname = `/${building}`;
      const db = await openDatabase({ databaseUrl: url.toString(), dataDir: 'memory://', poolSize: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => {});
    await admin.end();
  }
}
