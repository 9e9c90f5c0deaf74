import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { PGlite, protocol } from '@electric-sql/pglite';
import { type DirectoryLock, lockDirectory } from '@paygate/dir-lock';
import pg from 'pg';
import { DomainError } from '../errors.js';
import {
  cancelledSyncWait,
  CommittedLocally,
  NeverRan,
  neverSent,
  PipelinedConnection,
  type Upkeep,
} from './pipeline.js';
import { BUSINESS_SAVEPOINT, NonceRefused, type RequestNonce } from './request-nonce.js';
import { readResults } from './pglite-results.js';
import { CollectingQuery, parseInt8, typeParser } from './pg-rows.js';

/** A row-returning query's result. */
export interface QueryResult<T> {
  readonly rows: T[];
  readonly rowCount: number;
}

/**
 * A statement of a hot path that PostgreSQL parses and plans once per connection instead of on
 * every call. Name it uniquely and list its result columns (no `SELECT *`): a prepared plan must
 * keep its result shape across migrations. Outside a transaction it runs on a pipelined
 * connection (see PipelinedConnection), behind the other hot paths' statements: it must be short,
 * an index probe or an insert of a batch, never a scan or a wait for a lock held across requests
 * (on PostgreSQL's reads connection the planner may choose nothing else: see CACHED_INDEX_PLANS).
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
  /**
   * Not to be served by a kept plan of the planner's free choice: a generic plan of `= ANY($1)` or
   * `unnest($1)` assumes ten keys, so one made while the table was small scans the table (or
   * probes the wrong index), and PostgreSQL keeps it until the table is next analyzed (never, with
   * autovacuum off). Where the session makes such plans safe it is still parsed only once: the
   * embedded database keeps index plans only and renews them (PgliteDb.run), PostgreSQL's
   * pipelined reads connection likewise (CACHED_INDEX_PLANS).
   * Elsewhere (a transaction on the pool) it goes as an unnamed statement, parsed and planned on
   * every call.
   */
  readonly customPlan?: boolean;
}

/**
 * A session setting: every prepared statement is planned for its actual parameters, and still
 * parsed only once (the embedded database with `embeddedPlanRenewalMs: 0`, as before issue #40).
 */
const PLAN_FOR_PARAMETERS = 'SET plan_cache_mode = force_custom_plan';

/**
 * The session of PostgreSQL's pipelined reads connection. Every statement on it is a batch of
 * index probes by key, or of keyset ranges of an index (see {@link PreparedStatement}), so it is
 * planned once and the plan kept, with the planner unable to choose anything else: no sequential
 * scans, no hash or merge joins, whatever the statistics say or the table's size was. Planning
 * was most of these statements' time: per batch, the lookups by both keys took 425 µs to plan
 * and 334 to run, the list pages 142 and 61, balances 68 and 11 (pg_stat_statements, the bench's
 * shop mix). Among indexes the choice can still be wrong when the plan is made on a nearly empty
 * table (the pairs by merchantOrderNo through the list index): the connection drops its plans
 * every PLAN_RENEWAL_MS (see openDatabase), so the next plans see the tables as they are then.
 */
const CACHED_INDEX_PLANS = [
  'SET plan_cache_mode = force_generic_plan',
  'SET enable_seqscan = off',
  'SET enable_hashjoin = off',
  'SET enable_mergejoin = off',
];

/** How often the pipelined reads connection drops its cached plans (see CACHED_INDEX_PLANS). */
const PLAN_RENEWAL_MS = 30_000;

/** Declares a prepared statement (see {@link PreparedStatement}). */
export const prepared = (name: string, text: string, options: { customPlan?: boolean } = {}): PreparedStatement => ({
  name,
  text,
  ...(options.customPlan ? { customPlan: true } : {}),
});

/** SQL text, or a prepared statement. */
export type Sql = string | PreparedStatement;

/**
 * The query layer, identical over PostgreSQL and the embedded PGlite: parameterized SQL
 * (`$1`, `$2`, …), int8 as `bigint`, and transactions that commit or roll back as a whole.
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: Sql, params?: readonly unknown[]): Promise<QueryResult<T>>;
}

/**
 * What a caller adds to a service's transaction, run inside it after the change (the audit
 * trail's entry): it commits with the change or not at all. `detail` is what the change made.
 */
export type InTransaction<D = void> = (tx: Queryable, detail: D) => Promise<void>;

const textOf = (sql: Sql) => (typeof sql === 'string' ? sql : sql.text);

/**
 * pg's query config for `sql`: named (parsed once per connection) when it is a prepared statement.
 * A statement not to be served by a kept plan goes unnamed, unless the connection's session makes
 * its plans safe (`safePlans`: see {@link PreparedStatement.customPlan}).
 */
function pgQuery(sql: Sql, params: readonly unknown[], safePlans = false): pg.QueryConfig {
  return typeof sql === 'string' || (sql.customPlan && !safePlans)
    ? { text: textOf(sql), values: params as unknown[] }
    : { name: sql.name, text: sql.text, values: params as unknown[] };
}

