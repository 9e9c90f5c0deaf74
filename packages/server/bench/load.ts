// Bench helpers shared by the API, cost-growth and memory benches: pre-signed requests, a load
// generator with a fixed number in flight, and the platform and ceiling servers as child processes.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateBoxKeyPair,
  generateSigningKey,
  signReadRequest,
  signWriteRequest,
  type SigningKey,
} from '@paygate/protocol';
import pg from 'pg';
import { Pool } from 'undici';
import { postgresUrl, startChild, urlOf } from './support.js';
import { stealMeter } from '../../../scripts/steal.mjs';

export const CONCURRENCY = 32;

export interface Prepared {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

export interface Run {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  /** Answers with a 2xx status (what the CPU figures are divided by). */
  readonly ok: number;
  /**
   * CPU milliseconds per 2xx answer spent by the server process, by its PostgreSQL backends and by
   * the load generator (this process), each apart: unlike rates, barely moved by other load on the
   * machine.
   */
  readonly cpu: { server: number; database: number; generator: number };
  /** Share of the machine's CPU time the hypervisor gave to other guests meanwhile (see stealMeter). */
  readonly steal: number;
}

/** The processes whose CPU time a run is charged with. */
export interface Charged {
  readonly server: number;
  /** PostgreSQL backends serving the server (none for the embedded database). */
  readonly database?: () => Promise<number[]>;
}

const TICK_MS = 10; // Linux USER_HZ is 100.

/** CPU milliseconds (user + system) a process has used so far; 0 when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

async function cpuOf(charged: Charged | undefined): Promise<{ server: number; database: Map<number, number> }> {
  if (!charged) return { server: 0, database: new Map() };
  const pids = (await charged.database?.()) ?? [];
  return { server: cpuMs(charged.server), database: new Map(pids.map((pid) => [pid, cpuMs(pid)])) };
}

/**
 * Fires prepared requests with a fixed number in flight; returns rate, latency percentiles and,
 * for `charged` processes, CPU per request.
 */
export async function fire(
  url: string,
  requests: Prepared[],
  charged?: Charged,
  concurrency = CONCURRENCY,
  /** Stop sending once this many milliseconds have passed (a time-bound run: the rate is of what was sent). */
  forMs = Number.POSITIVE_INFINITY,
): Promise<Run> {
  // The requests were just made: collected now, they are old by the first request, so that the
  // generator's own scavenges during the run do not copy them (pauses that read as server latency).
  (globalThis as { gc?: () => void }).gc?.();
  const before = await cpuOf(charged);
  const generatorBefore = process.cpuUsage();
  const stolen = stealMeter();
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let ok = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length && performance.now() - started < forMs) {
        const request = requests[next++] as Prepared;
        const t0 = performance.now();
        const response = await pool.request({ ...request, body: request.body });
        await response.body.dump();
        latencies.push(performance.now() - t0);
        if (response.statusCode >= 200 && response.statusCode < 300) ok++;
        if (response.statusCode !== 200) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const steal = stolen();
  const generator = process.cpuUsage(generatorBefore);
  const after = await cpuOf(charged);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  // A backend opened during the run counts from zero.
  let database = 0;
  for (const [pid, ms] of after.database) database += ms - (before.database.get(pid) ?? 0);
  const sent = Math.max(ok, 1);
  const cpu = {
    server: (after.server - before.server) / sent,
    database: database / sent,
    generator: (generator.user + generator.system) / 1000 / sent,
  };
  return { rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), errors, ok, cpu, steal };
}

/** The PostgreSQL backends connected to `url`'s database (other than the asking one). */
export async function backendsOf(url: string): Promise<{ pids: () => Promise<number[]>; close: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    pids: async () =>
      (
        await client.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        )
      ).rows.map((row) => row.pid),
    close: () => client.end(),
  };
}

