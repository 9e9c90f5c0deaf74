import type { Writable } from 'node:stream';
import pg from 'pg';
import { CollectingQuery } from './pg-rows.js';

/**
 * A statement that was behind the one the server ended the connection on with a FATAL error (a
 * terminated backend, a shutdown): the server runs a pipeline's statements one at a time and had
 * not started this one, so it certainly changed nothing and may run again.
 */
export class NeverRan extends Error {
  constructor(override readonly cause: unknown) {
    super(`not run: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'NeverRan';
  }
}

/**
 * A write whose commit the server recorded although the connection ended before its answer: a
 * shutdown (a switchover) cancelled its wait for the synchronous standby, and said so in a
 * warning (see watchCommit in db.ts). `rows` holds what RETURNING sent before the commit.
 */
export class CommittedLocally extends Error {
  constructor(
    override readonly cause: unknown,
    readonly rows: readonly unknown[],
  ) {
    super(`committed locally: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'CommittedLocally';
  }
}

/** Whether `error` is the server ending the session (FATAL or PANIC): what it had not started, it never will. */
function endsSession(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.severity === 'FATAL' || error.severity === 'PANIC');
}

/**
 * Whether pg refused a statement without writing it, because the client's connection had already
 * failed or was closed ("Client has encountered a connection error and is not queryable"): it
 * never reached the server, so running it again is safe whatever it does.
 */
export function neverSent(error: unknown): boolean {
  return (
    error instanceof Error && !(error instanceof pg.DatabaseError) && error.message.endsWith('and is not queryable')
  );
}

/** A statement sent on a session and not yet answered. */
interface Sent {
  committedLocally: boolean;
}

/**
 * Whether `notice` is the warning of a commit whose wait for the synchronous standby a shutdown
 * cancelled ("The transaction has already committed locally"): the server then closes the
 * connection without answering, yet the commit is recorded.
 */
export function cancelledSyncWait(notice: { code?: string; message?: string }): boolean {
  return notice.code === '57P01' && notice.message?.includes('canceling the wait for synchronous replication') === true;
}

/** One opened connection and what is known of the statements sent on it. */
export interface PipelineSession {
  readonly client: pg.Client;
  /** Sent and not yet answered, in the order the server runs them: the first is the one running. */
  readonly sent: Sent[];
  /** The server ended it (a FATAL, or a shutdown's warning): the statements still queued never ran. */
  endedByServer: boolean;
  /** When the session last ran its upkeep (see {@link Upkeep}), or was opened. */
  keptAt: number;
}

/**
 * A statement a session runs every `everyMs` milliseconds of use, written before the first
 * statement asked for after that time: PostgreSQL's pipelined reads connection drops its cached
 * plans so (`DISCARD PLANS`), and plans each statement again for its tables as they are now.
 */
export interface Upkeep {
  readonly statement: string;
  readonly everyMs: number;
}

/**
 * One connection in PostgreSQL's pipeline mode for the hot paths' short statements (the prepared
 * statements outside transactions: the per-turn batches of nonces, creates and reads): each is
 * written as soon as it is asked for, without waiting for the ones before it to be answered, and
 * the statements asked for by one callback (a per-turn batch and the promise jobs it starts) leave
 * in one write: the socket is corked until the callback's jobs are done. The server answers them in
 * order, each in its own implicit transaction.
 *
 * Why one connection rather than the pool: a statement on a pool connection wakes a backend of
 * its own, and on a busy machine the wake-ups cost more than the statements. Measured with 15-key
 * lookups, 8 in flight: 177–207 µs of backend CPU per statement over a pool of 8, 43–77 µs over
 * one pipelined connection; the client's own CPU 208–286 → 169–189 µs. One backend answers tens
 * of thousands of such statements a second, more than one instance asks of it.
 *
 * Only statements that finish quickly belong here: a slow one holds up every statement written
 * behind it. A connection that fails or times out is dropped with every statement in flight on it
 * (their callers see the error and judge it as on any connection: db.ts retries what certainly
 * did not commit); the next statement opens a new one.
 */
export class PipelinedConnection {
  private current: { readonly session: PipelineSession; readonly ready: Promise<PipelineSession> } | undefined;
  /** The socket corked by the running callback, if any. */
  private corked: Writable | undefined;
  private closed = false;
  private inFlight = 0;

  constructor(
    private readonly open: () => pg.Client,
    /** Whether a statement's error, although the server's answer, means the connection must go. */
    private readonly mustReconnect: (error: unknown) => boolean = () => false,
    /** Session settings each new connection takes before its first statement (`SET …`). */
    private readonly settings: readonly string[] = [],
    private readonly upkeep?: Upkeep,
  ) {}

