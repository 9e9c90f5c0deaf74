// `npm run bench` (section backoffice): the back office is fast enough for a support desk
// (issue 45, item 5). 1,000,000 orders of 1,000 merchants (700,000 payments, 300,000 payouts,
// each with its channel trade number, documents and accounts, and a recorded state change) are
// seeded with generate_series, not through the API; then, through the real API with an
// operator's session, `GET /backoffice/api/orders?q=` by each exact identifier (order number,
// merchant order number, channel trade number, payer document, payee account) and
// `GET /backoffice/api/orders/:orderNo` (the timeline) of orders made through the merchant API
// among them. Targets: search median under 50 ms, timeline median under 100 ms (PostgreSQL; the
// embedded database is measured too and judged by the same targets).
import { openDatabase } from '../src/db/db.js';
import { totpCode } from '../src/modules/accounts/second-factor.js';
import {
  benchDatabase,
  benchDatabases,
  type BenchDatabase,
  databaseLabel,
  onboard,
  Signer,
  startPlatformProcess,
  verdict,
} from './load.js';

const MERCHANTS = Number(process.env.BENCH_BACKOFFICE_MERCHANTS ?? 1_000);
const ORDERS = Number(process.env.BENCH_BACKOFFICE_ORDERS ?? 1_000_000);
/** Requests per measured row, one at a time (a person at a desk asks one thing at a time). */
const SAMPLES = Number(process.env.BENCH_BACKOFFICE_SAMPLES ?? 200);
const PAYMENTS = Math.round(ORDERS * 0.7);
const PAYOUTS = ORDERS - PAYMENTS;

/** Seeds the merchants and their orders in a few set-based statements; answers the seconds it took. */
async function seed(database: BenchDatabase): Promise<number> {
  const started = performance.now();
  const db = await openDatabase({ databaseUrl: database.url, dataDir: database.dataDir, statementTimeoutMs: 0 });
  try {
    await db.query(
      `INSERT INTO merchants (name, environment, access_key, created_at)
       SELECT 'Bench merchant ' || m, 'sandbox', 'ak_test_bench' || lpad(m::text, 6, '0'), now() - interval '400 days'
         FROM generate_series(1, $1::int) AS m`,
      [MERCHANTS],
    );
    const ids = `(SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM merchants WHERE access_key LIKE 'ak_test_bench%')`;
    await db.query(
      `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, status,
                             paid_amount_minor, channel_trade_no, payer_name, payer_document, expires_at, created_at,
                             updated_at, finalized_at)
       SELECT 'P20200101' || lpad(i::text, 10, '0'), m.id, 'seed-' || i, 'BRL', 1000 + i % 90000, 'PIX',
              'https://merchant.example/webhook/payment', 'SUCCEEDED', 1000 + i % 90000,
              'E' || lpad(i::text, 31, '0'), 'Payer ' || i, lpad((i::bigint * 7919 % 99999999999)::text, 11, '0'),
              now() - make_interval(secs => i * 30) + interval '30 minutes', now() - make_interval(secs => i * 30),
              now() - make_interval(secs => i * 30), now() - make_interval(secs => i * 30)
         FROM generate_series(1, $1::int) AS i JOIN ${ids} m ON m.k = i % $2`,
      [PAYMENTS, MERCHANTS],
    );
    await db.query(
      `INSERT INTO payouts (order_no, merchant_id, merchant_order_no, currency, amount_minor, fee_minor, webhook_url,
                            payee_name, payee_account_number, payee_document, status, channel_trade_no, created_at,
                            updated_at, confirmed_at, finalized_at)
       SELECT 'W20200101' || lpad(i::text, 10, '0'), m.id, 'seedw-' || i, 'BRL', 1000 + i % 90000, 200,
              'https://merchant.example/webhook/payout', 'Payee ' || i, lpad((i::bigint * 104729 % 999999999999)::text, 12, '0'),
              lpad((i::bigint * 15485863 % 99999999999)::text, 11, '0'), 'SUCCEEDED', 'T' || lpad(i::text, 20, '0'),
              now() - make_interval(secs => i * 90), now() - make_interval(secs => i * 90),
              now() - make_interval(secs => i * 90), now() - make_interval(secs => i * 90)
         FROM generate_series(1, $1::int) AS i JOIN ${ids} m ON m.k = i % $2`,
      [PAYOUTS, MERCHANTS],
    );
    await db.query(
      `INSERT INTO order_transitions (order_type, order_no, merchant_id, from_status, to_status, cause, at)
       SELECT 'PAYMENT', order_no, merchant_id, 'PENDING', 'SUCCEEDED', 'channel', created_at FROM payments
        WHERE order_no LIKE 'P20200101%'
       UNION ALL
       SELECT 'PAYOUT', order_no, merchant_id, 'PROCESSING', 'SUCCEEDED', 'channel', created_at FROM payouts
        WHERE order_no LIKE 'W20200101%'`,
    );
    await db.exec('ANALYZE merchants; ANALYZE payments; ANALYZE payouts; ANALYZE order_transitions');
  } finally {
    await db.close();
  }
  return (performance.now() - started) / 1000;
}

