#!/usr/bin/env node
// `npm run failover`: the highly available PostgreSQL recipe on one machine, with the platform on
// top (and `npm run test:failover`, which imports startPostgresHa). Real processes from Debian's
// packages: one etcd, two Patroni nodes each running a PostgreSQL 15 (synchronous replication,
// deploy/failover/patroni.yml), HAProxy sending connections to the current primary
// (deploy/failover/haproxy.cfg), then the deploy/ cluster (deploy/cluster.mjs: HAProxy, two API
// instances, two workers) with DATABASE_URL pointing at that HAProxy. Ctrl-C stops everything.
//
// PostgreSQL refuses to run as root: run as root, etcd and Patroni (with its PostgreSQL) run as the
// `postgres` user in a temporary directory that user owns; run as another user, they run as you.
//
//   apt-get install -y patroni etcd-server haproxy postgresql-15
//   FAILOVER_PORT   the platform's HAProxy port, default 8080
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startCluster, teeOutput } from '../cluster.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = join(root, 'deploy/failover');
const require = createRequire(join(root, 'packages/server/package.json'));
const pg = require('pg');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** PostgreSQL 15's programs as Debian installs them. */
export const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Why the recipe cannot run on this machine, or false when it can. */
export function failoverSkip() {
  for (const [program, pkg] of [
    ['patroni', 'patroni'],
    ['etcd', 'etcd-server'],
    ['haproxy', 'haproxy'],
  ]) {
    if (spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0)
      return `${program} is not installed (apt-get install ${pkg})`;
  }
  if (!existsSync(join(PG_BIN, 'postgres'))) return 'PostgreSQL 15 is not installed (apt-get install postgresql-15)';
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0)
    return 'run as root, the recipe needs the postgres user';
  return false;
}

/** The user the database processes run as: `postgres` when we are root (PostgreSQL refuses root), else us. */
function databaseUser() {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

async function httpGet(url, timeoutMs = 1000) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    return { status: response.status, text };
  } catch {
    return { status: 0, text: '' };
  }
}

/** One long-running process, in its own process group, its output in `<logDir>/<name>.log`. */
class Daemon {
  constructor({ name, command, args, env, user, logDir }) {
    Object.assign(this, { name, command, args, env, user, logDir });
    this.child = undefined;
    this.tail = [];
  }

