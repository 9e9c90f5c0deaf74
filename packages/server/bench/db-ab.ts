// Not a section of `npm run bench`: an A/B of two checkouts' db layer (`src/db/db.ts`) in one
// process on one PostgreSQL, by this process's CPU per statement, for a change to the db layer or
// the driver too small for `bench/ab.ts` to see through HTTP (a few µs per statement). Both
// checkouts' `openDatabase` run the same prepared statements on one table of payment-like rows,
// 32 in flight; rounds alternate A, B, A, B…, each figure is B's over A's within a pair, their
// median the statement's. Pinned (this process on CPU 0, PostgreSQL's backends on CPU 1) unless
// BENCH_PIN=0.
//
//   AB_A=/path/to/checkout-a AB_B=/path/to/checkout-b [DB_AB_STATEMENTS=read,page,write]
//   [AB_ROUNDS=12] [DB_AB_PER_ROUND=20000]
//   node --conditions=source --import tsx packages/server/bench/db-ab.ts
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { backendsOf, benchDatabase, mid, pin, pinBackends, pinByDefault } from './load.js';
import type * as DbModule from '../src/db/db.js';

const A = process.env.AB_A;
const B = process.env.AB_B;
if (!A || !B) throw new Error('AB_A and AB_B name the two checkouts');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 12);
const PER_ROUND = Number(process.env.DB_AB_PER_ROUND ?? 20_000);
const IN_FLIGHT = 32;
const ROWS = 2_000;

/** Each statement: its text and the parameter of its n-th run. */
const STATEMENTS: Record<string, { text: string; param: (n: number) => unknown }> = {
  read: { text: 'SELECT * FROM db_ab_rows WHERE id = $1', param: (n) => BigInt(1 + (n % ROWS)) },
  page: { text: 'SELECT * FROM db_ab_rows WHERE id > $1 ORDER BY id LIMIT 20', param: (n) => BigInt(n % (ROWS - 20)) },
  write: {
    text: "UPDATE db_ab_rows SET updated_at = now(), status = 'PENDING' WHERE id = $1 RETURNING *",
    param: (n) => BigInt(1 + (n % ROWS)),
  },
};
const chosen = (process.env.DB_AB_STATEMENTS ?? 'read,page,write').split(',').filter(Boolean);
for (const name of chosen) if (!STATEMENTS[name]) throw new Error(`DB_AB_STATEMENTS: no statement ${name}`);

const database = await benchDatabase('postgres');
if (!database?.url) throw new Error('db-ab needs PostgreSQL (TEST_DATABASE_URL or 127.0.0.1:5432)');
const url = database.url;

// A payment's columns, as the hot paths read them: ids and amounts as int8, timestamps, text.
const setup = new pg.Client({ connectionString: url });
await setup.connect();
await setup.query(`CREATE TABLE db_ab_rows (id int8 PRIMARY KEY, merchant_id int8, order_no text, merchant_order_no text,
  amount int8, currency text, status text, created_at timestamptz, updated_at timestamptz, expires_at timestamptz,
  final_at timestamptz, channel text, webhook_url text, description text)`);
await setup.query(`INSERT INTO db_ab_rows SELECT g, 7, 'PG01' || g, 'shop-' || g, 1000 + g, 'BRL', 'PENDING', now(), now(),
  now() + interval '1 hour', NULL, 'pix', 'https://shop.example/hooks', 'order ' || g FROM generate_series(1, ${ROWS}) AS g`);
await setup.query('ANALYZE db_ab_rows');
await setup.end();

const load = async (root: string) =>
  (await import(pathToFileURL(join(root, 'packages/server/src/db/db.ts')).href)) as typeof DbModule;
const modules = { A: await load(A), B: await load(B) };
const options = { databaseUrl: url, dataDir: database.dataDir };
const dbs = { A: await modules.A.openDatabase(options), B: await modules.B.openDatabase(options) };
const backends = await backendsOf(url);
if (pinByDefault()) pin(0, process.pid);

/** µs of this process's CPU per statement over `n` runs of `name` on side `side`. */
async function round(side: 'A' | 'B', name: string, n: number): Promise<number> {
  const db = dbs[side];
  const { text, param } = STATEMENTS[name] as (typeof STATEMENTS)[string];
  const statement = modules[side].prepared(`db_ab_${name}`, text);
  let next = 0;
  const started = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < n) await db.query(statement, [param(next++)]);
    }),
  );
  const used = process.cpuUsage(started);
  await pinBackends(backends.pids());
  return (used.user + used.system) / n;
}

try {
  for (const name of chosen) {
    for (const side of ['A', 'B'] as const) await round(side, name, PER_ROUND / 4);
    const spent: Record<'A' | 'B', number[]> = { A: [], B: [] };
    const ratios: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternating which goes first, so that neither is always the one after the other.
      for (const side of i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const))
        spent[side].push(await round(side, name, PER_ROUND));
      ratios.push((spent.B.at(-1) as number) / (spent.A.at(-1) as number));
    }
    const spread = Math.max(...ratios) - Math.min(...ratios);
    console.log(
      `postgres ${name}: µs per statement A ${mid(spent.A).toFixed(1)} B ${mid(spent.B).toFixed(1)}; B/A ${mid(ratios).toFixed(3)} ` +
        `(pairs ${ratios.map((r) => r.toFixed(2)).join('/')}, spread ${spread.toFixed(2)})`,
    );
  }
} finally {
  await dbs.A.close();
  await dbs.B.close();
  await backends.close();
  await database.dispose();
}
