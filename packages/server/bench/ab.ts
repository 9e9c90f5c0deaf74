// Not a section of `npm run bench`: an A/B of two checkouts of the platform on one machine, by the
// server's own CPU per 2xx answer (and its PostgreSQL backends'), for deciding whether a change to
// the request path is kept. Each checkout's platform runs on its own fresh database; rounds
// alternate A, B, A, B… per row and each figure is B's over A's within a pair, their median the
// row's. Pinned like the api section (the server under test on CPU 0, the generator and
// PostgreSQL on CPU 1) unless BENCH_PIN=0.
//
//   AB_A=/path/to/checkout-a AB_B=/path/to/checkout-b [BENCH_DATABASE=postgres|pglite]
//   [AB_ROWS=create,orderNo,merchantOrderNo,payout,receipt,balances,list,mix] [AB_ROUNDS=8] [AB_ROUND_MS=2000]
//   node --expose-gc --conditions=source --import tsx packages/server/bench/ab.ts
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  backendsOf,
  benchDatabase,
  benchDatabases,
  type BenchDatabase,
  type BenchMerchant,
  type Charged,
  fire,
  mid,
  onboard,
  type Prepared,
  pinBackends,
  pinByDefault,
  Signer,
  stopChild,
} from './load.js';
import { execFileSync } from 'node:child_process';

const A = process.env.AB_A;
const B = process.env.AB_B;
if (!A || !B) throw new Error('AB_A and AB_B name the two checkouts');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 8);
const ROUND_MS = Number(process.env.AB_ROUND_MS ?? 2_000);
const ROWS = (process.env.AB_ROWS ?? 'create,merchantOrderNo').split(',').filter(Boolean);

async function start(root: string, database: BenchDatabase) {
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', join(root, 'packages/server/bench/platform-server.ts')],
    { cwd: root, env: { ...process.env, ...database.env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = out.split('\n').find((l) => l.startsWith('{'));
      if (found) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`${root}: platform exited with ${code}`)));
  });
  child.stdout.resume();
  if (pinByDefault()) {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '0', String(child.pid)], { stdio: 'ignore' });
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '1', String(process.pid)], { stdio: 'ignore' });
  }
  return { child, url: (JSON.parse(line) as { url: string }).url };
}

interface Side {
  readonly name: string;
  readonly url: string;
  readonly merchant: BenchMerchant;
  readonly charged: () => Charged;
  readonly payments: { orderNo: string; merchantOrderNo: string }[];
  readonly payouts: { orderNo: string; merchantOrderNo: string }[];
}

async function post(side: { url: string }, request: Prepared) {
  const response = await fetch(side.url + request.path, {
    method: request.method,
    headers: request.headers,
    ...(request.body ? { body: request.body } : {}),
  });
  const body = (await response.json()) as { data: { orderNo: string; merchantOrderNo: string } };
  if (response.status !== 200) throw new Error(JSON.stringify(body));
  return body.data;
}

const signer = new Signer();

function requests(side: Side, row: string, n: number): Prepared[] {
  const key = side.merchant.accessKey;
  const q = (refs: Side['payments'], by: 'orderNo' | 'merchantOrderNo') =>
    refs.map((r) => `${by}=${encodeURIComponent(r[by])}`);
  switch (row) {
    case 'create':
      return signer.creates(key, side.merchant.bodyKey, n);
    case 'orderNo':
      return signer.reads(key, '/api/v1/payments', q(side.payments, 'orderNo'), n);
    case 'merchantOrderNo':
      return signer.reads(key, '/api/v1/payments', q(side.payments, 'merchantOrderNo'), n);
    case 'payout':
      return signer.reads(key, '/api/v1/payouts', q(side.payouts, 'orderNo'), n);
    case 'receipt':
      return signer.reads(key, '/api/v1/payouts/receipt', q(side.payouts, 'orderNo'), n);
    case 'balances':
      return signer.reads(key, '/api/v1/balances', [''], n);
    case 'list':
      return signer.reads(key, '/api/v1/payments/list', [''], n);
    case 'mix': {
      const creates = signer.creates(key, side.merchant.bodyKey, Math.ceil(n / 5));
      const reads = signer.reads(key, '/api/v1/payments', q(side.payments, 'merchantOrderNo'), n);
      return reads.map((read, i) => (i % 5 === 0 ? (creates.pop() as Prepared) : read));
    }
    default:
      throw new Error(`AB_ROWS: no row ${row}`);
  }
}

