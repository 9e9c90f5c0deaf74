// `npm run bench` (section memory): the resident set of one platform instance under steady load
// (signed creates and queries, 32 in flight, workers and sweeper on) for BENCH_MEMORY_MINUTES
// (default 10). Target: the resident set at the end within 20 % of its size after the first minute.
// Each sample also says where the resident set lies (/proc/<pid>/smaps): the embedded database's
// WebAssembly memory, malloc's heap, and the rest (V8's heap, code).
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

/** Where a resident set lies: the embedded database's memory, malloc's heap, the rest (V8, code). */
interface ResidentParts {
  readonly embedded: number;
  readonly malloc: number;
  readonly rest: number;
}

/**
 * The resident set split by mapping (/proc/<pid>/smaps), in MiB: the embedded database's
 * WebAssembly memory is the one anonymous mapping of exactly `embeddedBytes` (what the platform's
 * paygate_embedded_database_memory_bytes reports); `[heap]` is malloc's.
 */
function residentParts(pid: number, embeddedBytes: number | undefined): ResidentParts | undefined {
  let smaps: string;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const parts = { embedded: 0, malloc: 0, rest: 0 };
  let part: keyof ResidentParts = 'rest';
  for (const line of smaps.split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const size = Number(BigInt(`0x${mapping[2]}`) - BigInt(`0x${mapping[1]}`));
      const name = mapping[3] ?? '';
      part = name === '[heap]' ? 'malloc' : name === '' && size === embeddedBytes ? 'embedded' : 'rest';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB$/.exec(line);
    if (rss) parts[part] += Number(rss[1]) / 1024;
  }
  return parts;
}

/** The embedded database's memory as the platform reports it; undefined on PostgreSQL. */
async function embeddedMemoryBytes(url: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^paygate_embedded_database_memory_bytes (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

const partsText = (p: ResidentParts | undefined) =>
  p
    ? ` (${p.embedded > 0 ? `embedded database ${p.embedded.toFixed(0)}, ` : ''}malloc ${p.malloc.toFixed(0)}, the rest ${p.rest.toFixed(0)})`
    : '';

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
    type Sample = { minute: number; rss: number; parts: ResidentParts | undefined };
    const samples: Sample[] = [];
    let requests = 0;
    let errors = 0;
    let firstMinute: Sample | undefined;
    // Asked once (a scrape runs the gauges' queries), and again only when the memory has grown
    // and no mapping has the size any more.
    let embeddedBytes = database.kind === 'pglite' ? await embeddedMemoryBytes(platform.url) : undefined;
    // Requests are signed batch by batch, just before they are sent, so that none expires waiting.
    while (elapsedMin() < MINUTES) {
      const creates = await fire(platform.url, signer.creates(merchant.accessKey, merchant.bodyKey, BATCH));
      const queries = await fire(platform.url, signer.queries(merchant.accessKey, orders, BATCH));
      requests += 2 * BATCH;
      errors += creates.errors + queries.errors;
      const minute = elapsedMin();
      const rss = rssMiB(pid);
      let parts = residentParts(pid, embeddedBytes);
      if (embeddedBytes !== undefined && parts?.embedded === 0) {
        embeddedBytes = await embeddedMemoryBytes(platform.url);
        parts = residentParts(pid, embeddedBytes);
      }
      const sample = { minute, rss, parts };
      samples.push(sample);
      if (firstMinute === undefined && minute >= Math.min(1, MINUTES / 2)) firstMinute = sample;
    }
    const last = samples.at(-1) as Sample;
    const first = firstMinute ?? last;
    const at = (minute: number) =>
      samples.reduce((best, s) => (Math.abs(s.minute - minute) < Math.abs(best.minute - minute) ? s : best));
    const marks = [...[1, 2, 5].filter((m) => m < last.minute - 0.5).map((m) => at(m)), last];

    console.log(
      `\ndatabase: ${databaseLabel(database.kind)}; ${CONCURRENCY} in flight; ${requests.toLocaleString('en')} requests (${errors} errors) in ${last.minute.toFixed(1)} min; workers and sweeper on`,
    );
    console.log(
      `resident set (MiB): ${marks.map((s) => `${s.minute.toFixed(1)} min ${s.rss.toFixed(0)}${partsText(s.parts)}`).join(', ')}`,
    );
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
