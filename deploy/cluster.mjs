#!/usr/bin/env node
// `npm run cluster`: the deploy/ recipe on one machine, for trying it out (and for the cluster
// tests, which import startCluster). HAProxy with deploy/haproxy/haproxy.cfg in front of API
// instances (PAYGATE_WORKERS=false) and `paygate worker` processes, all on one PostgreSQL
// database, after `paygate migrate`. Real processes; Ctrl-C stops them all (each drains first).
//
//   DATABASE_URL   default postgres://postgres@127.0.0.1:5432/paygate_cluster (created if absent)
//   CLUSTER_PORT   HAProxy's port, default 8080
// `--check` only checks the prerequisites (HAProxy, PostgreSQL, the port), one line each missing.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const deployDir = join(root, 'deploy');
const require = createRequire(join(root, 'packages/server/package.json'));
const pg = require('pg');

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/paygate_cluster';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Creates the database of `url` on its server when it does not exist yet. */
export async function ensureDatabase(url) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`unsupported database name: ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

/** How to run the server's entry points: the build when there is one, else the sources via tsx. */
function entry(source, script) {
  const built = { main: 'packages/server/dist/main.js', cli: 'packages/server/dist/cli/main.js' }[script];
  const sources = { main: 'packages/server/src/main.ts', cli: 'packages/server/src/cli/main.ts' }[script];
  if (!source && existsSync(join(root, built))) return [built];
  return ['--conditions=source', '--import', 'tsx', sources];
}

async function httpStatus(url, timeoutMs = 1000) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/**
 * One process of the cluster. `start()` spawns it and waits until it is ready (API: /readyz 200;
 * worker: its start line; HAProxy: its port answers); `stop(signal)` sends the signal and waits
 * for the exit, whose `{ code, signal }` it returns.
 */
export class Proc {
  constructor({ name, kind, command, args, env, port, logDir }) {
    Object.assign(this, { name, kind, command, args, env, port, logDir });
    this.child = undefined;
    this.exits = [];
    this.tail = [];
    this.starts = 0;
    /** Whether the current run has printed its start line (a worker's readiness). */
    this.announced = false;
  }

  get url() {
    return this.port === undefined ? undefined : `http://127.0.0.1:${this.port}`;
  }

  get running() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  spawn() {
    this.starts += 1;
    const log = createWriteStream(join(this.logDir, `${this.name}.log`), { flags: 'a' });
    const child = spawn(this.command, this.args, {
      cwd: root,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a Ctrl-C in the terminal reaches the launcher only, which stops
      // every process in order.
      detached: true,
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        const exit = { code, signal };
        this.exits.push(exit);
        log.end();
        resolve(exit);
      });
    });
    // Readiness is read from the lines as they come, not from the tail: the tail keeps the last 200
    // lines, so once a process has printed that many, a restart's lines no longer lengthen it.
    this.announced = false;
    teeOutput(child, log, this.tail, (line) => {
      if (line.includes('paygate worker started')) this.announced = true;
    });
    return child;
  }

  async start(timeoutMs = 60_000) {
    const child = this.spawn();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new Error(`${this.name} exited while starting: ${this.tail.slice(-20).join('\n')}`);
      }
      if (await this.ready()) return;
      await sleep(100);
    }
    child.kill('SIGKILL');
    const readyz = this.kind === 'api' ? ` (last /readyz: ${this.lastStatus || 'no answer'})` : '';
    throw new Error(
      `${this.name} was not ready within ${timeoutMs} ms${readyz}, log ${join(this.logDir, `${this.name}.log`)}: ${this.tail.slice(-20).join('\n')}`,
    );
  }

  async ready() {
    if (this.kind === 'api') {
      this.lastStatus = await httpStatus(`${this.url}/readyz`, 3000);
      return this.lastStatus === 200;
    }
    if (this.kind === 'haproxy') return (await httpStatus(`${this.url}/healthz`)) !== 0;
    return this.announced;
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `timeoutMs`). */
  async stop(signal = 'SIGTERM', timeoutMs = 60_000) {
    if (!this.running) return this.exits.at(-1) ?? { code: null, signal: null };
    this.child.kill(signal);
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), timeoutMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }
}

/**
 * Starts the cluster: ensures the database, runs `paygate migrate`, starts the API instances and
 * workers, then HAProxy in front of the APIs. Options: databaseUrl, port (HAProxy; 0 = any),
 * apis (2), workers (2), source (run the TypeScript sources even when a build exists), env
 * (extra environment for every Paygate process), workerEnv, logDir, stateDir (keeps the master
 * key and admin token across runs; without it they are new each time).
 */
