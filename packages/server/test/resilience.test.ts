/**
 * Surviving the database and stopping gracefully (issue 16, items 1 and 2): a connection lost at
 * any moment is replaced, never a crash; a request caught mid-statement gets a clean 503; an
 * unreachable database fails fast; `/readyz` tells the truth; SIGTERM drains before it closes;
 * the schema is checked before an instance starts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { parseConfig } from '../src/config.js';
import { type Db, DatabaseUnavailableError, isUnavailable, openDatabase } from '../src/db/db.js';
import { ensureSchema, knownMigrations, migrate, SchemaError, schemaStatus } from '../src/db/migrate.js';
import { startPlatform } from '../src/platform.js';
import {
  count,
  createMerchant,
  get,
  paymentInput,
  post,
  startTestPlatform,
  TEST_MASTER_KEY,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';

const PG = process.env.TEST_DATABASE_URL;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const databaseName = (url: string) => new URL(url).pathname.slice(1);

/** Runs `sql` on the PostgreSQL server as an administrator (outside the platform's pool). */
async function admin<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: PG });
  await client.connect();
  try {
    return await client.query<T>(sql, params);
  } finally {
    await client.end();
  }
}

/** Terminates every backend of `database` except the caller's: what a failover does to a pool. */
async function terminateBackends(database: string): Promise<number> {
  const result = await admin<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [database],
  );
  return result.rows[0]?.n ?? 0;
}

/** Sessions of `database` sleeping in pg_sleep (a statement under way). */
async function sessionsSleeping(database: string): Promise<number> {
  const result = await admin<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
    [database],
  );
  return result.rows[0]?.n ?? 0;
}

/** Polls `check` until it holds (bounded: 20 s). */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error('the condition did not hold within 20 s');
}

/** The table the transaction retry tests write to. */
const createProbeTable = (db: Db) => db.exec('CREATE TABLE IF NOT EXISTS retry_probe (id text PRIMARY KEY)');

/** Rows of retry_probe with `id`: 1 when a retried transaction committed once. */
async function probeRows(db: Db, id: string): Promise<bigint | undefined> {
  const { rows } = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM retry_probe WHERE id = $1', [id]);
  return rows[0]?.n;
}