  get running() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start() {
    const log = createWriteStream(join(this.logDir, `${this.name}.log`), { flags: 'a' });
    const child = spawn(this.command, this.args, {
      env: this.env,
      cwd: this.logDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(this.user ?? {}),
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        log.end();
        resolve({ code, signal });
      });
      // Not started at all (a program missing): reported like an exit, the tail says why.
      child.once('error', (error) => {
        this.tail.push(error.message);
        log.end();
        resolve({ code: null, signal: null });
      });
    });
    teeOutput(child, log, this.tail);
    return this;
  }

  /** Sends `signal` to the process group and waits for the exit (SIGKILL after `timeoutMs`). */
  async stop(signal = 'SIGTERM', timeoutMs = 30_000) {
    if (!this.running) return;
    const group = (sig) => {
      try {
        process.kill(-this.child.pid, sig);
      } catch {
        // already gone
      }
    };
    group(signal);
    const timer = setTimeout(() => group('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  killNow() {
    if (!this.running) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** The pid in a data directory's postmaster.pid, if the file is there. */
function postmasterPid(dataDir) {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts etcd, two Patroni nodes and HAProxy in a fresh temporary directory, waits until one node
 * leads and the other is its synchronous standby, then creates the platform's role and database.
 * Options: logDir, keep (leave the directory behind on stop).
 */
export async function startPostgresHa(options = {}) {
  const user = databaseUser();
  const base = mkdtempSync(join(options.baseDir ?? tmpdir(), 'paygate-ha-'));
  chmodSync(base, 0o700);
  const own = (path) => {
    if (user) chownSync(path, user.uid, user.gid);
  };
  own(base);
  const logDir = options.logDir ?? join(base, 'logs');
  mkdirSync(logDir, { recursive: true });
  // The configuration is copied where the postgres user can surely read it.
  const config = join(base, 'patroni.yml');
  copyFileSync(join(here, 'patroni.yml'), config);
  own(config);

  const secret = () => randomBytes(18).toString('base64url');
  const passwords = { superuser: secret(), replication: secret(), rewind: secret(), paygate: secret() };
  const [etcdClient, etcdPeer, haproxyPort, statsPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const daemons = [];
  const path = process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin';

  const etcdDir = join(base, 'etcd');
  mkdirSync(etcdDir, { mode: 0o700 });
  own(etcdDir);
  const etcd = new Daemon({
    name: 'etcd',
    command: 'etcd',
    args: [
      '--name=etcd1',
      `--data-dir=${etcdDir}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=etcd1=http://127.0.0.1:${etcdPeer}`,
    ],
    env: { PATH: path, HOME: base },
    user,
    logDir,
  });
  daemons.push(etcd);

  const nodes = [];
  for (const name of ['node1', 'node2']) {
    const [pgPort, apiPort] = await Promise.all([freePort(), freePort()]);
    const nodeDir = join(base, name);
    const dataDir = join(nodeDir, 'data');
    // PostgreSQL wants its data directory 0700; pg_basebackup into a fresh one leaves it 0755.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
    own(nodeDir);
    own(dataDir);
    const patroni = new Daemon({
      name,
      command: 'patroni',
      args: [config],
      env: {
        PATH: path,
        HOME: base,
        LANG: 'C.UTF-8',
        PATRONI_NAME: name,
        PATRONI_RESTAPI_LISTEN: `127.0.0.1:${apiPort}`,
        PATRONI_RESTAPI_CONNECT_ADDRESS: `127.0.0.1:${apiPort}`,
        PATRONI_POSTGRESQL_LISTEN: `127.0.0.1:${pgPort}`,
        PATRONI_POSTGRESQL_CONNECT_ADDRESS: `127.0.0.1:${pgPort}`,
        PATRONI_POSTGRESQL_DATA_DIR: dataDir,
        PATRONI_POSTGRESQL_PGPASS: join(nodeDir, 'pgpass'),
        PATRONI_POSTGRESQL_BIN_DIR: PG_BIN,
        PATRONI_ETCD3_HOSTS: `127.0.0.1:${etcdClient}`,
        PATRONI_SUPERUSER_PASSWORD: passwords.superuser,
        PATRONI_REPLICATION_PASSWORD: passwords.replication,
        PATRONI_REWIND_PASSWORD: passwords.rewind,
      },
      user,
      logDir,
    });
    daemons.push(patroni);
    nodes.push({
      name,
      pgPort,
      apiPort,
      dataDir,
      patroni,
      apiUrl: `http://127.0.0.1:${apiPort}`,
      superuserUrl: `postgres://postgres:${passwords.superuser}@127.0.0.1:${pgPort}/postgres`,
      postmasterPid: () => postmasterPid(dataDir),
    });
  }

  const haproxy = new Daemon({
    name: 'haproxy-postgres',
    command: 'haproxy',
    args: ['-db', '-f', join(here, 'haproxy.cfg')],
    env: {
      PATH: path,
      PAYGATE_PG_BIND: `127.0.0.1:${haproxyPort}`,
      PAYGATE_PG_STATS: `127.0.0.1:${statsPort}`,
      PAYGATE_PG_1: `127.0.0.1:${nodes[0].pgPort}`,
      PAYGATE_PG_1_CHECK: String(nodes[0].apiPort),
      PAYGATE_PG_2: `127.0.0.1:${nodes[1].pgPort}`,
      PAYGATE_PG_2_CHECK: String(nodes[1].apiPort),
    },
    logDir,
  });
  daemons.push(haproxy);

  const killAll = () => {
    for (const daemon of daemons) daemon.killNow();
    for (const node of nodes) {
      const pid = node.postmasterPid();
      if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  };
  process.once('exit', killAll);

  const ha = {
    base,
    logDir,
    nodes,
    etcd,
    haproxy,
    haproxyPort,
    statsUrl: `http://127.0.0.1:${statsPort}/stats`,
    /** The platform's connection: role paygate, database paygate, through HAProxy. */
    databaseUrl: `postgres://paygate:${passwords.paygate}@127.0.0.1:${haproxyPort}/paygate`,
    /** The superuser through HAProxy (checks and set-up). */
    superuserUrl: `postgres://postgres:${passwords.superuser}@127.0.0.1:${haproxyPort}/postgres`,
    node: (name) => nodes.find((node) => node.name === name),

    /** Patroni's view of the cluster (`GET /cluster` of the first node that answers). */
    async members() {
      for (const node of nodes) {
        const answer = await httpGet(`${node.apiUrl}/cluster`);
        if (answer.status === 200) return JSON.parse(answer.text).members;
      }
      return [];
    },

    /** The node that is primary now, if any. */
    async leader() {
      const members = await ha.members();
      return members.find((member) => member.role === 'leader' && member.state === 'running')?.name;
    },

    /**
     * Waits until a primary runs with the other node streaming as its synchronous standby and
     * HAProxy routes to the primary; returns the primary's name.
     */
    async waitHealthy(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      let last = [];
      while (Date.now() < deadline) {
        last = await ha.members();
        const leader = last.find((m) => m.role === 'leader' && m.state === 'running');
        const sync = last.find((m) => m.role === 'sync_standby' && m.state === 'running');
        if (leader && sync && (await ha.routedTo()) === leader.name) return leader.name;
        for (const daemon of daemons) {
          if (!daemon.running) throw new Error(`${daemon.name} exited: ${daemon.tail.slice(-20).join('\n')}`);
        }
        await sleep(250);
      }
      throw new Error(`the cluster did not become healthy within ${timeoutMs} ms: ${JSON.stringify(last)}`);
    },

    /** The node HAProxy sends connections to now (the one it sees UP), if any. */
    async routedTo() {
      const answer = await httpGet(`${ha.statsUrl};csv`);
      if (answer.status !== 200) return undefined;
      const [header, ...rows] = answer.text.split('\n');
      const status = header.replace(/^# /, '').split(',').indexOf('status');
      const up = rows
        .map((row) => row.split(','))
        .filter((cells) => cells[0] === 'postgres_primary' && cells[1] !== 'BACKEND' && cells[status] === 'UP');
      return up.length === 1 ? up[0][1] : undefined;
    },

    /** SIGKILL to the postmaster of `name` (Patroni stays: with primary_start_timeout 0 it fails over). */
    killPostmaster(name) {
      const pid = ha.node(name).postmasterPid();
      if (pid === undefined) throw new Error(`${name} has no postmaster.pid`);
      process.kill(pid, 'SIGKILL');
      return pid;
    },

    /** A planned switchover to `candidate` through Patroni's REST API (what `patronictl switchover` sends). */
    async switchover(leader, candidate) {
      const node = ha.node(leader);
      const response = await fetch(`${node.apiUrl}/switchover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader, candidate }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`switchover refused: ${response.status} ${text}`);
      return text;
    },

    /** Stops HAProxy, both Patroni nodes (each stops its PostgreSQL), etcd; removes the directory. */
    async stop() {
      await haproxy.stop('SIGTERM', 5_000);
      await Promise.all(nodes.map((node) => node.patroni.stop('SIGTERM', 30_000)));
      for (const node of nodes) {
        const pid = node.postmasterPid();
        if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
      }
      await etcd.stop('SIGTERM', 10_000);
      process.removeListener('exit', killAll);
      if (!options.keep) rmSync(base, { recursive: true, force: true });
    },
  };

  try {
    etcd.start();
    for (let i = 0; i < 100 && (await httpGet(`http://127.0.0.1:${etcdClient}/health`)).status !== 200; i++) {
      if (!etcd.running) throw new Error(`etcd exited: ${etcd.tail.slice(-20).join('\n')}`);
      await sleep(100);
    }
    // The first node bootstraps the cluster (initdb); the second then clones it (pg_basebackup).
    nodes[0].patroni.start();
    for (let i = 0; i < 600 && (await ha.leader()) !== 'node1'; i++) {
      if (!nodes[0].patroni.running) throw new Error(`node1 exited: ${nodes[0].patroni.tail.slice(-20).join('\n')}`);
      await sleep(100);
    }
    nodes[1].patroni.start();
    haproxy.start();
    await ha.waitHealthy();
    const admin = new pg.Client({ connectionString: ha.superuserUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE paygate LOGIN CREATEDB PASSWORD '${passwords.paygate}'`);
      await admin.query('CREATE DATABASE paygate OWNER paygate');
    } finally {
      await admin.end();
    }
  } catch (error) {
    killAll();
    process.removeListener('exit', killAll);
    if (!options.keep) rmSync(base, { recursive: true, force: true });
    throw error;
  }
  return ha;
}

async function main() {
  const port = Number(process.env.FAILOVER_PORT ?? 8080);
  console.log('starting: etcd, two Patroni nodes (PostgreSQL 15, synchronous), HAProxy, then the platform');
  const ha = await startPostgresHa();
  let cluster;
  try {
    cluster = await startCluster({ databaseUrl: ha.databaseUrl, port, logDir: join(ha.logDir, 'platform') });
  } catch (error) {
    await ha.stop();
    throw error;
  }
  console.log(`
Paygate (sandbox) at ${cluster.url}, on PostgreSQL through ${ha.databaseUrl.replace(/:[^:@]*@/, ':***@')}
  PostgreSQL nodes: ${ha.nodes.map((n) => `${n.name} :${n.pgPort} (Patroni ${n.apiUrl})`).join(', ')}
  primary now:      ${await ha.leader()}; HAProxy stats ${ha.statsUrl}
  logs:             ${ha.logDir}
  try a failover:   kill -9 $(head -1 ${ha.nodes[0].dataDir}/postmaster.pid)   (if node1 leads)
  or a switchover:  curl -XPOST ${ha.nodes[0].apiUrl}/switchover -d '{"leader":"node1","candidate":"node2"}'
Ctrl-C stops everything.`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping ...');
    await cluster.stop();
    await ha.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
