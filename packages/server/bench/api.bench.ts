// `npm run bench` (section api): every signed read path, signed creates and a shop's mix of them,
// per second against the real server on PostgreSQL and on the embedded PGlite, driven from this
// process with pre-signed requests, each next to the ceiling: the same auth scope answering the
// same bytes without touching storage.
import {
  backendsOf,
  benchDatabase,
  benchDatabases,
  type BenchDatabase,
  type BenchMerchant,
  type Charged,
  CONCURRENCY,
  cpuRatio,
  databaseLabel,
  fire,
  median,
  onboard,
  type Prepared,
  RUN_HEADER,
  type Run,
  runRow,
  Signer,
  startCeiling,
  startPlatformProcess,
  stopChild,
  verdict,
} from './load.js';
import { percent, STEAL_LIMIT } from '../../../scripts/steal.mjs';

const CREATES = Number(process.env.BENCH_CREATES ?? 4_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 6_000);
/**
 * Alternating rounds per row (BENCH_API_ROUNDS). Five, not three: on a shared 2-core virtual
 * machine a round's ratio swings by tens of points (one balances row read 57/106/103 %), and the
 * median of three still lands on a bad moment often enough to decide a verdict.
 */
const ROUNDS = Number(process.env.BENCH_API_ROUNDS ?? 5);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
  throw new Error(`BENCH_API_ROUNDS is a whole number ≥ 1, not ${process.env.BENCH_API_ROUNDS}`);
/** BENCH_API_ROWS=mix,merchantOrderNo: only the rows whose names contain one of these (default: every row). */
const ROWS = (process.env.BENCH_API_ROWS ?? '')
  .split(',')
  .map((row) => row.trim())
  .filter(Boolean);
/** Orders the reads go through in turn: requests in flight together read different rows. */
const ORDERS = 64;

type Kind = 'postgres' | 'pglite';

/** What one scenario sends, signed for a server with `bodyKey` (the ceiling and the platform have their own). */
type Requests = (bodyKey: BenchMerchant['bodyKey']) => Prepared[];

interface Scenario {
  readonly name: string;
  readonly target: Readonly<Record<Kind, number>>;
  readonly requests: Requests;
}

/** The issue's targets (Performance II): share of the ceiling per database. */
const READ_TARGET = { postgres: 0.65, pglite: 0.45 };
const CREATE_TARGET = { postgres: 0.6, pglite: 0.45 };
const MIX_TARGET = { postgres: 0.6, pglite: 0.4 };
const P99_TARGET_MS = 25;

/** An order as both of its references read it. */
interface Refs {
  readonly orderNo: string;
  readonly merchantOrderNo: string;
}

async function send(url: string, request: Prepared): Promise<{ data: Record<string, unknown> }> {
  const response = await fetch(url + request.path, {
    method: request.method,
    headers: request.headers,
    ...(request.body ? { body: request.body } : {}),
  });
  const body = (await response.json()) as { msg: string; data: Record<string, unknown> };
  if (response.status !== 200) throw new Error(`${request.method} ${request.path}: ${JSON.stringify(body)}`);
  return body;
}

/**
 * The orders the reads read: payments (a quarter of them paid, which funds the payouts) and
 * payouts, each created through the signed API.
 */
async function seed(
  url: string,
  signer: Signer,
  merchant: BenchMerchant,
): Promise<{ payments: Refs[]; payouts: Refs[] }> {
  const write = (path: string, payload: unknown) =>
    send(url, signer.write(merchant.accessKey, merchant.bodyKey, path, payload));
  const refsOf = ({ data }: { data: Record<string, unknown> }): Refs => ({
    orderNo: data.orderNo as string,
    merchantOrderNo: data.merchantOrderNo as string,
  });
  const payments: Refs[] = [];
  for (const request of signer.creates(merchant.accessKey, merchant.bodyKey, ORDERS)) {
    payments.push(refsOf(await send(url, request)));
  }
  for (const payment of payments.slice(0, ORDERS / 4)) {
    await write('/api/v1/sandbox/payments/simulate', { orderNo: payment.orderNo, status: 'SUCCEEDED' });
  }
  const payouts: Refs[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const created = await write('/api/v1/payouts', {
      merchantOrderNo: `BW-${Date.now()}-${i}`,
      currency: 'BRL',
      amount: '1.00',
      webhookUrl: 'https://merchant.example/webhook/payout',
      payee: { name: 'Bench Payee', accountNumber: `0001-${i}`, bankCode: '001', documentNumber: '12345678909' },
    });
    payouts.push(refsOf(created));
  }
  return { payments, payouts };
}

