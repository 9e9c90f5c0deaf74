// `npm run bench` (section embedded-plans): the embedded database's hot statements, planned on every
// call (`embeddedPlanRenewalMs: 0`, as before issue #40) against kept generic plans made as index
// plans only (the default), on two databases of 100,000 payments side by side, in CPU time of this
// process per statement (PGlite runs in it, synchronously): unlike a rate, barely moved by other
// load on the machine. Three alternating rounds of 1,000 statements each; no target.
import { randomUUID } from 'node:crypto';
import { type Db, openDatabase, type PreparedStatement } from '../src/db/db.js';
import { lookupStatements } from '../src/db/order-lookups.js';
import { BALANCES } from '../src/modules/ledger/service.js';
import { embeddedTemplate } from '../test/templates.js';

const PAYMENTS = 100_000;
const CALLS = 1_000;
const ROUNDS = 3;
const COLUMNS = 'id, order_no, merchant_id, merchant_order_no, status, created_at';
const lookups = lookupStatements('payments', COLUMNS);
/** The nonce batch's statement as modules/auth/service.ts sends it. */
const NONCES: PreparedStatement = {
  name: 'bench_nonces_consume',
  text: `INSERT INTO request_nonces (merchant_id, nonce, expires_at)
   SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[])
   ON CONFLICT DO NOTHING RETURNING merchant_id::text AS merchant_id, nonce`,
};

const orderNo = (i: number) => `P20200101${String(1 + (i % PAYMENTS)).padStart(10, '0')}`;
const pick = () => Math.floor(Math.random() * PAYMENTS);
const cases: [string, () => [PreparedStatement, unknown[]]][] = [
  [
    'nonce batch (10)',
    () => [
      NONCES,
      [Array(10).fill('1'), Array.from({ length: 10 }, () => randomUUID()), Array(10).fill(new Date(Date.now() + 3e5))],
    ],
  ],
  ['payments by orderNo (10)', () => [lookups.byOrderNo, [Array.from({ length: 10 }, () => orderNo(pick()))]]],
  [
    'payments by merchantOrderNo (10)',
    () => [lookups.byMerchantOrderNo, [Array(10).fill('1'), Array.from({ length: 10 }, () => `seed-${1 + pick()}`)]],
  ],
  [
    'payments by both keys (5 + 5)',
    () => [
      lookups.both,
      [
        Array.from({ length: 5 }, () => orderNo(pick())),
        Array(5).fill('1'),
        Array.from({ length: 5 }, () => `seed-${1 + pick()}`),
      ],
    ],
  ],
  ['balances (3 merchants)', () => [BALANCES, [['1', '2', '3']]]],
];

async function database(planRenewalMs: number): Promise<Db> {
  const db = await openDatabase({
    dataDir: 'memory://',
    loadDataDir: await embeddedTemplate(),
    embeddedPlanRenewalMs: planRenewalMs,
  });
  await db.query(
    `INSERT INTO merchants (name, environment, access_key) VALUES ('bench', 'sandbox', 'ak_test_bench0001')`,
  );
  await db.query(
    `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, status,
                           expires_at, created_at, updated_at)
     SELECT 'P20200101' || lpad(i::text, 10, '0'), 1, 'seed-' || i, 'BRL', 1000, 'PIX', 'https://merchant.example/w',
            'PENDING', now(), now(), now()
       FROM generate_series(1, $1::int) AS i`,
    [PAYMENTS],
  );
  return db;
}

const arms = { 'planned per call': await database(0), 'kept plans': await database(30_000) };
try {
  console.log(
    `\nCPU µs of the process per statement, ${PAYMENTS.toLocaleString('en')} payments, ${ROUNDS} alternating rounds of ${CALLS}`,
  );
  console.log('| statement | planned per call | kept plans |');
  console.log('|---|---|---|');
  for (const [name, make] of cases) {
    const costs: Record<string, number[]> = { 'planned per call': [], 'kept plans': [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [arm, db] of Object.entries(arms)) {
        for (let i = 0; i < 100; i++) await db.query(...make());
        const before = process.cpuUsage();
        for (let i = 0; i < CALLS; i++) await db.query(...make());
        const used = process.cpuUsage(before);
        costs[arm]?.push((used.user + used.system) / CALLS);
      }
    }
    const cell = (values: number[] = []) => values.map((v) => v.toFixed(0)).join(' / ');
    console.log(`| ${name} | ${cell(costs['planned per call'])} | ${cell(costs['kept plans'])} |`);
  }
} finally {
  for (const db of Object.values(arms)) await db.close();
}