/**
 * Copies a child's stdout and stderr into its log file, keeps the last 200 lines in `tail` (what
 * a failure report shows) and hands each whole line to `onLine` (a line cut between two chunks is
 * joined first).
 */
export function teeOutput(child, log, tail, onLine = () => {}) {
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    const take = (line) => {
      if (line === '') return;
      tail.push(line);
      if (tail.length > 200) tail.shift();
      onLine(line);
    };
    stream.on('data', (chunk) => {
      log.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) take(line);
    });
    stream.on('end', () => take(partial));
  }
}

export async function startCluster(options = {}) {
  const databaseUrl = options.databaseUrl ?? DEFAULT_DATABASE_URL;
  const apis = options.apis ?? 2;
  const workers = options.workers ?? 2;
  if (apis !== 2) throw new Error('deploy/haproxy/haproxy.cfg lists two API instances');
  const source = options.source ?? false;
  const port = options.port === undefined || options.port === 0 ? await freePort() : options.port;
  const statsPort = await freePort();
  const logDir = options.logDir ?? mkdtempSync(join(tmpdir(), 'paygate-cluster-'));
  mkdirSync(logDir, { recursive: true });
  // Every process needs the same master key and admin token. With a stateDir they are kept there
  // (0600), so a restart serves the merchants of the previous run.
  const secret = (file, make) => {
    if (!options.stateDir) return make();
    const path = join(options.stateDir, file);
    if (!existsSync(path)) {
      mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
      writeFileSync(path, `${make()}\n`, { mode: 0o600 });
    }
    return readFileSync(path, 'utf8').trim();
  };
  const masterKey = secret('master.key', () => randomBytes(32).toString('base64'));
  const adminToken = secret('admin.token', () => randomBytes(32).toString('base64url'));
  const url = `http://127.0.0.1:${port}`;

  await ensureDatabase(databaseUrl);

  const common = {
    ...process.env,
    NODE_OPTIONS: '',
    DATABASE_URL: databaseUrl,
    PAYGATE_ENV: 'sandbox',
    PAYGATE_MASTER_KEY: masterKey,
    PAYGATE_ADMIN_TOKEN: adminToken,
    PAYGATE_PUBLIC_URL: url,
    PAYGATE_AUTO_MIGRATE: 'false',
    LOG_LEVEL: 'warn',
    ...options.env,
  };

  const migrate = spawnSync(process.execPath, [...entry(source, 'cli'), 'migrate'], {
    cwd: root,
    env: { ...common, PAYGATE_DATA_DIR: join(logDir, 'migrate') },
    encoding: 'utf8',
  });
  if (migrate.status !== 0) throw new Error(`paygate migrate failed: ${migrate.stderr || migrate.stdout}`);

  const apiProcs = [];
  for (let i = 1; i <= apis; i++) {
    const apiPort = await freePort();
    apiProcs.push(
      new Proc({
        name: `api${i}`,
        kind: 'api',
        command: process.execPath,
        args: entry(source, 'main'),
        port: apiPort,
        logDir,
        env: {
          ...common,
          HOST: '127.0.0.1',
          PORT: String(apiPort),
          PAYGATE_WORKERS: 'false',
          PAYGATE_DATA_DIR: join(logDir, `api${i}`),
        },
      }),
    );
  }
  const workerProcs = [];
  for (let i = 1; i <= workers; i++) {
    workerProcs.push(
      new Proc({
        name: `worker${i}`,
        kind: 'worker',
        command: process.execPath,
        args: [...entry(source, 'cli'), 'worker'],
        logDir,
        // The worker's start line is logged at info.
        env: { ...common, LOG_LEVEL: 'info', ...options.workerEnv, PAYGATE_DATA_DIR: join(logDir, `worker${i}`) },
      }),
    );
  }
  const haproxy = new Proc({
    name: 'haproxy',
    kind: 'haproxy',
    command: options.haproxy ?? 'haproxy',
    args: ['-db', '-f', join(deployDir, 'haproxy/haproxy.cfg')],
    port,
    logDir,
    env: {
      ...process.env,
      PAYGATE_LB_BIND: `127.0.0.1:${port}`,
      PAYGATE_LB_STATS: `127.0.0.1:${statsPort}`,
      PAYGATE_LB_ERRORS: join(deployDir, 'haproxy/errors'),
      PAYGATE_API_1: `127.0.0.1:${apiProcs[0].port}`,
      PAYGATE_API_2: `127.0.0.1:${apiProcs[1].port}`,
    },
  });

  const all = [...apiProcs, ...workerProcs];
  const cluster = {
    url,
    statsUrl: `http://127.0.0.1:${statsPort}/stats`,
    databaseUrl,
    adminToken,
    masterKey,
    logDir,
    apis: apiProcs,
    workers: workerProcs,
    haproxy,
    /** HAProxy's view of each API instance: `{ api1: 'UP', api2: 'DOWN' ... }`. */
    async backendStates() {
      const states = {};
      try {
        const csv = await (await fetch(`${cluster.statsUrl};csv`, { signal: AbortSignal.timeout(2000) })).text();
        const [header, ...rows] = csv.split('\n');
        const columns = header.replace(/^# /, '').split(',');
        const status = columns.indexOf('status');
        for (const row of rows) {
          const cells = row.split(',');
          if (cells[0] === 'paygate_api' && cells[1] !== 'BACKEND') states[cells[1]] = cells[status];
        }
      } catch {
        // HAProxy not (yet) answering: no states.
      }
      return states;
    },
    /** Waits until HAProxy routes to every API instance that is running. */
    async waitRouted(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const states = await cluster.backendStates();
        if (apiProcs.every((api) => !api.running || states[api.name] === 'UP')) return;
        await sleep(100);
      }
      throw new Error(`HAProxy did not route to every instance: ${JSON.stringify(await cluster.backendStates())}`);
    },
    /** Stops everything: APIs and workers with SIGTERM (they drain), then HAProxy. */
    async stop() {
      await Promise.all(all.map((proc) => proc.stop('SIGTERM')));
      await haproxy.stop('SIGTERM');
    },
  };

  const killAll = () => {
    for (const proc of [...all, haproxy]) if (proc.running) proc.child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  try {
    await Promise.all(all.map((proc) => proc.start()));
    await haproxy.start();
    await cluster.waitRouted();
  } catch (error) {
    killAll();
    throw error;
  }
  return cluster;
}

/** True when something listens on 127.0.0.1:`port`. */
function portTaken(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

/**
 * What `npm run cluster` needs before it starts anything, each missing one as one line saying
 * what to do: HAProxy on PATH, PostgreSQL answering at DATABASE_URL's server, CLUSTER_PORT free.
 */
export async function clusterPrerequisites({ databaseUrl, port, haproxy = 'haproxy' }) {
  const problems = [];
  const probe = spawnSync(haproxy, ['-v'], { encoding: 'utf8' });
  if (probe.error) {
    problems.push(
      probe.error.code === 'ENOENT'
        ? `HAProxy is not installed (no ${haproxy} on PATH): apt-get install haproxy`
        : `HAProxy (${haproxy}) does not run: ${probe.error.message}`,
    );
  }
  const server = new URL(databaseUrl);
  const where = `${server.hostname}:${server.port || 5432}`;
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    const reason = error.code ?? error.message;
    problems.push(`PostgreSQL at ${where} does not answer (${reason}): start it, or point DATABASE_URL at one`);
  } finally {
    await client.end().catch(() => {});
  }
  if (port !== 0 && (await portTaken(port))) {
    problems.push(`port ${port} is in use (is npm start running?): stop it, or set CLUSTER_PORT`);
  }
  return problems;
}

async function main() {
  const port = Number(process.env.CLUSTER_PORT ?? 8080);
  const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const problems = await clusterPrerequisites({ databaseUrl, port });
  if (problems.length > 0) {
    for (const problem of problems) console.error(`npm run cluster: ${problem}`);
    process.exit(1);
  }
  // `npm run cluster` checks before it builds, then starts.
  if (process.argv.includes('--check')) return;
  console.log(`starting: database ${databaseUrl}, paygate migrate, 2 API instances, 2 workers, HAProxy`);
  const stateDir = join(root, '.paygate/cluster');
  const logDir = join(stateDir, 'logs');
  const cluster = await startCluster({ databaseUrl, port, stateDir, logDir });
  console.log(`
Paygate cluster (sandbox) at ${cluster.url}
  API instances: ${cluster.apis.map((api) => `${api.name} ${api.url}`).join(', ')}
  workers:       ${cluster.workers.length}, HAProxy stats ${cluster.statsUrl}
  logs:          ${cluster.logDir}
  operator CLI:  PAYGATE_URL=${cluster.url} PAYGATE_ADMIN_TOKEN=$(cat .paygate/cluster/admin.token) npx paygate merchant list
  master key and admin token: .paygate/cluster/ (kept across runs)
Ctrl-C stops everything.`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping (each instance drains first) ...');
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  for (const proc of [...cluster.apis, ...cluster.workers, cluster.haproxy]) {
    void proc.exited.then((exit) => {
      if (!stopping) console.error(`${proc.name} exited (${JSON.stringify(exit)}); see ${cluster.logDir}`);
    });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