/** The median of `values` (of an even count, the upper of the two middle ones). */
export const mid = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The run with the median rate. */
export const median = (runs: readonly Run[]): Run =>
  [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)] as Run;

/** Signs bench requests for one merchant key. */
export class Signer {
  readonly key: SigningKey = generateSigningKey();

  private params(accessKey: string) {
    return { accessKey, key: this.key, created: Math.floor(Date.now() / 1000), nonce: randomUUID() };
  }

  creates(accessKey: string, bodyKey: { keyId: string; publicKey: Buffer }, n: number): Prepared[] {
    return Array.from({ length: n }, (_, i) =>
      this.write(accessKey, bodyKey, '/api/v1/payments', {
        merchantOrderNo: `B-${randomUUID().slice(0, 8)}-${i}`,
        currency: 'BRL',
        amount: '125.50',
        paymentMethod: { code: 'PIX' },
        webhookUrl: 'https://merchant.example/webhook/payment',
        attach: 'bench',
      }),
    );
  }

  /** One signed, sealed POST of `payload` to `path`. */
  write(accessKey: string, bodyKey: { keyId: string; publicKey: Buffer }, path: string, payload: unknown): Prepared {
    const plaintext = Buffer.from(JSON.stringify(payload));
    const signed = signWriteRequest({ path, plaintext, bodyKey, idempotencyKey: randomUUID() }, this.params(accessKey));
    return { method: 'POST', path, headers: signed.headers, body: signed.body };
  }

  /** `n` signed GETs of `path`, with `queries` in turn (`''` for none). */
  reads(accessKey: string, path: string, queries: readonly string[], n: number): Prepared[] {
    return Array.from({ length: n }, (_, i) => this.read(accessKey, path, queries[i % queries.length] as string));
  }

  /** One signed GET of `path?query` (no `?` when `query` is empty). */
  read(accessKey: string, path: string, query: string): Prepared {
    const signed = signReadRequest({ path, ...(query ? { query } : {}) }, this.params(accessKey));
    return { method: 'GET', path: query ? `${path}?${query}` : path, headers: signed.headers };
  }

  /** `n` signed reads of one order, or of `orderNo`'s orders in turn. */
  queries(accessKey: string, orderNo: string | readonly string[], n: number): Prepared[] {
    const orders = typeof orderNo === 'string' ? [orderNo] : orderNo;
    return this.reads(
      accessKey,
      '/api/v1/payments',
      orders.map((no) => `orderNo=${no}`),
      n,
    );
  }
}

/** Which databases a bench runs on: BENCH_DATABASE=pglite|postgres picks one, default both. */
export function benchDatabases(): ('postgres' | 'pglite')[] {
  const only = process.env.BENCH_DATABASE;
  if (only !== undefined && only !== 'postgres' && only !== 'pglite') {
    throw new Error(`BENCH_DATABASE is postgres or pglite, not ${only}`);
  }
  return only ? [only] : ['postgres', 'pglite'];
}

export const databaseLabel = (kind: 'postgres' | 'pglite') =>
  kind === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded, the default)';

/**
 * Node flags for the platform child: BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each platform
 * process there when it exits (open it in Chrome DevTools or speedscope); BENCH_PLATFORM_FLAGS adds
 * flags of its own (space-separated, e.g. `--trace-gc`, which NODE_OPTIONS does not take).
 */
function platformExecArgv(): string[] {
  const flags = (process.env.BENCH_PLATFORM_FLAGS ?? '').split(' ').filter(Boolean);
  return [...profileExecArgv('platform'), ...flags];
}

/**
 * `--cpu-prof` into BENCH_CPU_PROF/platform or BENCH_CPU_PROF/ceiling, so that the ceiling's
 * profile is there to set against the platform's.
 */
