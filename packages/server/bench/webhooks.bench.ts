// `npm run bench`: verified webhook deliveries per second with one worker, and the time one worker
// takes to drain a backlog of 10,000 due events, on PostgreSQL (a `paygate worker` process beside
// the platform) and on the embedded default (PGlite: the platform's own dispatcher, as `npx paygate`
// runs). The receiver is a merchant's server built with the merchant SDK in its own process: it
// verifies every signature and parses every event before answering 200.
//
// BENCH_DATABASE=postgres|pglite runs one database only; BENCH_WEBHOOK_ROUNDS sets the measured
// rounds (default 3); BENCH_CPU_PROF=<dir> writes CPU profiles of the delivering process and the receiver there.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostAsk } from './webhook-host.js';
import { postgresUrl, startChild, urlOf } from './support.js';

const BACKLOG = 10_000;
const WARM_UP = 1_000;
const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3);
const TARGET_PER_SECOND = 2_000;
const TARGET_DRAIN_SECONDS = 5;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');

interface Child {
  readonly child: ChildProcess;
  readonly line: string;
}

/**
 * Starts a TypeScript file under the repository root (with an IPC channel when `ipc`) and resolves
 * with the first stdout line `ready` accepts.
 */
function start(
  script: string,
  env: Record<string, string>,
  options: { ready?: (line: string) => boolean; ipc?: boolean; profile?: string } = {},
): Promise<Child> {
  const profile = options.profile && PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  return startChild(script, env, options.ready, profile, options.ipc);
}

/** Asks the host (webhook-host.ts) to do something and waits for its answer. */
function ask(host: ChildProcess, request: HostAsk): Promise<unknown> {
  const id = Math.random();
  return new Promise((resolve, reject) => {
    const onMessage = (message: { id: number; value?: unknown; error?: string }) => {
      if (message.id !== id) return;
      host.off('message', onMessage);
      if (message.error) reject(new Error(message.error));
      else resolve(message.value);
    };
    host.on('message', onMessage);
    host.send({ ...request, id });
  });
}

const stop = (children: ChildProcess[]) =>
  Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve(undefined);
          child.once('exit', resolve);
          child.kill('SIGTERM');
        }),
    ),
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds each of these processes has used so far, by pid (Linux /proc; none elsewhere). */
function cpuSeconds(pids: readonly (number | undefined)[]): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of pids) {
    try {
      // After the command name: state is the 1st field, utime the 12th, stime the 13th (in ticks).
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      used.set(pid as number, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // gone, or no /proc
    }
  }
  return used;
}

/** CPU seconds used between two readings, by the processes present in both (a pool may close one). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number | undefined {
  let total: number | undefined;
  for (const [pid, at] of before) {
    const now = after.get(pid);
    if (now !== undefined) total = (total ?? 0) + now - at;
  }
  return total;
}

interface Drain {
  readonly seconds: number;
  readonly perSecond: number;
  /**
   * CPU milliseconds per delivery: the delivering process, the receiver, PostgreSQL's backends
   * (those connected when the round starts).
   */
  readonly cpuMs: readonly (number | undefined)[];
}