/** Every scenario, each a row of the table with its target. */
function scenarios(signer: Signer, accessKey: string, orders: { payments: Refs[]; payouts: Refs[] }): Scenario[] {
  const by = (refs: Refs[], key: keyof Refs) => refs.map((ref) => `${key}=${encodeURIComponent(ref[key])}`);
  const reads =
    (path: string, queries: string[]): Requests =>
    () =>
      signer.reads(accessKey, path, queries, QUERIES);
  /** A shop's traffic, per 10 requests: 2 creates, 5 reads by merchantOrderNo, 1 by orderNo, 1 balance, 1 list. */
  const mix: Requests = (bodyKey) => {
    const creates = signer.creates(accessKey, bodyKey, Math.ceil(QUERIES / 5));
    const byMerchantNo = by(orders.payments, 'merchantOrderNo');
    const byOrderNo = by(orders.payments, 'orderNo');
    let i = 0;
    const slots: (() => Prepared)[] = [
      () => creates.pop() as Prepared,
      () => signer.read(accessKey, '/api/v1/payments', byMerchantNo[i % byMerchantNo.length] as string),
      () => signer.read(accessKey, '/api/v1/payments', byMerchantNo[(i + 7) % byMerchantNo.length] as string),
      () => signer.read(accessKey, '/api/v1/payments', byOrderNo[i % byOrderNo.length] as string),
      () => signer.read(accessKey, '/api/v1/payments', byMerchantNo[(i + 13) % byMerchantNo.length] as string),
      () => signer.read(accessKey, '/api/v1/balances', ''),
      () => creates.pop() as Prepared,
      () => signer.read(accessKey, '/api/v1/payments', byMerchantNo[(i + 29) % byMerchantNo.length] as string),
      () => signer.read(accessKey, '/api/v1/payments/list', ''),
      () => signer.read(accessKey, '/api/v1/payments', byMerchantNo[(i + 41) % byMerchantNo.length] as string),
    ];
    const requests: Prepared[] = [];
    for (; i < QUERIES; i++) requests.push((slots[i % slots.length] as () => Prepared)());
    return requests;
  };
  return [
    {
      name: 'create payment (POST)',
      target: CREATE_TARGET,
      requests: (bodyKey) => signer.creates(accessKey, bodyKey, CREATES),
    },
    {
      name: 'payment by orderNo',
      target: READ_TARGET,
      requests: reads('/api/v1/payments', by(orders.payments, 'orderNo')),
    },
    {
      name: 'payment by merchantOrderNo',
      target: READ_TARGET,
      requests: reads('/api/v1/payments', by(orders.payments, 'merchantOrderNo')),
    },
    {
      name: 'payout by orderNo',
      target: READ_TARGET,
      requests: reads('/api/v1/payouts', by(orders.payouts, 'orderNo')),
    },
    {
      name: 'payout by merchantOrderNo',
      target: READ_TARGET,
      requests: reads('/api/v1/payouts', by(orders.payouts, 'merchantOrderNo')),
    },
    {
      name: 'payout receipt',
      target: READ_TARGET,
      requests: reads('/api/v1/payouts/receipt', by(orders.payouts, 'orderNo')),
    },
    { name: 'balances', target: READ_TARGET, requests: reads('/api/v1/balances', ['']) },
    { name: 'payments list, first page (20)', target: READ_TARGET, requests: reads('/api/v1/payments/list', ['']) },
    { name: 'payouts list, first page (20)', target: READ_TARGET, requests: reads('/api/v1/payouts/list', ['']) },
    { name: 'shop mix (2 creates, 8 reads per 10)', target: MIX_TARGET, requests: mix },
  ];
}