async function side(name: string, root: string, database: BenchDatabase) {
  const platform = await start(root, database);
  const merchant = await onboard(platform.url, database, signer);
  const backends = database.url ? await backendsOf(database.url) : undefined;
  const payments = [];
  for (const request of signer.creates(merchant.accessKey, merchant.bodyKey, 64))
    payments.push(await post(platform, request));
  for (const payment of payments.slice(0, 16)) {
    await post(
      platform,
      signer.write(merchant.accessKey, merchant.bodyKey, '/api/v1/sandbox/payments/simulate', {
        orderNo: payment.orderNo,
        status: 'SUCCEEDED',
      }),
    );
  }
  const payouts = [];
  for (let i = 0; i < 16; i++) {
    payouts.push(
      await post(
        platform,
        signer.write(merchant.accessKey, merchant.bodyKey, '/api/v1/payouts', {
          merchantOrderNo: `AB-${Date.now()}-${i}`,
          currency: 'BRL',
          amount: '1.00',
          webhookUrl: 'https://merchant.example/webhook/payout',
          payee: { name: 'Bench Payee', accountNumber: `0001-${i}`, bankCode: '001', documentNumber: '12345678909' },
        }),
      ),
    );
  }
  const s: Side = {
    name,
    url: platform.url,
    merchant,
    payments,
    payouts,
    charged: () => ({
      server: platform.child.pid as number,
      ...(backends ? { database: () => pinBackends(backends.pids()) } : {}),
    }),
  };
  return {
    side: s,
    close: async () => {
      await backends?.close();
      await stopChild(platform.child);
    },
  };
}

const µs = (ms: number) => (1000 * ms).toFixed(0);

for (const kind of benchDatabases()) {
  const databases = [await benchDatabase(kind), await benchDatabase(kind)];
  if (!databases[0] || !databases[1]) continue;
  const a = await side('A', A, databases[0]);
  const b = await side('B', B, databases[1]);
  try {
    for (const row of ROWS) {
      for (const s of [a.side, b.side]) await fire(s.url, requests(s, row, 1500));
      const ratios: number[] = [];
      const dbRatios: number[] = [];
      const srv: Record<'A' | 'B', number[]> = { A: [], B: [] };
      const db: Record<'A' | 'B', number[]> = { A: [], B: [] };
      for (let i = 0; i < ROUNDS; i++) {
        // Alternating which goes first, so that neither is always the one after a pause.
        const order = i % 2 === 0 ? [a.side, b.side] : [b.side, a.side];
        const runs: Record<string, Awaited<ReturnType<typeof fire>>> = {};
        for (const s of order) {
          runs[s.name] = await fire(s.url, requests(s, row, Math.ceil(ROUND_MS * 6)), s.charged(), 32, ROUND_MS);
        }
        const [ra, rb] = [runs.A, runs.B] as [NonNullable<(typeof runs)['A']>, NonNullable<(typeof runs)['B']>];
        srv.A.push(ra.cpu.server);
        srv.B.push(rb.cpu.server);
        db.A.push(ra.cpu.database);
        db.B.push(rb.cpu.database);
        ratios.push(rb.cpu.server / ra.cpu.server);
        if (ra.cpu.database > 0) dbRatios.push(rb.cpu.database / ra.cpu.database);
      }
      const spread = Math.max(...ratios) - Math.min(...ratios);
      console.log(
        `${kind} ${row}: server µs per 2xx A ${µs(mid(srv.A))} B ${µs(mid(srv.B))}; B/A ${mid(ratios).toFixed(3)} ` +
          `(pairs ${ratios.map((r) => r.toFixed(2)).join('/')}, spread ${spread.toFixed(2)})` +
          (dbRatios.length > 0 ? `; db µs A ${µs(mid(db.A))} B ${µs(mid(db.B))}, B/A ${mid(dbRatios).toFixed(3)}` : ''),
      );
    }
  } finally {
    await a.close();
    await b.close();
    for (const d of databases) await d?.dispose();
  }
}