  /**
   * The session, opened if there is none: a failure here sent nothing. Pass it to `query` in the
   * same callback.
   */
  connection(): Promise<PipelineSession> {
    if (this.closed) return Promise.reject(new Error('Cannot use a pool after calling end'));
    this.current ??= this.connect();
    return this.current.ready;
  }

  /** Statements sent and not yet answered (a metric: a backlog here is latency). */
  get statementsInFlight(): number {
    return this.inFlight;
  }

  /** Sends one statement on `session` (from `connection`) and waits for its answer. */
  async query<T extends pg.QueryResultRow>(
    session: PipelineSession,
    config: pg.QueryConfig,
  ): Promise<pg.QueryResult<T>> {
    this.cork(session.client);
    if (this.upkeep && Date.now() - session.keptAt >= this.upkeep.everyMs) {
      session.keptAt = Date.now();
      // In the same write, ahead of the statement. Its answer is not awaited: a failed connection
      // fails the statement behind it too.
      this.query(session, { name: 'pipeline_upkeep', text: this.upkeep.statement }).catch(() => {});
    }
    this.inFlight += 1;
    const entry: Sent = { committedLocally: false };
    session.sent.push(entry);
    // Off the list the moment pg hands over its answer, in the same pass over the socket's bytes:
    // the server's next message may be the warning of the statement behind it (see connect()),
    // read from the same chunk before any promise job of this one runs.
    const answered = () => {
      const at = session.sent.indexOf(entry);
      if (at !== -1) session.sent.splice(at, 1);
    };
    const rows: T[] = [];
    try {
      return await new Promise<pg.QueryResult<T>>((resolve, reject) => {
        // Rows collected as they arrive: a write whose commit the connection did not live to
        // confirm still has them (see CommittedLocally).
        const query = new CollectingQuery<T>(config, rows, (error, result) => {
          answered();
          // The server's FATAL reaches the statement running, before those behind it fail when
          // the socket closes.
          if (endsSession(error)) session.endedByServer = true;
          if (error) reject(error);
          else resolve({ ...result, rows });
        });
        session.client.query(query);
      });
    } catch (error) {
      if (entry.committedLocally) {
        this.drop(session.client);
        throw new CommittedLocally(error, rows);
      }
      if (error instanceof pg.DatabaseError) {
        if (this.mustReconnect(error)) this.drop(session.client);
      } else {
        // Anything but the server's answer means the connection failed (or a read timed out,
        // after which pg destroys the socket): the next statement needs a new one.
        this.drop(session.client);
        if (session.endedByServer || neverSent(error)) throw new NeverRan(error);
      }
      throw error;
    } finally {
      this.inFlight -= 1;
      answered();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.current?.session.client;
    this.current = undefined;
    await client?.end().catch(() => {});
  }

  /**
   * Holds the socket's writes until the running callback and its promise jobs are done, so that
   * they leave together. Not until the next pass of the event loop: that pass first reads and
   * verifies every request that arrived meanwhile (a few milliseconds under load), with the
   * database idle for want of the statements waiting here.
   */
  private cork(client: pg.Client): void {
    const stream = (client as unknown as { connection: { stream: Writable } }).connection.stream;
    if (this.corked === stream) return;
    this.corked = stream;
    stream.cork();
    process.nextTick(() => {
      this.corked = undefined;
      stream.uncork();
    });
  }

  private connect(): { readonly session: PipelineSession; readonly ready: Promise<PipelineSession> } {
    const client = this.open();
    const session: PipelineSession = { client, sent: [], endedByServer: false, keptAt: Date.now() };
    // An error or end of the connection, in flight or idle, drops it; without a listener an
    // 'error' event would end the process. A FATAL that reaches no statement came while the
    // server ran none: it ran nothing sent after it either.
    client.on('error', (error) => {
      if (endsSession(error)) session.endedByServer = true;
      this.drop(client);
    });
    client.on('end', () => this.drop(client));
    // The statement running committed although no answer will come; those behind it never ran.
    client.on('notice', (notice: { code?: string; message?: string }) => {
      if (!cancelledSyncWait(notice)) return;
      const running = session.sent[0];
      if (running) running.committedLocally = true;
      session.endedByServer = true;
    });
    const ready = client
      .connect()
      .then(async () => {
        for (const setting of this.settings) await client.query(setting);
      })
      .then(
        () => session,
        (error: unknown) => {
          this.drop(client);
          throw error;
        },
      );
    return { session, ready };
  }

  private drop(client: pg.Client): void {
    if (this.current?.session.client === client) this.current = undefined;
    client.end().catch(() => {});
  }
}
