// `npm run bench` (section api): signed creates and signed queries per second against the real
// server on PostgreSQL and on the embedded PGlite, driven from this process with pre-signed
// requests, each next to the ceiling: the same auth scope answering without touching storage.
import {
  backendsOf,
  benchDatabase,
  benchDatabases,
  type BenchDatabase,
  type Charged,
  CONCURRENCY,
  cpuRatio,
  createOne,
  databaseLabel,
  fire,
  median,
  onboard,
  RUN_HEADER,
  type Run,
  runRow,
  Signer,
  startCeiling,
  startPlatformProcess,
  stopChild,
  verdict,
} from './load.js';

const CREATES = Number(process.env.BENCH_CREATES ?? 4_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 6_000);
const ROUNDS = 3;

/** Creates and queries against the real platform on one database, each next to the ceiling. */
async function benchmark(database: BenchDatabase): Promise<void> {
  const signer = new Signer();
  const platform = await startPlatformProcess(database);
  const backends = database.url ? await backendsOf(database.url) : undefined;
  try {
    const merchant = await onboard(platform.url, database, signer);
    const ceiling = await startCeiling(signer, merchant.accessKey);
    const real: Charged = { server: platform.child.pid as number, ...(backends ? { database: backends.pids } : {}) };
    const ceil: Charged = { server: ceiling.child.pid as number };
    try {
      // Warm both servers up (JIT, connection pool) before measuring, on both paths.
      await fire(ceiling.url, signer.creates(merchant.accessKey, ceiling.bodyKey, 500));
      await fire(platform.url, signer.creates(merchant.accessKey, merchant.bodyKey, 500));
      // Queries read 64 different orders in turn: requests in flight together read different rows.
      const orderNo: string[] = [];
      for (let i = 0; i < 64; i++) orderNo.push(await createOne(platform.url, signer, merchant));
      await fire(platform.url, signer.queries(merchant.accessKey, orderNo, 500));
      // The ceiling's read path too: a cold first round of it made that round's ratio read high.
      await fire(ceiling.url, signer.queries(merchant.accessKey, orderNo, 500));

      // Ceiling and platform alternate, three rounds each, and the median round counts: a slow
      // moment of the machine then hurts both sides of a ratio alike, or neither.
      const rounds: Record<'ceilingCreate' | 'realCreate' | 'ceilingQuery' | 'realQuery', Run[]> = {
        ceilingCreate: [],
        realCreate: [],
        ceilingQuery: [],
        realQuery: [],
      };
      for (let round = 0; round < ROUNDS; round++) {
        rounds.ceilingCreate.push(
          await fire(ceiling.url, signer.creates(merchant.accessKey, ceiling.bodyKey, CREATES), ceil),
        );
        rounds.realCreate.push(
          await fire(platform.url, signer.creates(merchant.accessKey, merchant.bodyKey, CREATES), real),
        );
        rounds.ceilingQuery.push(await fire(ceiling.url, signer.queries(merchant.accessKey, orderNo, QUERIES), ceil));
        rounds.realQuery.push(await fire(platform.url, signer.queries(merchant.accessKey, orderNo, QUERIES), real));
      }
      const ceilingCreate = median(rounds.ceilingCreate);
      const realCreate = median(rounds.realCreate);
      const ceilingQuery = median(rounds.ceilingQuery);
      const realQuery = median(rounds.realQuery);

      console.log(
        `\ndatabase: ${databaseLabel(database.kind)}; ${CONCURRENCY} requests in flight; server and load generator in separate processes; median of ${ROUNDS} alternating rounds`,
      );
      for (const line of RUN_HEADER) console.log(line);
      console.log(runRow('ceiling: signed sealed POST, no DB', ceilingCreate));
      console.log(runRow('create payment (POST)', realCreate, ceilingCreate));
      console.log(runRow('ceiling: signed GET, no DB', ceilingQuery));
      console.log(runRow('query payment (GET)', realQuery, ceilingQuery));
      const all = (runs: Run[], base: Run[]) =>
        runs.map((r, i) => `${((100 * r.rps) / (base[i] as Run).rps).toFixed(0)}%`).join(' ');
      console.log(
        `rounds: creates ${all(rounds.realCreate, rounds.ceilingCreate)}, queries ${all(rounds.realQuery, rounds.ceilingQuery)} of the ceiling`,
      );
      const medianCpu = (runs: Run[], base: Run[]) =>
        runs.map((r, i) => cpuRatio(r, base[i] as Run)).sort((x, y) => x - y)[Math.floor(runs.length / 2)] as number;
      console.log(
        `CPU-bound estimate (cross-check, not a target): creates ${(100 * medianCpu(rounds.realCreate, rounds.ceilingCreate)).toFixed(0)}%, queries ${(100 * medianCpu(rounds.realQuery, rounds.ceilingQuery)).toFixed(0)}% of the ceiling`,
      );
      const target = database.kind === 'postgres' ? { create: 0.5, query: 0.6 } : { create: 0.3, query: 0.4 };
      const ratio = (r: Run, base: Run) => r.rps / base.rps;
      const check = (name: string, value: number, goal: number) =>
        verdict(`${name} ${(100 * value).toFixed(0)}% of the ceiling (target ≥ ${100 * goal}%)`, value >= goal);
      console.log(check('creates', ratio(realCreate, ceilingCreate), target.create));
      console.log(check('queries', ratio(realQuery, ceilingQuery), target.query));
      if (database.kind === 'postgres') {
        const p99 = Math.max(realCreate.p99, realQuery.p99);
        console.log(verdict(`p99 ${p99.toFixed(1)} ms at ${CONCURRENCY} in flight (target < 50 ms)`, p99 < 50));
      }
    } finally {
      await stopChild(ceiling.child);
    }
  } finally {
    await backends?.close();
    await platform.stop();
    await database.dispose();
  }
}

// Both databases, PostgreSQL first (when one answers), then the embedded default.
for (const kind of benchDatabases()) {
  const database = await benchDatabase(kind);
  if (database) await benchmark(database);
  else console.log('\nPostgreSQL: none answered; skipped');
}