/** An operator with a working session (invited by the token, set up, TOTP confirmed): its cookie. */
async function operatorSession(url: string, database: BenchDatabase): Promise<string> {
  const invited = await fetch(`${url}/admin/v1/operators`, {
    method: 'POST',
    headers: { authorization: `Bearer ${database.env.PAYGATE_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@ops.example', role: 'support' }),
  });
  const { data } = (await invited.json()) as { data: { setupUrl: string } };
  const token = new URL(data.setupUrl).hash.slice('#token='.length);
  const setup = await fetch(`${url}/backoffice/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password: 'bench password of twelve' }),
  });
  const cookie = (setup.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const { data: session } = (await setup.json()) as { data: { csrfToken: string } };
  const write = (path: string, body: unknown) =>
    fetch(`${url}/backoffice/api${path}`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
      body: JSON.stringify(body),
    });
  const totp = (await (await write('/second-factor/totp', {})).json()) as { data: { secret: string } };
  const confirmed = await write('/second-factor/totp/confirm', { code: totpCode(totp.data.secret, Date.now()) });
  if (confirmed.status !== 200) throw new Error(`the operator's second factor: ${await confirmed.text()}`);
  return cookie;
}

/** Orders made through the merchant API (with their ledger transactions, events and moves). */
async function realOrders(url: string, database: BenchDatabase): Promise<string[]> {
  const signer = new Signer();
  const merchant = await onboard(url, database, signer);
  const send = async (path: string, payload: unknown) => {
    const request = signer.write(merchant.accessKey, merchant.bodyKey, path, payload);
    const answer = await fetch(url + request.path, { method: 'POST', headers: request.headers, body: request.body });
    const body = (await answer.json()) as { msg: string; data?: { orderNo: string } };
    if (answer.status !== 200) throw new Error(`${path}: ${JSON.stringify(body)}`);
    return body.data?.orderNo as string;
  };
  const orders: string[] = [];
  for (let i = 0; i < 10; i++) {
    const payment = await send('/api/v1/payments', {
      merchantOrderNo: `BO-${i}`,
      currency: 'BRL',
      amount: '500.00',
      paymentMethod: { code: 'PIX' },
      webhookUrl: 'https://merchant.example/webhook/payment',
    });
    await send('/api/v1/sandbox/payments/simulate', { orderNo: payment, status: 'SUCCEEDED' });
    const payout = await send('/api/v1/payouts', {
      merchantOrderNo: `BOW-${i}`,
      currency: 'BRL',
      amount: '100.00',
      webhookUrl: 'https://merchant.example/webhook/payout',
      payee: { name: 'Bench Payee', accountNumber: '000123456789', documentNumber: '01234567890' },
    });
    await send('/api/v1/payouts/confirm', { orderNo: payout });
    await send('/api/v1/sandbox/payouts/simulate', { orderNo: payout, status: 'SUCCEEDED' });
    orders.push(payment, payout);
  }
  return orders;
}