/** Every scenario against the real platform on one database, each next to the ceiling. */
async function benchmark(database: BenchDatabase): Promise<void> {
  const kind = database.kind;
  const signer = new Signer();
  const platform = await startPlatformProcess(database);
  const backends = database.url ? await backendsOf(database.url) : undefined;
  try {
    const merchant = await onboard(platform.url, database, signer);
    // Warm the platform up (JIT, connection pool), and make the lists' first pages full.
    await fire(platform.url, signer.creates(merchant.accessKey, merchant.bodyKey, 500));
    const orders = await seed(platform.url, signer, merchant);
    // The ceiling answers each read with the platform's own answer to it: the same bytes to write.
    const answers: Record<string, unknown> = {};
    const first = { payment: orders.payments[0] as Refs, payout: orders.payouts[0] as Refs };
    for (const [path, query] of [
      ['/payments', `orderNo=${first.payment.orderNo}`],
      ['/payouts', `orderNo=${first.payout.orderNo}`],
      ['/payouts/receipt', `orderNo=${first.payout.orderNo}`],
      ['/balances', ''],
      ['/payments/list', ''],
      ['/payouts/list', ''],
    ] as const) {
      answers[path] = (await send(platform.url, signer.read(merchant.accessKey, `/api/v1${path}`, query))).data;
    }
    const ceiling = await startCeiling(signer, merchant.accessKey, answers);
    const real: Charged = { server: platform.child.pid as number, ...(backends ? { database: backends.pids } : {}) };
    const ceil: Charged = { server: ceiling.child.pid as number };
    try {
      const all = scenarios(signer, merchant.accessKey, orders).filter(
        (scenario) => ROWS.length === 0 || ROWS.some((row) => scenario.name.includes(row)),
      );
      // Both servers warmed up on every path: a cold first round made that round's ratio read high.
      for (const scenario of all) {
        await fire(ceiling.url, scenario.requests(ceiling.bodyKey).slice(0, 500));
        await fire(platform.url, scenario.requests(merchant.bodyKey).slice(0, 500));
      }

      console.log(
        `\ndatabase: ${databaseLabel(kind)}; ${CONCURRENCY} requests in flight; server and load generator in separate processes; median of ${ROUNDS} alternating rounds per row`,
      );
      for (const line of RUN_HEADER) console.log(line);
      const verdicts: string[] = [];
      let worstP99 = { ms: 0, name: '' };
      let roundsRedone = 0;
      const stolenRows: string[] = [];
      for (const scenario of all) {
        // Ceiling and platform alternate, and the median round counts: a slow moment of the
        // machine then hurts both sides of a ratio alike, or neither.
        // A pair measured while the hypervisor took more than STEAL_LIMIT of the CPU is measured
        // again (up to twice ROUNDS times a row); one kept all the same is reported below.
        const ceilingRuns: Run[] = [];
        const realRuns: Run[] = [];
        let redone = 0;
        while (realRuns.length < ROUNDS) {
          const ceilingRun = await fire(ceiling.url, scenario.requests(ceiling.bodyKey), ceil);
          const realRun = await fire(platform.url, scenario.requests(merchant.bodyKey), real);
          if (Math.max(ceilingRun.steal, realRun.steal) > STEAL_LIMIT && redone < 2 * ROUNDS) {
            redone++;
            continue;
          }
          ceilingRuns.push(ceilingRun);
          realRuns.push(realRun);
        }
        roundsRedone += redone;
        const steal = Math.max(...ceilingRuns.map((r) => r.steal), ...realRuns.map((r) => r.steal));
        if (steal > STEAL_LIMIT) stolenRows.push(`${scenario.name} (${percent(steal)})`);
        const ceilingRun = median(ceilingRuns);
        const realRun = median(realRuns);
        console.log(runRow(`ceiling: ${scenario.name}`, ceilingRun));
        console.log(runRow(scenario.name, realRun, ceilingRun));
        const ratio = realRun.rps / ceilingRun.rps;
        const rounds = realRuns.map((r, i) => `${((100 * r.rps) / (ceilingRuns[i] as Run).rps).toFixed(0)}`).join('/');
        const cpu = cpuRatio(realRun, ceilingRun);
        const goal = scenario.target[kind];
        verdicts.push(
          verdict(
            `${scenario.name}: ${(100 * ratio).toFixed(0)}% of the ceiling (rounds ${rounds}%; by CPU ${(100 * cpu).toFixed(0)}%; steal ≤ ${percent(steal)}${redone > 0 ? `, ${redone} ${redone === 1 ? 'pair' : 'pairs'} measured again` : ''}; target ≥ ${100 * goal}%)`,
            ratio >= goal,
          ),
        );
        if (realRun.p99 > worstP99.ms) worstP99 = { ms: realRun.p99, name: scenario.name };
      }
      console.log('');
      for (const line of verdicts) console.log(line);
      console.log(
        verdict(
          `p99 at ${CONCURRENCY} in flight, worst row ${worstP99.ms.toFixed(1)} ms (${worstP99.name}; target < ${P99_TARGET_MS} ms)`,
          worstP99.ms < P99_TARGET_MS,
        ),
      );
      console.log(
        `hypervisor steal: ${roundsRedone} pairs of rounds measured again for more than ${percent(STEAL_LIMIT)} of the CPU stolen; ` +
          (stolenRows.length === 0
            ? 'every kept round under that'
            : `rows kept with a stolen round, whose figures describe the host as much as the code: ${stolenRows.join(', ')}`),
      );
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
