/**
 * Prepared statements outside a transaction go to PostgreSQL over pipelined connections
 * (db/pipeline.ts), one for reads and one for writes, instead of a pool connection each: one
 * backend answers each kind in order, and no read waits behind a write's commit. Each statement
 * still fails alone, and a connection the server ends is replaced, with every statement it had
 * not run yet run again, reads and writes alike.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { type Db, openDatabase, prepared } from '../src/db/db.js';
import { CommittedLocally, NeverRan, PipelinedConnection } from '../src/db/pipeline.js';
import { freshPostgres } from './harness.js';

const PG = process.env.TEST_DATABASE_URL;

const PID = prepared('pipeline_probe_pid', 'SELECT pg_backend_pid() AS pid');
const SLOW = prepared('pipeline_probe_slow', 'SELECT pg_sleep($1::float8) AS slept, pg_backend_pid() AS pid');
const INT = prepared('pipeline_probe_int', 'SELECT $1::int AS n');
const SLOW_INSERT = prepared(
  'pipeline_probe_slow_insert',
  'INSERT INTO pipeline_probe (id) SELECT $1 FROM pg_sleep($2::float8) ON CONFLICT DO NOTHING RETURNING id',
);
const WRITER_PID = prepared(
  'pipeline_probe_writer_pid',
  `INSERT INTO pipeline_probe (id) VALUES ('pid-' || pg_backend_pid() || '-' || $1)
   ON CONFLICT DO NOTHING RETURNING pg_backend_pid() AS pid`,
);
const INSERT = prepared(
  'pipeline_probe_insert',
  'INSERT INTO pipeline_probe (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id',
);
/** Makes the writers' session read-only (a write, by the insert, so it goes on their connection). */
const READ_ONLY_WRITER = prepared(
  'pipeline_probe_read_only',
  `INSERT INTO pipeline_probe (id) SELECT 'read-only-' || set_config('default_transaction_read_only', 'on', false)
   ON CONFLICT DO NOTHING`,
);

const pidOf = async (db: Db) => (await db.query<{ pid: number }>(PID)).rows[0]?.pid;
let writes = 0;
const writerPidOf = async (db: Db) =>
  (await db.query<{ pid: number }>(WRITER_PID, [String((writes += 1))])).rows[0]?.pid;