function profileExecArgv(name: 'platform' | 'ceiling'): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, name)}`] : [];
}

/**
 * Pinning: each server under test (the platform, or the ceiling) on CPU 0, the load generator (this
 * process) on CPU 1, and in the api section the platform's PostgreSQL backends on CPU 1 too ("server
 * on one core, load on the other", as issue 40's and issue 48's harnesses ran). Unpinned, the
 * scheduler moves the server between cores and lets the generator or PostgreSQL preempt it, and a
 * CPU profile then charges the time it waited to the function it was in (in one profile, the same
 * signature parsing read twice as slow in the platform as in the ceiling; pinned, the two agree).
 * With Linux's `taskset` (util-linux). BENCH_PIN=1 pins in every section; the api section pins by
 * default where it can (at least 2 CPUs and `taskset` there), BENCH_PIN=0 turns that off.
 */
let pinned = process.env.BENCH_PIN === '1';

/** Whether servers started from now on are pinned. */
export const isPinned = () => pinned;

/**
 * Pins from now on unless BENCH_PIN=0, when the machine has two CPUs and `taskset` to put them on
 * (the api section); returns whether it does.
 */
export function pinByDefault(): boolean {
  if (process.env.BENCH_PIN === '0' || pinned) return pinned;
  try {
    execFileSync('taskset', ['--cpu-list', '0,1', 'true'], { stdio: 'ignore' });
    pinned = true;
  } catch {
    // No taskset, or no CPU 1: unpinned.
  }
  return pinned;
}

/** Process `pid` and its threads onto CPU `cpu`. */
export function pin(cpu: 0 | 1, pid: number): void {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** A server under test just started: onto CPU 0, and the generator onto CPU 1, when pinned. */
function pinServer(child: ChildProcess): void {
  if (!pinned) return;
  pin(0, child.pid as number);
  pin(1, process.pid);
}

const pinnedBackends = new Set<number>();

/** The backends listed, each put onto CPU 1 the first time it is seen when pinned. */
export async function pinBackends(listed: Promise<number[]>): Promise<number[]> {
  const pids = await listed;
  if (!pinned) return pids;
  for (const pid of pids) {
    if (pinnedBackends.has(pid)) continue;
    try {
      pin(1, pid);
      pinnedBackends.add(pid);
    } catch {
      // Gone since it was listed.
    }
  }
  return pids;
}

/** A database for a bench: a throwaway PostgreSQL database, or a PGlite data directory. */
export interface BenchDatabase {
  readonly kind: 'postgres' | 'pglite';
  /** The platform's environment for it. */
  readonly env: Record<string, string>;
  readonly dataDir: string;
  readonly url: string | undefined;
  dispose(): Promise<void>;
}

/** A fresh database of `kind`; undefined when PostgreSQL is asked for and none answers. */
export async function benchDatabase(kind: 'postgres' | 'pglite'): Promise<BenchDatabase | undefined> {
  const postgres = kind === 'postgres' ? await postgresUrl() : undefined;
  if (kind === 'postgres' && !postgres) return undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'paygate-bench-'));
  const env: Record<string, string> = {
    PAYGATE_DATA_DIR: dataDir,
    PAYGATE_ADMIN_TOKEN: randomBytes(24).toString('hex'),
  };
  if (postgres) env.DATABASE_URL = postgres.url;
  return {
    kind,
    env,
    dataDir,
    url: postgres?.url,
    async dispose() {
      await postgres?.drop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A running platform process. */
export interface PlatformProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Stops it (SIGTERM) and waits for its exit, by which time a CPU profile is written. */
  stop(): Promise<void>;
}

/** Starts the real platform (bench/platform-server.ts) on `database`; `env` adds to its settings. */
export async function startPlatformProcess(
  database: BenchDatabase,
  env: Record<string, string> = {},
): Promise<PlatformProcess> {
  const { child, line } = await startChild(
    'packages/server/bench/platform-server.ts',
    { ...database.env, ...env },
    undefined,
    platformExecArgv(),
  );
  pinServer(child);
  return {
    url: urlOf(line),
    child,
    stop: () => stopChild(child),
  };
}

/** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A merchant onboarded through the operator API, as the bench signs for it. */
export interface BenchMerchant {
  readonly accessKey: string;
  readonly bodyKey: { keyId: string; publicKey: Buffer };
}

export async function onboard(platformUrl: string, database: BenchDatabase, signer: Signer): Promise<BenchMerchant> {
  const response = await fetch(`${platformUrl}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${database.env.PAYGATE_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', publicKey: signer.key.publicKey.toString('base64') }),
  });
  const { data } = (await response.json()) as {
    data: { accessKey: string; bodyKey: { keyId: string; publicKey: string } };
  };
  return {
    accessKey: data.accessKey,
    bodyKey: { keyId: data.bodyKey.keyId, publicKey: Buffer.from(data.bodyKey.publicKey, 'base64') },
  };
}

