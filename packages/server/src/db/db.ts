import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** A row-returning query's result. */
export interface QueryResult<T> {
  readonly rows: T[];
  readonly rowCount: number;
}

/**
 * A statement of a hot path that PostgreSQL parses and plans once per connection instead of on
 * every call. Name it uniquely and list its result columns (no `SELECT *`): a prepared plan must
 * keep its result shape across migrations.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** Declares a prepared statement (see {@link PreparedStatement}). */
export const prepared = (name: string, text: string): PreparedStatement => ({ name, text });

/** SQL text, or a prepared statement. */
export type Sql = string | PreparedStatement;

/**
 * The query layer, identical over PostgreSQL and the embedded PGlite: parameterized SQL
 * (`$1`, `$2`, …), int8 as `bigint`, and transactions that commit or roll back as a whole.
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: Sql, params?: readonly unknown[]): Promise<QueryResult<T>>;
}

/** pg's query config for `sql`: named (prepared once per connection) when it is a prepared statement. */
function pgQuery(sql: Sql, params: readonly unknown[]): pg.QueryConfig {
  return typeof sql === 'string'
    ? { text: sql, values: params as unknown[] }
    : { name: sql.name, text: sql.text, values: params as unknown[] };
}

const textOf = (sql: Sql) => (typeof sql === 'string' ? sql : sql.text);

export interface Db extends Queryable {
  /** Runs `work` in one transaction (READ COMMITTED); rolls back if it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  readonly kind: 'postgres' | 'pglite';
}

const parseInt8 = (value: string) => BigInt(value);

class PostgresDb implements Db {
  readonly kind = 'postgres';
  constructor(private readonly pool: pg.Pool) {}

  async query<T>(sql: Sql, params: readonly unknown[] = []): Promise<QueryResult<T>> {
    const result = await this.pool.query(pgQuery(sql, params));
    return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const tx: Queryable = {
        async query<R>(sql: Sql, params: readonly unknown[] = []) {
          const result = await client.query(pgQuery(sql, params));
          return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
        },
      };
      const value = await work(tx);
      await client.query('COMMIT');
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  async close(): Promise<void> {
    // pool.end() resolves before its connections have closed; wait for every one of them, so
    // that whoever drops the database next does not kill a connection still closing.
    const open = this.pool.totalCount;
    let removed = 0;
    const closed = new Promise<void>((resolve) => {
      if (open === 0) resolve();
      this.pool.on('remove', () => {
        removed += 1;
        if (removed >= open) resolve();
      });
    });
    await this.pool.end();
    await closed;
  }
}

class PgliteDb implements Db {
  readonly kind = 'pglite';
  constructor(private readonly pglite: PGlite) {}

  async query<T>(sql: Sql, params: readonly unknown[] = []): Promise<QueryResult<T>> {
    const result = await this.pglite.query<T>(textOf(sql), params as unknown[]);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    // PGlite is one session: its transaction() holds the session exclusively until done.
    return this.pglite.transaction(async (t) =>
      work({
        async query<R>(sql: Sql, params: readonly unknown[] = []) {
          const result = await t.query<R>(textOf(sql), params as unknown[]);
          return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
        },
      }),
    );
  }

  async exec(sql: string): Promise<void> {
    await this.pglite.exec(sql);
  }

  async close(): Promise<void> {
    await this.pglite.close();
  }
}

/** Opens PostgreSQL at `databaseUrl`, or the embedded database under `dataDir` (`memory://` for none). */
export async function openDatabase(options: {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
}): Promise<Db> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 20,
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          oid === 20 ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
      },
    });
    const db = new PostgresDb(pool);
    await db.query('SELECT 1');
    return db;
  }
  const location = options.dataDir === 'memory://' ? undefined : `${options.dataDir}/pgdata`;
  if (location) mkdirSync(location, { recursive: true });
  const pglite = new PGlite({ ...(location ? { dataDir: location } : {}), parsers: { 20: parseInt8 } });
  await pglite.waitReady;
  return new PgliteDb(pglite);
}

/** SQLSTATE of a database error, for branching on the database's own codes. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string')
    return error.code;
  return undefined;
}

/** SQLSTATE 23505: a unique constraint refused the row. */
export const UNIQUE_VIOLATION = '23505';