describe(
  'prepared statements share two pipelined connections, one for reads and one for writes',
  { skip: PG ? false : 'TEST_DATABASE_URL is not set' },
  () => {
    let database: { url: string; drop: () => Promise<void> };
    let db: Db;
    let admin: pg.Client;

    before(async () => {
      database = await freshPostgres();
      db = await openDatabase({ databaseUrl: database.url, dataDir: 'memory://', retryWindowMs: 5_000 });
      await db.exec('CREATE TABLE pipeline_probe (id text PRIMARY KEY)');
      admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
    });
    after(async () => {
      await admin.end();
      await db.close();
      await database.drop();
    });

    /** Waits until backend `pid` runs pg_sleep, then terminates it. */
    async function terminateWhileSleeping(pid: number): Promise<void> {
      for (let i = 0; i < 100; i++) {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE '%pg_sleep%'`,
          [pid],
        );
        if (rows[0]?.n === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    }

    it('statements asked for together are answered by one backend for reads and one for writes; a transaction keeps its own', async () => {
      const [readers, writers] = await Promise.all([
        Promise.all(Array.from({ length: 40 }, () => pidOf(db))),
        Promise.all(Array.from({ length: 40 }, () => writerPidOf(db))),
      ]);
      assert.equal(new Set(readers).size, 1, `read backends: ${[...new Set(readers)].join(', ')}`);
      assert.equal(new Set(writers).size, 1, `write backends: ${[...new Set(writers)].join(', ')}`);
      assert.notEqual(readers[0], writers[0]);
      const inTransaction = await db.transaction(async (tx) => (await tx.query<{ pid: number }>(PID)).rows[0]?.pid);
      assert.ok(inTransaction !== readers[0] && inTransaction !== writers[0]);
    });

    it('a read is not held up by a write that waits', async () => {
      const slow = db.query(SLOW_INSERT, ['waits', 1]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      await pidOf(db);
      const waited = Date.now() - started;
      // The metric paygate_db_pipelined_statements reads these.
      assert.deepEqual(db.poolStats()?.pipelined, { reads: 0, writes: 1 });
      await slow;
      assert.deepEqual(db.poolStats()?.pipelined, { reads: 0, writes: 0 });
      assert.ok(waited < 900, `the read waited ${waited} ms behind the write`);
    });

    it("one statement's error fails it alone; those around it are answered and the connection stays", async () => {
      const before = await pidOf(db);
      const answers = await Promise.allSettled([
        db.query<{ n: number }>(INT, ['1']),
        db.query<{ n: number }>(INT, ['not a number']),
        db.query<{ n: number }>(INT, ['3']),
      ]);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal((answers[2] as PromiseFulfilledResult<{ rows: { n: number }[] }>).value.rows[0]?.n, 3);
      assert.equal((answers[1] as PromiseRejectedResult).reason.code, '22P02');
      assert.equal(await pidOf(db), before);
    });

    it('a backend terminated mid-read: that read and every read behind it run again on a new one', async () => {
      const before = (await pidOf(db)) as number;
      const slow = db.query<{ pid: number }>(SLOW, [0.5]);
      // Written behind the sleeping statement, so not started when the server ends the connection.
      const reads = Array.from({ length: 5 }, () => pidOf(db));
      await terminateWhileSleeping(before);
      const after = (await slow).rows[0]?.pid;
      assert.ok(after !== undefined && after !== before, 'the sleeping read ran again on a new backend');
      for (const pid of await Promise.all(reads)) assert.equal(pid, after);
    });

    it('a backend terminated mid-write: that write and every write behind it run again, each once', async () => {
      const before = (await writerPidOf(db)) as number;
      const slow = db.query<{ id: string }>(SLOW_INSERT, ['slow-write', 0.5]);
      // Behind the sleeping insert: the server had not started them when it ended the connection.
      const writes = ['behind-1', 'behind-2'].map((id) => db.query<{ id: string }>(INSERT, [id]));
      await terminateWhileSleeping(before);
      // The FATAL means the insert it cut off was rolled back: it ran again and inserted its row.
      assert.deepEqual((await slow).rows, [{ id: 'slow-write' }]);
      assert.deepEqual(
        (await Promise.all(writes)).map((result) => result.rows.map((row) => row.id)),
        [['behind-1'], ['behind-2']],
      );
      const { rows } = await db.query<{ n: bigint }>(
        `SELECT count(*) AS n FROM pipeline_probe WHERE id IN ('slow-write', 'behind-1', 'behind-2')`,
      );
      assert.equal(rows[0]?.n, 3n);
      assert.notEqual(await writerPidOf(db), before);
    });

    it('a write refused as read-only (SQLSTATE 25006) runs again on a new connection that takes writes', async () => {
      const before = await writerPidOf(db);
      // What a demoted primary does to the connection: every transaction on it is read-only now.
      await db.query(READ_ONLY_WRITER);
      const inserted = await db.query<{ id: string }>(INSERT, ['after-read-only']);
      assert.deepEqual(inserted.rows, [{ id: 'after-read-only' }]);
      assert.notEqual(await writerPidOf(db), before);
    });
  },
);

/** One backend message: its type, then its length (itself included) and payload. */
function message(type: string, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(payload.length + 4, 1);
  return Buffer.concat([head, payload]);
}
const cstring = (text: string) => Buffer.from(`${text}\0`, 'utf8');
const readyForQuery = () => message('Z', Buffer.from('I'));
/** What the server answers a Parse, Bind, Describe (portal) and Execute of an INSERT without RETURNING. */
const insertAnswered = () =>
  Buffer.concat([message('1'), message('2'), message('n'), message('C', cstring('INSERT 0 1'))]);
/** The warning PostgreSQL sends when a shutdown ends a commit's wait for the synchronous standby. */
const cancelledSyncWarning = () =>
  message(
    'N',
    Buffer.concat([
      Buffer.from('S'),
      cstring('WARNING'),
      Buffer.from('V'),
      cstring('WARNING'),
      Buffer.from('C'),
      cstring('57P01'),
      Buffer.from('M'),
      cstring('canceling the wait for synchronous replication and terminating connection due to administrator command'),
      Buffer.from('D'),
      cstring('The transaction has already committed locally, but might not have been replicated to the standby.'),
      Buffer.from([0]),
    ]),
  );

/**
 * A PostgreSQL server on loopback that speaks just enough of the protocol for one pipelined
 * connection: it takes the startup, waits for `statements` Syncs, then writes `answer(...)` in a
 * single write and closes. What a real server does in a switchover, with the bytes arriving in
 * the one chunk a busy client reads.
 */
async function scriptedServer(statements: number, answer: Buffer): Promise<{ port: number; close(): void }> {
  const server = net.createServer((socket) => {
    let buffered = Buffer.alloc(0);
    let started = false;
    let syncs = 0;
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 4) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          buffered = buffered.subarray(length);
          started = true;
          socket.write(Buffer.concat([message('R', Buffer.from([0, 0, 0, 0])), readyForQuery()]));
          continue;
        }
        if (buffered.length < 5) return;
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        const type = String.fromCharCode(buffered[0] ?? 0);
        buffered = buffered.subarray(length + 1);
        if (type === 'S' && (syncs += 1) === statements) socket.end(answer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

describe('a pipelined connection the server ends in a switchover', () => {
  it("the warning of a commit cut short is the statement's running then, though the answer before it came in the same read", async () => {
    // A answered; B committed locally, its wait for the standby cancelled (the warning, then the
    // connection closes); C, behind B, never ran.
    const answer = Buffer.concat([insertAnswered(), readyForQuery(), insertAnswered(), cancelledSyncWarning()]);
    const server = await scriptedServer(3, answer);
    const connection = new PipelinedConnection(
      () => new pg.Client({ host: '127.0.0.1', port: server.port, user: 'probe', database: 'probe', pipeline: true }),
    );
    try {
      const session = await connection.connection();
      const insert = (id: string) =>
        connection.query(session, { text: 'INSERT INTO probe (id) VALUES ($1)', values: [id] });
      const [a, b, c] = await Promise.allSettled([insert('a'), insert('b'), insert('c')]);
      assert.equal(a.status, 'fulfilled');
      assert.equal(b.status, 'rejected');
      assert.ok(b.reason instanceof CommittedLocally, `B committed, not ${String(b.reason)}`);
      assert.equal(c.status, 'rejected');
      assert.ok(c.reason instanceof NeverRan, `C never ran, not ${String(c.reason)}`);
    } finally {
      await connection.close();
      server.close();
    }
  });
});
