/**
 * A decorator over the `Db` that traces every statement and transaction (while tracing is on)
 * and runs observations after a transaction commits (always): `traced(db)` where the database is
 * opened, `afterCommit(tx, …)` where a write should be counted only once it is durable.
 */
import type { Db, QueryResult, Queryable, Sql, TransactionOptions } from '../db/db.js';
import { inSpan, SpanKind, tracingEnabled } from './tracing.js';

/** Observations waiting for the commit of the transaction a traced `tx` belongs to. */
const pendingCommit = new WeakMap<Queryable, (() => void)[]>();

/**
 * Runs `observe` once the transaction of `tx` has committed, and never when it rolls back. When
 * `tx` is not a transaction of a traced Db (a plain Db: each statement commits by itself), it
 * runs at once.
 */
export function afterCommit(tx: Queryable, observe: () => void): void {
  const pending = pendingCommit.get(tx);
  if (pending) pending.push(observe);
  else observe();
}

const MAX_QUERY_TEXT = 2048;

/** The statement's first keyword (SELECT, INSERT, WITH, …): the span's name. */
function operationOf(text: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(text);
  return match?.[1]?.toUpperCase() ?? 'SQL';
}

function traceStatement<T>(kind: Db['kind'], sql: Sql, run: () => Promise<QueryResult<T>>): Promise<QueryResult<T>> {
  if (!tracingEnabled()) return run();
  const text = typeof sql === 'string' ? sql : sql.text;
  const operation = operationOf(text);
  return inSpan(
    operation,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'postgresql',
        'paygate.db.engine': kind,
        'db.operation.name': operation,
        // Parameterized text only: the values travel as parameters and are never recorded.
        'db.query.text': text.length > MAX_QUERY_TEXT ? text.slice(0, MAX_QUERY_TEXT) : text,
        ...(typeof sql === 'string' ? {} : { 'db.query.summary': sql.name }),
      },
    },
    async (span) => {
      const result = await run();
      span.setAttribute('db.response.returned_rows', result.rows.length);
      return result;
    },
  );
}

function tracedQueryable(kind: Db['kind'], q: Queryable): Queryable {
  return {
    query: <T>(sql: Sql, params?: readonly unknown[]) => traceStatement(kind, sql, () => q.query<T>(sql, params)),
  };
}

/** `db`, with a span per statement (a child of the active span) and per transaction. */
export function traced(db: Db): Db {
  return {
    kind: db.kind,
    query: <T>(sql: Sql, params?: readonly unknown[]) => traceStatement(db.kind, sql, () => db.query<T>(sql, params)),
    async transaction<T>(work: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
      const pending: (() => void)[] = [];
      const run = () =>
        db.transaction((tx) => {
          // A retried attempt starts over: only the attempt that commits is observed.
          pending.length = 0;
          const wrapped = tracedQueryable(db.kind, tx);
          pendingCommit.set(wrapped, pending);
          return work(wrapped);
        }, options);
      const value = tracingEnabled()
        ? await inSpan('TRANSACTION', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql' } }, run)
        : await run();
      for (const observe of pending) {
        try {
          observe();
        } catch {
          // An observation (a metric) must never fail a committed write.
        }
      }
      return value;
    },
    exec: (sql: string) =>
      tracingEnabled()
        ? inSpan('EXEC', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql' } }, () => db.exec(sql))
        : db.exec(sql),
    close: () => db.close(),
    poolStats: () => db.poolStats(),
    embeddedMemoryBytes: () => db.embeddedMemoryBytes(),
    acceptsWrites: () => db.acceptsWrites(),
    embeddedDump: (compression) => db.embeddedDump(compression),
  };
}