/** How busy a connection pool is (PostgreSQL only). */
export interface PoolStats {
  /** Connections open, idle or in use. */
  readonly total: number;
  readonly idle: number;
  /** Callers waiting for a connection. */
  readonly waiting: number;
  /** The most connections the pool opens. */
  readonly max: number;
  /** Statements sent and not yet answered on each pipelined connection (see PipelinedConnection). */
  readonly pipelined: { readonly reads: number; readonly writes: number };
}

/**
 * A transaction that is a signed request's write: its first statement records the request's nonce
 * (sent with BEGIN, in the same round trip on PostgreSQL), so that the nonce and the business
 * commit together, once.
 */
export interface TransactionOptions {
  /**
   * Recorded first when still pending. Used before: the transaction ends there (NonceRefused),
   * before any business statement. A business refusal (`keepsNonce`) rolls the business back and
   * still commits the nonce, so that the request cannot be replayed; any other failure (the
   * database unavailable, a bug) rolls back everything, the nonce too: nothing of the request
   * happened.
   */
  readonly nonce?: RequestNonce | undefined;
  /** Which failures of `work` are the business's refusals (default: isRefusal). */
  readonly keepsNonce?: (error: unknown) => boolean;
}

/**
 * A business refusal: a DomainError (answered 4xx with its code), or the database refusing the
 * business's rows by a constraint (SQLSTATE class 23, say the CHECK that refuses a payout the
 * balance does not cover).
 */
export function isRefusal(error: unknown): boolean {
  return error instanceof DomainError || sqlState(error)?.startsWith('23') === true;
}

export interface Db extends Queryable {
  /** Runs `work` in one transaction (READ COMMITTED); rolls back if it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  readonly kind: 'postgres' | 'pglite';
  /** The pool's occupancy; `undefined` for the embedded database, which has no pool. */
  poolStats(): PoolStats | undefined;
  /**
   * The embedded database's WebAssembly memory in bytes: PostgreSQL's shared buffers and its
   * backend's allocations, reserved as it grows and never returned. `undefined` on PostgreSQL,
   * whose memory is its own processes'.
   */
  embeddedMemoryBytes(): number | undefined;
  /**
   * Whether a connection of the pool takes writes now: false on a standby (a demoted primary)
   * or a read-only session. One attempt, no retry: `/readyz` asks.
   */
  acceptsWrites(): Promise<boolean>;
  /**
   * The embedded database only: its data directory as a tar archive (gzip when asked), every
   * transaction committed before it and none half done, which `openDatabase({ loadDataDir })`
   * starts from (`paygate backup`, `paygate restore`). `undefined` on PostgreSQL (pg_dump).
   */
  embeddedDump(compression?: 'none' | 'gzip'): Promise<Blob> | undefined;
}

/**
 * The database could not be reached or dropped the connection mid-statement (a failover, a
 * restart, a terminated backend, a timeout). Nothing the caller did is at fault and a retry may
 * succeed: the HTTP layer answers 503. Whether a statement in flight committed is unknown, which
 * is why every write of ours is idempotent on its business key.
 */
export class DatabaseUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/** SQLSTATEs that mean "the server or the connection went away", not "the statement is wrong". */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014', '58P01']);
/** Socket errors of a connection that failed or broke. */
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What `pg` and `pg-pool` say when a connection ends, times out or is unusable (they set no code). */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'is not queryable',
  'Cannot use a pool after calling end',
];

/** Whether `error` is the connection's fault (see {@link DatabaseUnavailableError}). */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  // FATAL and PANIC end the session: the server refused or dropped the connection itself.
  const severity = severityOf(error);
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  const state = sqlState(error);
  if (state !== undefined)
    return state.startsWith('08') || UNAVAILABLE_STATES.has(state) || UNAVAILABLE_ERRNOS.has(state);
  const message = error instanceof Error ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((text) => message.includes(text));
}

/** SQLSTATE 25006: a write on a read-only connection (a standby, or a primary being demoted). */
export const READ_ONLY_TRANSACTION = '25006';

/** Statements that only read: run again after a lost connection, they change nothing. */
const READS = /^\s*(SELECT|SHOW)\b/i;
/** Whole words only: `updated_at` or `deleted_at` in a select list is no UPDATE or DELETE. */
const WRITES_IN_A_READ =
  /\b(INSERT|UPDATE|DELETE|FOR\s+(NO\s+KEY\s+)?UPDATE|FOR\s+(KEY\s+)?SHARE)\b|\b(nextval|setval|pg_advisory)/i;
/**
 * Whether `sql` only reads. Such a statement is run again after a lost connection, and outside a
 * transaction it goes to the pipelined reads connection, never behind a commit.
 */
const onlyReads = (sql: Sql) => READS.test(textOf(sql)) && !WRITES_IN_A_READ.test(textOf(sql));