/** The median of `SAMPLES` requests, one at a time, over `paths` in turn (each answer must be found). */
async function medianMs(url: string, cookie: string, paths: readonly string[], found: (body: unknown) => boolean) {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES + 20; i++) {
    const path = paths[i % paths.length] as string;
    const started = performance.now();
    const answer = await fetch(`${url}/backoffice/api${path}`, { headers: { cookie } });
    const body = (await answer.json()) as { data?: unknown };
    const ms = performance.now() - started;
    if (answer.status !== 200 || !found(body.data))
      throw new Error(`${path}: ${answer.status} ${JSON.stringify(body).slice(0, 300)}`);
    if (i >= 20) times.push(ms); // the first 20 warm the caches and the plans
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)] as number, p90: times[Math.floor(times.length * 0.9)] as number };
}

async function benchmark(database: BenchDatabase): Promise<void> {
  // Migrated by a first start, seeded with it stopped, measured on a second.
  let platform = await startPlatformProcess(database);
  await platform.stop();
  const seconds = await seed(database);
  platform = await startPlatformProcess(database);
  try {
    const cookie = await operatorSession(platform.url, database);
    const real = await realOrders(platform.url, database);
    const picks = Array.from({ length: 50 }, (_, j) => 1 + Math.floor(((j + 0.5) * PAYMENTS) / 50));
    const payoutPicks = Array.from({ length: 50 }, (_, j) => 1 + Math.floor(((j + 0.5) * PAYOUTS) / 50));
    const one = (data: unknown) => (data as { items: unknown[] }).items.length >= 1;
    const rows: [string, string[]][] = [
      ['orderNo', picks.map((i) => `P20200101${String(i).padStart(10, '0')}`)],
      ['merchantOrderNo', picks.map((i) => `seed-${i}`)],
      ['channelTradeNo', picks.map((i) => `E${String(i).padStart(31, '0')}`)],
      ['payer document', picks.map((i) => String((i * 7919) % 99999999999).padStart(11, '0'))],
      ['payee account', payoutPicks.map((i) => String((i * 104729) % 999999999999).padStart(12, '0'))],
    ];
    console.log(
      `\ndatabase: ${databaseLabel(database.kind)}; ${MERCHANTS.toLocaleString('en')} merchants, ` +
        `${PAYMENTS.toLocaleString('en')} payments and ${PAYOUTS.toLocaleString('en')} payouts seeded in ${seconds.toFixed(0)} s; ` +
        `median and p90 of ${SAMPLES} requests one at a time, through the API with an operator's session`,
    );
    const results: { name: string; p50: number; target: number }[] = [];
    for (const [name, values] of rows) {
      const r = await medianMs(
        platform.url,
        cookie,
        values.map((q) => `/orders?q=${encodeURIComponent(q)}`),
        one,
      );
      console.log(
        `  search by ${name.padEnd(16)} p50 ${r.p50.toFixed(1).padStart(7)} ms   p90 ${r.p90.toFixed(1).padStart(7)} ms`,
      );
      results.push({ name: `search by ${name}`, p50: r.p50, target: 50 });
    }
    const timeline = await medianMs(
      platform.url,
      cookie,
      real.map((orderNo) => `/orders/${orderNo}`),
      (data) => ((data as { timeline: unknown[] }).timeline?.length ?? 0) >= 3,
    );
    console.log(
      `  an order's timeline       p50 ${timeline.p50.toFixed(1).padStart(7)} ms   p90 ${timeline.p90.toFixed(1).padStart(7)} ms`,
    );
    results.push({ name: "an order's timeline", p50: timeline.p50, target: 100 });
    const search = results.filter((r) => r.target === 50);
    const worst = search.reduce((a, b) => (b.p50 > a.p50 ? b : a));
    console.log(
      verdict(
        `search by an exact identifier: the slowest median ${worst.p50.toFixed(1)} ms (${worst.name}), target under 50 ms`,
        worst.p50 < 50,
      ),
    );
    console.log(
      verdict(`an order's timeline: median ${timeline.p50.toFixed(1)} ms, target under 100 ms`, timeline.p50 < 100),
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