/** A TCP port with nothing listening on it (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('database failures are classified, not fatal', () => {
  it('an unreachable server fails fast as DatabaseUnavailableError', async () => {
    const port = await closedPort();
    const started = Date.now();
    await assert.rejects(
      openDatabase({
        databaseUrl: `postgres://postgres@127.0.0.1:${port}/none`,
        dataDir: 'memory://',
        connectTimeoutMs: 500,
      }),
      (error: unknown) => error instanceof DatabaseUnavailableError,
    );
    assert.ok(Date.now() - started < 4_000, 'refused connections are not retried for long');
  });

  it('connection errors are unavailable; statement errors are not', () => {
    assert.ok(isUnavailable(Object.assign(new Error('terminating connection'), { code: '57P01' })));
    assert.ok(isUnavailable(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })));
    assert.ok(isUnavailable(new Error('Connection terminated unexpectedly')));
    assert.ok(isUnavailable(new Error('timeout exceeded when trying to connect')));
    assert.ok(
      isUnavailable(Object.assign(new Error('not accepting connections'), { code: '55000', severity: 'FATAL' })),
    );
    assert.ok(!isUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })));
    assert.ok(!isUnavailable(Object.assign(new Error('syntax'), { code: '42601' })));
    assert.ok(!isUnavailable(new Error('anything else')));
  });
});

describe('the schema is checked before an instance starts', () => {
  it('refuses a schema newer than this build, with migrations on or off', async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      await migrate(db);
      await db.query(`INSERT INTO schema_migrations (name) VALUES ('9999_from_the_future.sql')`);
      for (const migrateToo of [true, false]) {
        await assert.rejects(ensureSchema(db, { migrate: migrateToo, waitMs: 0 }), (error: unknown) => {
          assert.ok(error instanceof SchemaError);
          assert.match(error.message, /newer than this build.*9999_from_the_future\.sql/);
          return true;
        });
      }
    } finally {
      await db.close();
    }
  });

  it('without auto-migration an instance waits for `paygate migrate`, then starts', async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      await assert.rejects(ensureSchema(db, { migrate: false, waitMs: 0 }), /run `npx paygate migrate`/);
      const waits: string[][] = [];
      const waiting = ensureSchema(db, { migrate: false, waitMs: 10_000, pollMs: 20, onWait: (p) => waits.push(p) });
      await sleep(100);
      await migrate(db);
      assert.deepEqual(await waiting, []);
      assert.ok(waits.length > 0, 'it waited');
      assert.deepEqual(waits[0], knownMigrations());
      assert.deepEqual(await schemaStatus(db), { pending: [], unknown: [] });
    } finally {
      await db.close();
    }
  });

  it('`npx paygate migrate` applies the migrations and says so', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-migrate-'));
    const run = () => runCli(['migrate', '--json'], { PAYGATE_DATA_DIR: dataDir });
    const first = await run();
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { applied: knownMigrations(), pending: [] });
    const second = await run();
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(JSON.parse(second.stdout), { applied: [], pending: [] });
  });
});

describe('the port is bound atomically', () => {
  it('port 0 gives each of several platforms started together its own port, carried by its links', async () => {
    const platforms = await Promise.all([1, 2, 3, 4].map(() => startTestPlatform()));
    try {
      const ports = platforms.map((platform) => Number(new URL(platform.url).port));
      assert.equal(new Set(ports).size, ports.length);
      for (const [index, platform] of platforms.entries()) {
        assert.equal(platform.config.port, ports[index]);
        assert.equal(new URL(platform.config.publicUrl).port, String(ports[index]));
      }
    } finally {
      await Promise.all(platforms.map((platform) => platform.close()));
    }
  });

  it('a port in use fails the start cleanly', async () => {
    const first = await startTestPlatform();
    try {
      const config = parseConfig(
        { LOG_LEVEL: 'silent', PAYGATE_WORKERS: 'false' },
        {
          dataDir: 'memory://',
          port: first.config.port,
          masterKey: TEST_MASTER_KEY.toString('base64'),
        },
      );
      await assert.rejects(startPlatform(config, { masterKey: TEST_MASTER_KEY, logger: false }), /EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});

describe('draining (PGlite)', () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform);
  });
  after(() => platform.close());

  it('fails /readyz at once, keeps serving during the drain, then closes the port', async () => {
    assert.equal((await fetch(`${platform.url}/readyz`)).status, 200);
    const stopping = platform.shutdown({ drainMs: 400, timeoutMs: 5_000 });
    const ready = await fetch(`${platform.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { msg: string }).msg, 'NOT_READY');
    assert.equal((await fetch(`${platform.url}/healthz`)).status, 200, 'alive while draining');
    const created = await post(platform, merchant, '/api/v1/payments', paymentInput());
    assert.equal(created.status, 200, 'requests are served while draining');
    await stopping;
    await assert.rejects(fetch(`${platform.url}/healthz`), 'the port is closed afterwards');
  });
});

describe('SIGTERM on `npm start`', () => {
  it('turns /readyz to 503 for PAYGATE_SHUTDOWN_DRAIN while serving, then exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-sigterm-'));
    const port = await closedPort();
    const server = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', join(import.meta.dirname, '../src/main.ts')],
      {
        env: {
          ...process.env,
          PORT: String(port),
          PAYGATE_DATA_DIR: dataDir,
          PAYGATE_SHUTDOWN_DRAIN: '1s',
          LOG_LEVEL: 'info',
          DATABASE_URL: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    try {
      for (let i = 0; i < 200 && !output.includes('paygate listening'); i += 1) await sleep(100);
      assert.equal((await fetch(`${url}/readyz`)).status, 200, output);
      server.kill('SIGTERM');
      await sleep(200);
      const during = await fetch(`${url}/readyz`);
      assert.equal(during.status, 503);
      assert.deepEqual(await during.json(), { msg: 'NOT_READY', message: 'the instance is draining' });
      assert.equal((await fetch(`${url}/healthz`)).status, 200, 'still serving while draining');
      assert.equal(await exited, 0, output);
      assert.match(output, /draining/);
    } finally {
      server.kill('SIGKILL');
    }
  });
});

describe('PostgreSQL connections lost', { skip: PG ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let database: string;
  before(async () => {
    platform = await startTestPlatform({
      database: 'postgres',
      config: { databaseConnectTimeoutMs: 1_000, databaseRetryMs: 1_000 },
    });
    merchant = await createMerchant(platform);
    database = databaseName(platform.config.databaseUrl ?? '');
  });
  after(() => platform.close());

  it('idle connections terminated: no crash, the next requests succeed', async () => {
    for (let round = 0; round < 3; round += 1) {
      // Warm the pool, then kill every connection while it sits idle.
      await Promise.all([1, 2, 3, 4].map(() => post(platform, merchant, '/api/v1/payments', paymentInput())));
      assert.ok((await terminateBackends(database)) > 0);
      await sleep(100);
      const created = await post(platform, merchant, '/api/v1/payments', paymentInput());
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal((await fetch(`${platform.url}/readyz`)).status, 200);
    }
  });

  it('requests whose statements the server terminates are run again: each creates its order once', async () => {
    const before = await count(platform, 'payments');
    // Hold the payments table so that creates block inside their statements, then cut them off.
    const holder = new pg.Client({ connectionString: PG?.replace(/\/[^/]*$/, `/${database}`) });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE payments IN ACCESS EXCLUSIVE MODE');
    const inputs = [1, 2, 3, 4, 5].map(() => paymentInput());
    const requests = inputs.map((input) => post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', input));
    await sleep(300);
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND pid <> $2`,
      [database, holderPid],
    );
    await holder.query('ROLLBACK');
    await holder.end();
    // A FATAL from the server means the statement it cut off was rolled back: the platform runs
    // it again on a new connection instead of answering 503.
    const answers = await Promise.all(requests);
    for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(await count(platform, 'payments'), before + inputs.length);
    // The merchant retries anyway: the same orders, nothing more.
    for (const [i, input] of inputs.entries()) {
      const again = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', input);
      assert.equal(again.status, 200);
      assert.equal(again.body.data?.orderNo, answers[i]?.body.data?.orderNo);
    }
    assert.equal(await count(platform, 'payments'), before + inputs.length);
  });

  it('/readyz reports an outage while it lasts and recovers by itself', async () => {
    await admin(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    try {
      await terminateBackends(database);
      // /readyz shares one answer for up to READY_CACHE_MS: the outage shows within a second or so.
      let down = await fetch(`${platform.url}/readyz`);
      for (let i = 0; i < 100 && down.status !== 503; i += 1) {
        await sleep(100);
        down = await fetch(`${platform.url}/readyz`);
      }
      assert.equal(down.status, 503);
      assert.equal(((await down.json()) as { msg: string }).msg, 'NOT_READY');
      const read = await get(platform, merchant, '/api/v1/balances');
      assert.equal(read.status, 503);
      assert.equal(read.body.msg, 'SERVICE_UNAVAILABLE');
    } finally {
      await admin(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    }
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i += 1) {
      status = (await fetch(`${platform.url}/readyz`)).status;
      if (status !== 200) await sleep(100);
    }
    assert.equal(status, 200);
    assert.equal((await post(platform, merchant, '/api/v1/payments', paymentInput())).status, 200);
  });

  it('a transaction whose connection dies before COMMIT runs again, commits once, and the pool carries on', async () => {
    const db = platform.services.db;
    await createProbeTable(db);
    let attempts = 0;
    const running = db.transaction(async (tx) => {
      attempts += 1;
      if (attempts === 1) await tx.query('SELECT pg_sleep(5)');
      await tx.query(`INSERT INTO retry_probe (id) VALUES ('dies-before-commit')`);
    });
    await waitFor(async () => (await sessionsSleeping(database)) > 0);
    await terminateBackends(database);
    await running;
    assert.equal(attempts, 2);
    assert.equal(await probeRows(db, 'dies-before-commit'), 1n);
    const stats = db.poolStats();
    assert.ok(stats && stats.max === platform.config.databasePoolSize);
  });

  it('a transaction whose session the server ends while it sits idle before COMMIT runs again: no COMMIT left', async () => {
    // What a fast shutdown (a switchover) does to a backend between two statements of a
    // transaction: a FATAL on an idle connection, after which pg refuses the COMMIT unsent.
    const db = platform.services.db;
    await createProbeTable(db);
    let attempts = 0;
    await db.transaction(async (tx) => {
      attempts += 1;
      await tx.query(`INSERT INTO retry_probe (id) VALUES ('ended-idle-in-transaction')`);
      if (attempts > 1) return;
      const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await admin('SELECT pg_terminate_backend($1)', [pid]);
      await waitFor(async () => (await admin('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0);
      // The backend sent its FATAL before it exited; give the socket a moment to deliver it.
      await sleep(100);
    });
    assert.equal(attempts, 2);
    assert.equal(await probeRows(db, 'ended-idle-in-transaction'), 1n);
  });

  it('a transaction refused as read-only (SQLSTATE 25006) runs again on a connection that takes writes', async () => {
    const db = platform.services.db;
    await createProbeTable(db);
    let attempts = 0;
    await db.transaction(async (tx) => {
      attempts += 1;
      if (attempts === 1) await tx.query('SET TRANSACTION READ ONLY');
      await tx.query(`INSERT INTO retry_probe (id) VALUES ('read-only-first')`);
    });
    assert.equal(attempts, 2);
    assert.equal(await probeRows(db, 'read-only-first'), 1n);
  });

  it('/readyz is 503 while the database takes only reads, and a write answers 503 after the retry window', async () => {
    // What an instance sees on a demoted primary or a standby: every session is read-only.
    const readOnly = new URL(platform.config.databaseUrl ?? '');
    readOnly.searchParams.set('options', '-c default_transaction_read_only=on');
    const other = await startTestPlatform({
      databaseUrl: readOnly.toString(),
      config: { databaseRetryMs: 300, autoMigrate: false },
      expectErrorLogs: true,
    });
    try {
      const ready = await fetch(`${other.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { msg: 'NOT_READY', message: 'the database takes only reads' });
      const before = await count(platform, 'payments');
      const refused = await post(other, merchant, '/api/v1/payments', paymentInput());
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.msg, 'SERVICE_UNAVAILABLE');
      assert.equal(await count(platform, 'payments'), before);
      assert.equal((await fetch(`${platform.url}/readyz`)).status, 200, 'the writable instance stays ready');
    } finally {
      await other.close();
    }
  });

  it('draining finishes a request in flight, which answers with Connection: close', async () => {
    const other = await startTestPlatform({ databaseUrl: platform.config.databaseUrl });
    try {
      const holder = new pg.Client({ connectionString: other.config.databaseUrl });
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE payments IN ACCESS EXCLUSIVE MODE');
      const inFlight = post(other, merchant, '/api/v1/payments', paymentInput());
      await sleep(200);
      const stopping = other.shutdown({ drainMs: 100, timeoutMs: 10_000 });
      await sleep(400);
      await holder.query('ROLLBACK');
      await holder.end();
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('connection'), 'close');
      await stopping;
    } finally {
      await other.close();
    }
  });
});

/** Runs the operator command line from the sources. */
function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', join(import.meta.dirname, '../src/cli/main.ts'), ...args],
      { env: { ...process.env, DATABASE_URL: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