/** Creates one payment and returns its order number (the order the query load reads). */
export async function createOne(platformUrl: string, signer: Signer, merchant: BenchMerchant): Promise<string> {
  const probe = signer.creates(merchant.accessKey, merchant.bodyKey, 1)[0] as Prepared;
  const response = await fetch(platformUrl + probe.path, { method: 'POST', headers: probe.headers, body: probe.body });
  const created = (await response.json()) as { data: { orderNo: string } };
  return created.data.orderNo;
}

/**
 * The auth-only ceiling server (bench/ceiling-server.ts) for `merchant`'s signing key. `answers`
 * gives, by path under /api/v1, the `data` its GET answers (the real platform's answer to the same
 * read, so that both serialize the same bytes); `{}` for a path not given.
 */
export async function startCeiling(
  signer: Signer,
  accessKey: string,
  answers: Readonly<Record<string, unknown>> = {},
): Promise<{ url: string; child: ChildProcess; bodyKey: { keyId: string; publicKey: Buffer } }> {
  const box = generateBoxKeyPair();
  const { child, line } = await startChild(
    'packages/server/bench/ceiling-server.ts',
    {
      PUBLIC_KEY: signer.key.publicKey.toString('base64'),
      BODY_SECRET: box.secretKey.toString('base64'),
      ACCESS_KEY: accessKey,
      ANSWERS: JSON.stringify(answers),
    },
    undefined,
    profileExecArgv('ceiling'),
  );
  pinServer(child);
  return { url: urlOf(line), child, bodyKey: { keyId: 'bench', publicKey: box.publicKey } };
}

/** A table row of a bench run, with its share of `base` when given. */
export function runRow(name: string, r: Run, base?: Run): string {
  const cpu = (ms: number) => (ms * 1000).toFixed(0).padStart(6);
  return `| ${name.padEnd(44)} | ${r.rps.toFixed(0).padStart(7)} | ${r.p50.toFixed(1).padStart(6)} | ${r.p99
    .toFixed(1)
    .padStart(6)} | ${base ? `${((100 * r.rps) / base.rps).toFixed(0)}%`.padStart(8) : '       —'} | ${String(
    r.errors,
  ).padStart(6)} | ${cpu(r.cpu.server)} | ${cpu(r.cpu.database)} |`;
}

export const RUN_HEADER = [
  '| scenario                                     |   req/s | p50 ms | p99 ms | of ceil. | errors | srv µs |  db µs |',
  '|----------------------------------------------|---------|--------|--------|----------|--------|--------|--------|',
];

/**
 * The ceiling server's CPU per 2xx over the platform server's, in one pair of rounds: what the
 * platform's own process spends beyond verifying and answering. The load generator costs the same
 * on both sides and is in neither; the platform's PostgreSQL backends are reported apart.
 */
export function cpuRatio(platform: Run, ceiling: Run): number {
  return ceiling.cpu.server / platform.cpu.server;
}

/** One target line: `name value (target …): PASS|FAIL`. */
export const verdict = (text: string, pass: boolean) => `${text}: ${pass ? 'PASS' : 'FAIL'}`;
