// `npm run bench` (section memory): the resident set of one platform instance under steady load
// (signed creates and queries, 32 in flight, workers and sweeper on) for BENCH_MEMORY_MINUTES
// (default 10). Target: the resident set at the end within 20 % of its size after the first minute.
import { readFileSync } from 'node:fs';
import {
  benchDatabase,
  benchDatabases,
  type BenchDatabase,
  CONCURRENCY,
  createOne,
  databaseLabel,
  fire,
  onboard,
  Signer,
  startPlatformProcess,
  verdict,
} from './load.js';

const MINUTES = Number(process.env.BENCH_MEMORY_MINUTES ?? 10);
const BATCH = 1_000;

/** Resident set of a process in MiB (VmRSS), or NaN when it is gone. */
function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function benchmark(database: BenchDatabase): Promise<void> {
  const signer = new Signer();
  const platform = await startPlatformProcess(database, { PAYGATE_WORKERS: 'true' });
  try {
    const pid = platform.child.pid as number;
    const merchant = await onboard(platform.url, database, signer);
    const orders: string[] = [];
    for (let i = 0; i < 20; i++) orders.push(await createOne(platform.url, signer, merchant));
    const started = performance.now();
    const elapsedMin = () => (performance.now() - started) / 60_000;
    const samples: { minute: number; rss: number }[] = [];
    let requests = 0;
    let errors = 0;
    let firstMinute: { minute: number; rss: number } | undefined;
    // Requests are signed batch by batch, just before they are sent, so that none expires waiting.
    while (elapsedMin() < MINUTES) {
      const creates = await fire(platform.url, signer.creates(merchant.accessKey, merchant.bodyKey, BATCH));
      const queries = await fire(platform.url, signer.queries(merchant.accessKey, orders, BATCH));
      requests += 2 * BATCH;
      errors += creates.errors + queries.errors;
      const minute = elapsedMin();
      const rss = rssMiB(pid);
      samples.push({ minute, rss });
      if (firstMinute === undefined && minute >= Math.min(1, MINUTES / 2)) firstMinute = { minute, rss };
    }
    const last = samples.at(-1) as { minute: number; rss: number };
    const first = firstMinute ?? last;
    const at = (minute: number) =>
      samples.reduce((best, s) => (Math.abs(s.minute - minute) < Math.abs(best.minute - minute) ? s : best));
    const marks = [...[1, 2, 5].filter((m) => m < last.minute - 0.5).map((m) => at(m)), last];

    console.log(
      `\ndatabase: ${databaseLabel(database.kind)}; ${CONCURRENCY} in flight; ${requests.toLocaleString('en')} requests (${errors} errors) in ${last.minute.toFixed(1)} min; workers and sweeper on`,
    );
    console.log(`resident set: ${marks.map((s) => `${s.minute.toFixed(1)} min ${s.rss.toFixed(0)} MiB`).join(', ')}`);
    const growth = last.rss / first.rss - 1;
    console.log(
      verdict(
        `RSS after ${last.minute.toFixed(1)} min ${last.rss.toFixed(0)} MiB vs ${first.rss.toFixed(0)} MiB after ${first.minute.toFixed(1)} min (${growth >= 0 ? '+' : ''}${(100 * growth).toFixed(0)}%, target within 20%)`,
        growth <= 0.2,
      ),
    );
  } finally {
    await platform.stop();
    await database.dispose();
  }
}

for (const kind of benchDatabases()) {
  const database = await benchDatabase(kind);
  if (database) await benchmark(database);
  else console.log('\nPostgreSQL: none answered; skipped');
}