async function benchmark(database: Awaited<ReturnType<typeof postgresUrl>>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paygate-bench-'));
  const env: Record<string, string> = { PAYGATE_MASTER_KEY: MASTER_KEY, PAYGATE_DATA_DIR: dataDir };
  if (database) env.DATABASE_URL = database.url;
  const children: ChildProcess[] = [];
  try {
    // With PGlite the platform delivers itself; with PostgreSQL the workers do.
    const host = await start(
      'packages/server/bench/webhook-host.ts',
      { ...env, PAYGATE_WORKERS: database ? 'false' : 'true' },
      { ipc: true, ...(database ? {} : { profile: 'host' }) },
    );
    children.push(host.child);
    const { webhookKeys } = JSON.parse(host.line) as { webhookKeys: unknown };
    const receiverChild = await start(
      'packages/server/bench/receiver-server.ts',
      { WEBHOOK_KEYS: JSON.stringify(webhookKeys) },
      { profile: 'receiver' },
    );
    children.push(receiverChild.child);
    const receiver = urlOf(receiverChild.line);
    // A host name, as merchants' URLs have: every delivery goes through the SSRF guard's lookup.
    const hook = `${receiver.replace('127.0.0.1', 'localhost')}/webhook/payment?shop=bench`;
    const stats = async () => (await (await fetch(receiver)).json()) as { verified: number; refused: number };

    const workers = async (count: number) => {
      if (!database) return [];
      const started = await Promise.all(
        Array.from({ length: count }, () =>
          start(
            'packages/server/src/worker/main.ts',
            { ...env, LOG_LEVEL: 'info' },
            { ready: (line) => line.includes('paygate worker started'), ...(count === 1 ? { profile: 'worker' } : {}) },
          ),
        ),
      );
      children.push(...started.map((s) => s.child));
      return started.map((s) => s.child);
    };

    /**
     * Seeds `count` due events and times until every one is verified and settled as delivered;
     * with the CPU time the delivering process and the receiver spent on them.
     */
    const drain = async (run: string, count: number, delivering: ChildProcess[]): Promise<Drain> => {
      const before = (await stats()).verified;
      await ask(host.child, { op: 'seed', run, count, url: hook });
      // The backends open now are those the drain uses (pools keep their connections meanwhile).
      const backends = (await ask(host.child, { op: 'backends' })) as number[];
      const processes = [delivering.map((child) => child.pid), [receiverChild.child.pid], backends];
      const cpuBefore = processes.map(cpuSeconds);
      const started = performance.now();
      // The receiver's count first (it costs the database nothing), then the settled rows.
      while ((await stats()).verified < before + count) await sleep(10);
      while (((await ask(host.child, { op: 'delivered', run })) as number) < count) await sleep(10);
      const seconds = (performance.now() - started) / 1000;
      const cpuMs = processes.map((pids, i) => {
        const used = cpuBetween(cpuBefore[i] as Map<number, number>, cpuSeconds(pids));
        return used === undefined ? undefined : (used * 1000) / count;
      });
      return { seconds, perSecond: count / seconds, cpuMs };
    };

    const one = await workers(1);
    // The delivering process: the worker on PostgreSQL, the platform itself on PGlite.
    const delivering = database ? one : [host.child];
    await drain('W', WARM_UP, delivering); // JIT, connections, caches; not measured
    const rounds: Drain[] = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push(await drain(`R${round}`, BACKLOG, delivering));
    await stop(one);
    let two: Drain | undefined;
    if (database) {
      const pair = await workers(2);
      two = await drain('T', BACKLOG, pair);
      await stop(pair);
    }
    const { verified, refused } = await stats();

    const sorted = [...rounds].sort((a, b) => a.seconds - b.seconds);
    const median = sorted[Math.floor(sorted.length / 2)] as Drain;
    const range = (f: (d: Drain) => number, digits: number) =>
      `${Math.min(...rounds.map(f)).toFixed(digits)}–${Math.max(...rounds.map(f)).toFixed(digits)}`;
    console.log(
      `\ndatabase: ${database ? 'PostgreSQL; one `paygate worker` process' : 'PGlite (embedded, the default); the platform process delivers'}; ` +
        `receiver: merchant SDK verifier in its own process; ${ROUNDS} rounds of ${BACKLOG.toLocaleString('en')} due events`,
    );
    console.log(
      '| scenario                  | drain s | deliveries/s | CPU ms per delivery: delivering | receiver | PostgreSQL |',
    );
    console.log(
      '|---------------------------|---------|--------------|---------------------------------|----------|------------|',
    );
    const ms = (value: number | undefined, width: number) =>
      (value === undefined ? '—' : value.toFixed(3)).padStart(width);
    const row = (name: string, d: Drain) =>
      `| ${name.padEnd(25)} | ${d.seconds.toFixed(2).padStart(7)} | ${d.perSecond.toFixed(0).padStart(12)} | ` +
      `${ms(d.cpuMs[0], 31)} | ${ms(d.cpuMs[1], 8)} | ${ms(d.cpuMs[2], 10)} |`;
    rounds.forEach((d, i) => console.log(row(`1 worker, round ${i + 1}`, d)));
    if (two) console.log(row('2 workers (no target)', two));
    console.log(`receiver: ${verified} verified, ${refused} refused`);
    const pass = (ok: boolean) => (refused === 0 && ok ? 'PASS' : 'FAIL');
    console.log(
      `deliveries/s with one worker: median ${median.perSecond.toFixed(0)} (range ${range((d) => d.perSecond, 0)}) ` +
        `(target ≥ ${TARGET_PER_SECOND}): ${pass(median.perSecond >= TARGET_PER_SECOND)}`,
    );
    console.log(
      `backlog of ${BACKLOG.toLocaleString('en')} drained in: median ${median.seconds.toFixed(2)} s (range ${range((d) => d.seconds, 2)} s) ` +
        `(target < ${TARGET_DRAIN_SECONDS} s): ${pass(median.seconds < TARGET_DRAIN_SECONDS)}`,
    );
  } finally {
    await stop(children);
    await database?.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Both databases, PostgreSQL first (when one answers), then the embedded default.
const only = process.env.BENCH_DATABASE;
if (only !== 'pglite') {
  const database = await postgresUrl();
  if (database) await benchmark(database);
  else console.log('\nPostgreSQL: none answered; skipped');
}
if (only !== 'postgres') await benchmark(undefined);