/**
 * Whether a failed attempt certainly committed nothing, so that running it again is safe: the
 * server refused it as read-only (a standby behind the balancer during a failover), or the
 * connection failed before a COMMIT was sent (`committing` false), or the server itself ended the
 * session with a FATAL error (terminated, shutting down): PostgreSQL holds such interrupts off
 * once a commit is recorded, so a FATAL answer means the statement it interrupted was rolled back.
 * A read (`reads`) is safe to run again whatever happened. A connection lost without a word while
 * a write commits (a crash, a cut network, a sync-replication wait cancelled by a shutdown)
 * leaves the outcome unknown: that one is not retried here but answered 503, and the client's
 * retry meets the business key.
 */
function safeToRetry(error: unknown, committing: boolean, reads: boolean): boolean {
  if (sqlState(error) === READ_ONLY_TRANSACTION) return true;
  if (!isUnavailable(error)) return false;
  return !committing || reads || severityOf(error) === 'FATAL';
}

function severityOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'severity' in error ? error.severity : undefined;
}

/** A failed attempt that {@link safeToRetry} allows to run again. */
class RetryableFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('retryable');
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Watches a checked-out connection for the warning PostgreSQL sends when a shutdown ends a
 * commit's wait for the synchronous standby (SQLSTATE 57P01, "canceling the wait for synchronous
 * replication ... The transaction has already committed locally"): the server then closes the
 * connection without answering. The commit is recorded, as PostgreSQL reports one whose wait a
 * cancel ended; and a fast shutdown (Patroni's switchover) sends every WAL record to the
 * connected standby before it stops, so the commit is on the new primary too. A crash sends no
 * such warning: that outcome stays unknown.
 */
function watchCommit(client: pg.PoolClient): { readonly committedLocally: boolean; stop(): void } {
  const watch = {
    committedLocally: false,
    stop: () => client.removeListener('notice', onNotice),
  };
  const onNotice = (notice: { code?: string; message?: string }) => {
    if (cancelledSyncWait(notice)) watch.committedLocally = true;
  };
  client.on('notice', onNotice);
  return watch;
}

/**
 * Runs one statement, collecting its rows into `rows` as they arrive: a statement with RETURNING
 * whose commit the connection did not live to confirm (see {@link watchCommit}) still has its
 * rows, all sent before the commit.
 */
function runStatement<T>(
  client: pg.PoolClient,
  sql: Sql,
  params: readonly unknown[],
  rows: T[],
): Promise<QueryResult<T>> {
  return new Promise((resolve, reject) => {
    // A callback, not 'end'/'error' listeners: pg wraps it for query_timeout, and a query with a
    // callback reports its error only there.
    const query = new CollectingQuery<T>(pgQuery(sql, params), rows, (error, result) =>
      error ? reject(error) : resolve({ rows, rowCount: result.rowCount ?? 0 }),
    );
    client.query(query);
  });
}

const RETURNING = /\bRETURNING\b/i;

/**
 * Gives a checked-out client back to the pool. A broken connection is destroyed, not returned for
 * the next caller, and keeps a listener that ignores what it still reports: the server's FATAL
 * (say, `terminating connection due to administrator command`) can arrive after the pool let go
 * of it, and an 'error' event nobody listens to ends the process.
 */
function releaseClient(client: pg.PoolClient, onError: (error: unknown) => void, broken: unknown): void {
  client.removeListener('error', onError);
  if (broken === undefined) {
    client.release();
    return;
  }
  client.on('error', () => {});
  client.release(broken instanceof Error ? broken : true);
}

/** Rethrows a connection failure as {@link DatabaseUnavailableError}, anything else as it is. */
function classify(error: unknown): never {
  throw isUnavailable(error) && !(error instanceof DatabaseUnavailableError)
    ? new DatabaseUnavailableError(error)
    : error;
}

class PostgresDb implements Db {
  readonly kind = 'postgres';
  constructor(
    private readonly pool: pg.Pool,
    private readonly maxConnections: number,
    private readonly retry: RetryPolicy,
    /**
     * Where prepared statements outside a transaction go instead of the pool (see
     * PipelinedConnection): reads on one connection, writes on another, so that no read waits
     * behind a write's commit (a flush to disk, or to the synchronous standby).
     */
    private readonly pipelines: { readonly reads: PipelinedConnection; readonly writes: PipelinedConnection },
  ) {}

  query<T>(sql: Sql, params: readonly unknown[] = []): Promise<QueryResult<T>> {
    return this.retrying(() => this.attemptQuery<T>(sql, params));
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.retrying(() => this.attemptTransaction(work, options));
  }

  /**
   * Runs `attempt` again while it fails in a way {@link safeToRetry} allows, with a growing pause,
   * for up to the retry window: a failover or a switchover behind the balancer (connections
   * refused, ended, or landing on the demoted primary) costs the caller a wait instead of an error.
   */
  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.retry.windowMs;
    let delay = 50;
    for (let attempts = 1; ; attempts++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof RetryableFailure)) throw error;
        // Out of time: unavailable (503), whether the server was gone or took only reads.
        if (Date.now() + delay > deadline) throw new DatabaseUnavailableError(error.cause);
        this.retry.onRetry?.(error.cause, attempts);
        await pause(delay);
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }

  private async attemptQuery<T>(sql: Sql, params: readonly unknown[]): Promise<QueryResult<T>> {
    if (typeof sql !== 'string') return this.attemptPipelined<T>(sql, params);
    const client = await this.pool.connect().catch((error: unknown) => {
      throw isUnavailable(error) ? new RetryableFailure(error) : error;
    });
    let broken: unknown;
    const onError = (error: unknown) => {
      broken = error;
    };
    client.on('error', onError);
    const commit = watchCommit(client);
    const rows: T[] = [];
    try {
      return await runStatement<T>(client, sql, params, rows);
    } catch (error) {
      // A connection to a standby is dropped too: the next one goes to the new primary.
      if (isUnavailable(error) || sqlState(error) === READ_ONLY_TRANSACTION) broken ??= error;
      // Committed, and RETURNING sent every row it touched before the commit: that is the answer.
      if (commit.committedLocally && RETURNING.test(textOf(sql))) return { rows, rowCount: rows.length };
      if (safeToRetry(error, !neverSent(error), onlyReads(sql))) throw new RetryableFailure(error);
      return classify(error);
    } finally {
      commit.stop();
      releaseClient(client, onError, broken);
    }
  }

  /**
   * A prepared statement on its pipelined connection. A failure is judged as on a pool connection
   * (see {@link safeToRetry}): a read runs again, a write only when it certainly did not commit;
   * one whose commit the connection did not live to confirm is answered unavailable (503), and the
   * client's retry meets the business key.
   */
  private async attemptPipelined<T>(sql: PreparedStatement, params: readonly unknown[]): Promise<QueryResult<T>> {
    const reads = onlyReads(sql);
    const pipeline = reads ? this.pipelines.reads : this.pipelines.writes;
    const session = await pipeline.connection().catch((error: unknown) => {
      throw isUnavailable(error) ? new RetryableFailure(error) : error;
    });
    try {
      // The reads connection's session makes every plan safe (CACHED_INDEX_PLANS).
      const result = await pipeline.query<T & pg.QueryResultRow>(session, pgQuery(sql, params, reads));
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    } catch (failure) {
      // Committed, and RETURNING sent every row it touched before the commit: that is the answer.
      if (failure instanceof CommittedLocally && RETURNING.test(sql.text))
        return { rows: failure.rows as T[], rowCount: failure.rows.length };
      const error = failure instanceof CommittedLocally ? failure.cause : failure;
      if (error instanceof NeverRan) throw new RetryableFailure(error.cause);
      if (safeToRetry(error, true, reads)) throw new RetryableFailure(error);
      return classify(error);
    }
  }

  private async attemptTransaction<T>(
    work: (tx: Queryable) => Promise<T>,
    { nonce, keepsNonce = isRefusal }: TransactionOptions,
  ): Promise<T> {
    const client = await this.pool.connect().catch((error: unknown) => {
      throw isUnavailable(error) ? new RetryableFailure(error) : error;
    });
    // A checked-out client that loses its connection emits 'error' with nobody listening (the
    // pool listens only to idle clients): without this, one terminated backend ends the process.
    let broken: unknown;
    const onError = (error: unknown) => {
      broken = error;
    };
    client.on('error', onError);
    const commit = watchCommit(client);
    let committing = false;
    let value: T | undefined;
    /** The business's refusal, thrown once the nonce has committed. */
    let refusal: { readonly error: unknown } | undefined;
    const recording = nonce?.pending ? nonce : undefined;
    try {
      if (recording) {
        // One round trip: BEGIN, the nonce, the savepoint a business refusal rolls back to.
        const opened = (await client.query(
          `BEGIN; ${recording.recording.literal(recording)}; SAVEPOINT ${BUSINESS_SAVEPOINT}`,
        )) as unknown as pg.QueryResult[];
        if (opened[1]?.rowCount !== 1) {
          recording.decided(false);
          throw new NonceRefused();
        }
      } else {
        await client.query('BEGIN');
      }
      const tx: Queryable = {
        query: <R>(sql: Sql, params: readonly unknown[] = []) => runStatement<R>(client, sql, params, []),
      };
      try {
        value = await work(tx);
      } catch (error) {
        if (!recording || broken !== undefined || isUnavailable(error) || !keepsNonce(error)) throw error;
        await client.query(`ROLLBACK TO SAVEPOINT ${BUSINESS_SAVEPOINT}`);
        refusal = { error };
      }
      // If the connection failed while the work ran (say, the server ended the session while it
      // sat idle in the transaction), pg refuses the COMMIT unsent (see neverSent, below).
      committing = true;
      await client.query('COMMIT');
      recording?.decided(true);
    } catch (error) {
      if (broken === undefined && !isUnavailable(error)) await client.query('ROLLBACK').catch(() => {});
      else broken ??= error;
      if (sqlState(error) === READ_ONLY_TRANSACTION) broken ??= error;
      if (committing && commit.committedLocally) {
        recording?.decided(true);
        if (refusal) throw refusal.error;
        return value as T;
      }
      if (safeToRetry(error, committing && !neverSent(error), false)) throw new RetryableFailure(error);
      return classify(error);
    } finally {
      commit.stop();
      releaseClient(client, onError, broken);
    }
    if (refusal) throw refusal.error;
    return value as T;
  }

  async acceptsWrites(): Promise<boolean> {
    // A standby (pg_is_in_recovery) is read-only too: one setting answers both.
    const result = await this.pool
      .query<{ ro: string }>('SELECT current_setting($1) AS ro', ['transaction_read_only'])
      .catch(classify);
    return result.rows[0]?.ro === 'off';
  }

  embeddedMemoryBytes(): undefined {
    return undefined;
  }

  embeddedDump(): undefined {
    return undefined;
  }

  poolStats(): PoolStats {
    return {
      total: this.pool.totalCount,
      idle: this.pool.idleCount,
      waiting: this.pool.waitingCount,
      max: this.maxConnections,
      pipelined: {
        reads: this.pipelines.reads.statementsInFlight,
        writes: this.pipelines.writes.statementsInFlight,
      },
    };
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql).catch(classify);
  }

  async close(): Promise<void> {
    await Promise.all([this.pipelines.reads.close(), this.pipelines.writes.close()]);
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

/**
 * A parameter as PostgreSQL's text format has it (what `pg` sends): binary data travels as a
 * binary parameter, dates as ISO 8601, arrays as array literals, other objects as JSON.
 */
function textParam(value: unknown): string | Uint8Array | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return String(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayLiteral(value);
  return JSON.stringify(value);
}

function arrayLiteral(values: readonly unknown[]): string {
  const items = values.map((item) => {
    if (item === null || item === undefined) return 'NULL';
    if (Array.isArray(item)) return arrayLiteral(item);
    const text = ArrayBuffer.isView(item)
      ? `\\x${Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('hex')}`
      : (textParam(item) as string);
    return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${items.join(',')}}`;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const { serialize } = protocol;
const BIND_TAIL = concat([serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]);
const STATEMENT_TAIL = concat([serialize.describe({ type: 'P' }), serialize.execute({})]);
const SYNC = serialize.sync();

/**
 * Keeps the embedded database's calls from WebAssembly into JavaScript on V8's generic wrapper.
 * V8 compiles a wrapper of its own for an import after `--wasm-wrapper-tiering-budget` calls
 * (1,000), and in Node 24.22.3 (V8 13.6) that tier-up has killed processes that open and close
 * embedded databases: a fatal check in freeing a replaced wrapper (`Runtime_TierUpWasmToJSWrapper`
 * → `WasmImportWrapperCache::Free`, SIGTRAP) and a thread blocked for good on a freed module's
 * mutex (`→ WasmEngine::FreeDeadCode → NativeModule::FreeCode`). With the budget at its maximum
 * the runtime function never runs: an import is called about 2 × 10⁹ times before it tiers up
 * (PGlite calls its busiest, the clock, ten times per statement). The generic wrapper's cost was
 * within the noise of 6,000 statements. The flag is read when a module is instantiated, so it is
 * set before each instance opens (the process's flag; setting it again changes nothing).
 */
function keepGenericWasmWrappers(): void {
  if (v8Knows('--wasm-wrapper-tiering-budget')) setFlagsFromString('--wasm-wrapper-tiering-budget=2147483647');
}

let v8Flags: string | undefined;

/**
 * Whether this process's V8 has the flag `name`. V8 prints `Error: unrecognized flag` to stderr
 * for a flag it lacks (Node 20's V8 11.3 has no wrapper tier-up, hence no budget), and nothing
 * in the process can tell, so the list comes once from `node --v8-options` of this very binary.
 */
function v8Knows(name: string): boolean {
  if (v8Flags === undefined) {
    const listed = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8', env: {} });
    v8Flags = listed.status === 0 ? listed.stdout : '';
  }
  return v8Flags.split('\n').some((line) => line.trimStart().startsWith(`${name} `));
}

/** PGlite with its memory in sight: the size of the WebAssembly memory its PostgreSQL runs in. */
class EmbeddedPostgres extends PGlite {
  memoryBytes(): number | undefined {
    return this.mod?.wasmMemory.buffer.byteLength;
  }
}

/**
 * The embedded database writes its WAL in the server's own thread, and PostgreSQL's default fills
 * each new 16 MB segment with zeroes before its first record: on 2026-12-06 the creates' batch that
 * crossed into a new segment was the slowest of its row (the batches' p99.9 18–21 ms and their
 * longest 31–46 ms in three runs of the create row, against 10–10.5 and 20–21 ms without the fill).
 * With the fill off PostgreSQL writes the segment's last byte, so it has its size; what a commit
 * writes and when it is written do not change. Until the checkpoint at max_wal_size (there is no
 * checkpointer to recycle segments sooner), every segment is a new one.
 */
const NEW_WAL_SEGMENTS_UNFILLED = 'SET wal_init_zero = off';

/**
 * The embedded database's session with kept plans (see PgliteDb.run): every prepared statement
 * runs on its generic plan, made once and reused (KEPT_PLANS, the session's setting), and made as
 * index plans only: the first execution after each Parse runs between GUARDS_ON and GUARDS_OFF,
 * the same guards as PostgreSQL's pipelined reads connection (CACHED_INDEX_PLANS). Plain SQL with
 * parameters (parsed every time anyway) is planned for its parameters: it runs between CUSTOM_ON
 * and CUSTOM_OFF. Each switch is one statement (its settings at once, through set_config), parsed
 * once per session.
 */
const KEPT_PLANS = 'SET plan_cache_mode = force_generic_plan';
const SWITCHES = {
  guardsOn: {
    name: 'pglite_plan_guards_on',
    text: `SELECT set_config('enable_seqscan', 'off', false), set_config('enable_hashjoin', 'off', false),
                  set_config('enable_mergejoin', 'off', false)`,
  },
  guardsOff: {
    name: 'pglite_plan_guards_off',
    text: `SELECT set_config('enable_seqscan', 'on', false), set_config('enable_hashjoin', 'on', false),
                  set_config('enable_mergejoin', 'on', false)`,
  },
  customOn: {
    name: 'pglite_custom_plans_on',
    text: `SELECT set_config('plan_cache_mode', 'force_custom_plan', false)`,
  },
  customOff: {
    name: 'pglite_custom_plans_off',
    text: `SELECT set_config('plan_cache_mode', 'force_generic_plan', false)`,
  },
} as const;
const SWITCH_TAIL = concat([serialize.describe({ type: 'P' }), serialize.execute({})]);
/** A switch's Bind, Describe and Execute. */
const switchMessages = (name: string) => concat([serialize.bind({ statement: name, values: [] }), SWITCH_TAIL]);
const GUARDED = [switchMessages(SWITCHES.guardsOn.name), switchMessages(SWITCHES.guardsOff.name)] as const;
const CUSTOM = [switchMessages(SWITCHES.customOn.name), switchMessages(SWITCHES.customOff.name)] as const;

class PgliteDb implements Db {
  readonly kind = 'pglite';
  /** Named statements this session has parsed, and when (see {@link PreparedStatement}). */
  private readonly parsed = new Map<string, number>();
  /** Whether the SWITCHES are parsed (with the session's first statement). */
  private switchesParsed = false;

  constructor(
    private readonly pglite: EmbeddedPostgres,
    private readonly lock: DirectoryLock | undefined,
    /** Prepared statements on kept plans (KEPT_PLANS), parsed again this often; 0: planned on every call. */
    private readonly planRenewalMs: number,
  ) {}

  embeddedMemoryBytes(): number | undefined {
    return this.pglite.memoryBytes();
  }

  /**
   * One statement as one protocol exchange: Parse (a prepared statement only the first time),
   * Bind, Describe, Execute and Sync go to the embedded server together. PGlite's own `query`
   * sends each message separately, each a pass of its main loop, and parses the text again every
   * time: measured, a primary-key select costs about half as much this way and an insert a quarter.
   *
   * With kept plans (planRenewalMs > 0) a prepared statement is planned once per Parse, not per
   * call (planning had been most of these statements' cost; the prepared() contract keeps them to
   * index probes and batch inserts): the session keeps generic plans, and the first execution after
   * a Parse, which makes the plan, runs between the guards' two switches, so that the plan is of
   * indexes only. A statement is parsed again after planRenewalMs, so that a plan made while a table
   * was nearly empty (an index of the wrong columns), or made again without the guards after the
   * table's statistics changed (a vacuum), lasts that long at most, as on PostgreSQL's reads
   * connection. Plain SQL with parameters runs between the custom plans' switches. A switch, the
   * statement and the switch back go before one Sync: when the statement fails the switch back is
   * skipped, and the abort of its implicit transaction (or, inside a transaction, the rollback)
   * takes the first switch back with it, as it does a SET.
   */
  private async run<T>(sql: Sql, params: readonly unknown[]): Promise<QueryResult<T>> {
    const name = typeof sql === 'string' ? '' : sql.name;
    const keep = this.planRenewalMs > 0;
    const parts: Uint8Array[] = [];
    const now = Date.now();
    if (keep && !this.switchesParsed) {
      for (const helper of Object.values(SWITCHES)) {
        parts.push(serialize.close({ type: 'S', name: helper.name }), serialize.parse(helper));
      }
    }
    const parsedAt = name === '' ? undefined : this.parsed.get(name);
    const fresh = name !== '' && (parsedAt === undefined || (keep && now - parsedAt >= this.planRenewalMs));
    // Close first: a Parse whose exchange failed may or may not have left the statement behind.
    if (name === '' || fresh) {
      if (name !== '') parts.push(serialize.close({ type: 'S', name }));
      parts.push(serialize.parse({ name, text: textOf(sql) }));
    }
    const around = !keep
      ? undefined
      : name === ''
        ? params.length > 0
          ? CUSTOM
          : undefined
        : fresh
          ? GUARDED
          : undefined;
    // The plan is chosen at Bind: the switch goes first.
    if (around) parts.push(around[0]);
    parts.push(serialize.bind({ statement: name, values: params.map(textParam) }));
    if (around) parts.push(STATEMENT_TAIL, around[1], SYNC);
    else parts.push(BIND_TAIL);
    // The backend's bytes as they come (see readResults), copied out of the WebAssembly memory.
    const answer: Buffer[] = [];
    try {
      await this.pglite.execProtocolRawStream(concat(parts), {
        syncToFs: false,
        onRawData: (chunk) => answer.push(Buffer.from(chunk)),
      });
    } finally {
      // Parsed whether or not the statement after them failed (a Parse is not undone by an abort).
      if (keep) this.switchesParsed = true;
    }
    const { results, error } = readResults<T>(
      answer.length === 1 ? (answer[0] as Buffer) : Buffer.concat(answer),
      this.pglite.parsers,
    );
    if (error) throw error;
    if (fresh) this.parsed.set(name, now);
    // With a switch, the statement's result is the second (the first switch's is first).
    const result = around ? results[1] : results[0];
    const rows = result?.rows ?? [];
    return { rows, rowCount: result?.affectedRows ?? rows.length };
  }

  async query<T>(sql: Sql, params: readonly unknown[] = []): Promise<QueryResult<T>> {
    // The same locks PGlite's own query takes: no statement runs inside another caller's transaction.
    return this.pglite._runExclusiveTransaction(() =>
      this.pglite._runExclusiveQuery(async () => {
        const result = await this.run<T>(sql, params);
        await this.pglite.syncToFs();
        return result;
      }),
    );
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const { keepsNonce = isRefusal } = options;
    const recording = options.nonce?.pending ? options.nonce : undefined;
    let refusal: { readonly error: unknown } | undefined;
    // PGlite is one session: its transaction() holds the session exclusively until done.
    const value = await this.pglite.transaction(async () => {
      const tx: Queryable = {
        query: <R>(sql: Sql, params: readonly unknown[] = []) =>
          this.pglite._runExclusiveQuery(() => this.run<R>(sql, params)),
      };
      if (recording) {
        const { statement, params } = recording.recording;
        if ((await tx.query(statement, params(recording))).rows.length !== 1) {
          recording.decided(false);
          throw new NonceRefused();
        }
        await tx.query(`SAVEPOINT ${BUSINESS_SAVEPOINT}`);
      }
      try {
        return await work(tx);
      } catch (error) {
        if (!recording || !keepsNonce(error)) throw error;
        await tx.query(`ROLLBACK TO SAVEPOINT ${BUSINESS_SAVEPOINT}`);
        refusal = { error };
        return undefined;
      }
    });
    recording?.decided(true);
    if (refusal) throw refusal.error;
    return value as T;
  }

  async exec(sql: string): Promise<void> {
    await this.pglite.exec(sql);
  }

  async close(): Promise<void> {
    try {
      await this.pglite.close();
    } finally {
      this.lock?.release();
    }
  }

  poolStats(): undefined {
    return undefined;
  }

  async acceptsWrites(): Promise<boolean> {
    return true;
  }

  /**
   * The data directory as a tar archive, taken between transactions: PGlite's dump holds the
   * statement lock, and taking the transaction lock first means no transaction is half done in
   * it. What it holds is every transaction committed before it, as a restarted PostgreSQL sees
   * it (the WAL is in it too).
   */
  embeddedDump(compression: 'none' | 'gzip' = 'none'): Promise<Blob> {
    return this.pglite._runExclusiveTransaction(() => this.pglite.dumpDataDir(compression) as Promise<Blob>);
  }
}

/** How the platform talks to PostgreSQL; the defaults suit a server on the same network. */
export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Milliseconds to wait for a new connection before failing (default 5 s). */
  connectTimeoutMs?: number;
  /** Milliseconds a statement may run before the server cancels it (default 30 s; 0: none). */
  statementTimeoutMs?: number;
  /**
   * Told about connections that failed while idle in the pool (the pool drops and replaces them).
   * Without a listener such an error would end the process.
   */
  onConnectionError?: (error: Error) => void;
  /**
   * How long a statement or transaction that failed without committing anything (see
   * {@link safeToRetry}) is tried again before its error reaches the caller (default 15 s; 0:
   * never). It covers a primary failover behind the balancer.
   */
  retryWindowMs?: number;
  /** Told about each retry (the error and how many attempts failed so far). */
  onRetry?: (error: unknown, attempts: number) => void;
  /** PostgreSQL only: how often the pipelined reads connection renews its plans (default PLAN_RENEWAL_MS). */
  planRenewalMs?: number;
  /**
   * The embedded database only: how often its named statements' kept plans are made again (see
   * PgliteDb.run; default PLAN_RENEWAL_MS); 0 plans them on every call instead, as before.
   */
  embeddedPlanRenewalMs?: number;
  /** The embedded database only: start from this data directory dump (see {@link dumpEmbedded}). */
  loadDataDir?: Blob;
  /**
   * The embedded database only: the data directory's lock when the caller took it already (see
   * {@link lockEmbedded}); otherwise `openDatabase` takes it, as `owner`. The database keeps it
   * until it is closed.
   */
  lock?: DirectoryLock | undefined;
  /** Who opens the embedded database, as a second opener is told (default "paygate"). */
  owner?: string;
}

/**
 * Takes the lock of the embedded database's data directory, or throws `DirectoryInUseError`
 * naming the directory and the owner's pid: two processes writing one PGlite directory lose each
 * other's commits (each keeps its own copy of the database in memory and writes it back). The
 * operating system releases the lock when its process dies, so a crash never blocks the next
 * start. PostgreSQL and `memory://` need no lock: undefined.
 */
export function lockEmbedded(options: Pick<DatabaseOptions, 'databaseUrl' | 'dataDir'>, owner: string) {
  if (options.databaseUrl || options.dataDir === 'memory://') return undefined;
  return lockDirectory(options.dataDir, owner);
}

interface RetryPolicy {
  readonly windowMs: number;
  readonly onRetry?: ((error: unknown, attempts: number) => void) | undefined;
}

/** Opens PostgreSQL at `databaseUrl`, or the embedded database under `dataDir` (`memory://` for none). */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  if (options.databaseUrl) {
    const max = options.poolSize ?? 20;
    const statementTimeout = options.statementTimeoutMs ?? 30_000;
    const settings = {
      connectionString: options.databaseUrl,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      // The server cancels a statement running too long; the client gives up a little later on a
      // server that stopped answering altogether (a half-open socket after a network failure).
      ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, query_timeout: statementTimeout + 5_000 } : {}),
      keepAlive: true,
      types: { getTypeParser: typeParser },
    };
    const pool = new pg.Pool({ ...settings, max });
    // An idle connection that breaks (terminated backend, failover, a pooler's idle timeout)
    // makes the pool emit 'error'; the pool has already dropped it and opens a new one on demand.
    pool.on('error', (error) => options.onConnectionError?.(error));
    // Every connection also keeps a listener of its own from the start: a server's FATAL can reach a
    // client in a moment no one else listens (between the pool's hands and a caller's), and an
    // 'error' event nobody listens to ends the process. A query on it still fails and is handled.
    pool.on('connect', (client) => client.on('error', () => {}));
    // A connection to a standby (a demoted primary) or one the server ended is replaced: the next
    // one goes to the new primary.
    const pipeline = (sessionSettings: readonly string[] = [], upkeep?: Upkeep) =>
      new PipelinedConnection(
        () => new pg.Client({ ...settings, pipeline: true }),
        (error) => sqlState(error) === READ_ONLY_TRANSACTION || severityOf(error) === 'FATAL',
        sessionSettings,
        upkeep,
      );
    const db = new PostgresDb(
      pool,
      max,
      { windowMs: options.retryWindowMs ?? 15_000, onRetry: options.onRetry },
      // The reads connection plans each statement once, as index probes only, and plans again
      // every so often (see CACHED_INDEX_PLANS).
      {
        reads: pipeline(CACHED_INDEX_PLANS, {
          statement: 'DISCARD PLANS',
          everyMs: options.planRenewalMs ?? PLAN_RENEWAL_MS,
        }),
        writes: pipeline(),
      },
    );
    try {
      await pool.query('SELECT 1').catch(classify);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return db;
  }
  const lock = options.lock ?? lockEmbedded(options, options.owner ?? 'paygate');
  try {
    const location = options.dataDir === 'memory://' ? undefined : `${options.dataDir}/pgdata`;
    if (location) mkdirSync(location, { recursive: true });
    keepGenericWasmWrappers();
    const pglite = new EmbeddedPostgres({
      ...(location ? { dataDir: location } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      parsers: { 20: parseInt8 },
    });
    await pglite.waitReady;
    // The embedded database has no autovacuum, so nothing ever invalidates a cached plan: a
    // generic plan chosen while a table was nearly empty (a scan of the merchant's orders instead
    // of the order-number index) would stay for good. So its prepared statements keep generic plans
    // made as index plans only and renewed (see PgliteDb.run), or, with embeddedPlanRenewalMs 0,
    // are planned for their actual parameters each time.
    const planRenewalMs = options.embeddedPlanRenewalMs ?? PLAN_RENEWAL_MS;
    await pglite.exec(`${NEW_WAL_SEGMENTS_UNFILLED}; ${planRenewalMs > 0 ? KEPT_PLANS : PLAN_FOR_PARAMETERS}`);
    return new PgliteDb(pglite, lock, planRenewalMs);
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/**
 * A dump of an embedded database's data directory, which `openDatabase({ loadDataDir })` starts
 * from: how tests migrate once and clone per platform instead of migrating every time.
 */
export async function dumpEmbedded(db: Db, compression: 'none' | 'gzip' = 'none'): Promise<Blob> {
  const dump = db.embeddedDump(compression);
  if (!dump) throw new Error('only the embedded database can be dumped');
  return dump;
}

/** SQLSTATE of a database error, for branching on the database's own codes. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string')
    return error.code;
  return undefined;
}

/** SQLSTATE 23505: a unique constraint refused the row. */
export const UNIQUE_VIOLATION = '23505';
