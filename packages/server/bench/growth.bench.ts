// `npm run bench` (section growth): whether a request costs more once the database is large.
// Creates and queries are measured on an empty database, then the same platform (restarted) is
// measured again after 1,000,000 orders of the same merchant and a full nonce window were seeded
// with generate_series (not through the API). Targets: the grown medians within 15 % of the
// empty ones, and the nonce table bounded by the 300-second signature window (the sweeper purges
// what can no longer verify, including a seeded backlog of spent nonces, which it is left to
// clear before the grown phase is measured; on a PostgreSQL with autovacuum off the bench then
// vacuums the nonce table itself, as autovacuum would).
import { MAX_SIGNATURE_LIFETIME_SECONDS } from '@paygate/protocol';
import { openDatabase } from '../src/db/db.js';
import { KEEP_AFTER_EXPIRY_MS } from '../src/modules/auth/service.js';
import { SWEEP_INTERVAL_MS } from '../src/worker/sweeper.js';
import {
  backendsOf,
  benchDatabase,
  benchDatabases,
  type BenchDatabase,
  type BenchMerchant,
  type Charged,
  CONCURRENCY,
  createOne,
  databaseLabel,
  fire,
  median,
  onboard,
  RUN_HEADER,
  type Run,
  runRow,
  Signer,
  startPlatformProcess,
  verdict,
} from './load.js';

const ORDERS = Number(process.env.BENCH_GROWTH_ORDERS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_GROWTH_REQUESTS ?? 3_000);
const ROUNDS = 3;
/** Distinct orders the query load reads, in both phases. */
const READ_ORDERS = 1000;
/** A signature verifies for at most this long, so a nonce needs keeping no longer. */
const WINDOW_S = MAX_SIGNATURE_LIFETIME_SECONDS;
/** How long past expiry a nonce is kept (Nonces.purge) and how often the sweeper runs. */
const KEEP_AFTER_EXPIRY_S = KEEP_AFTER_EXPIRY_MS / 1000;
const SWEEP_S = SWEEP_INTERVAL_MS / 1000;
/** Spent nonces seeded as a backlog the sweeper must purge: this many windows' worth. */
const SPENT_WINDOWS = 1;

interface Phase {
  create: Run;
  query: Run;
}

/** Warm-up, then alternating rounds of creates and queries; the median round of each. */
async function measure(
  url: string,
  signer: Signer,
  merchant: BenchMerchant,
  orders: readonly string[],
  charged: Charged,
) {
  await fire(url, signer.creates(merchant.accessKey, merchant.bodyKey, 500));
  await fire(url, signer.queries(merchant.accessKey, orders, 500));
  const creates: Run[] = [];
  const queries: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    creates.push(await fire(url, signer.creates(merchant.accessKey, merchant.bodyKey, REQUESTS), charged));
    queries.push(await fire(url, signer.queries(merchant.accessKey, orders, REQUESTS), charged));
  }
  return { create: median(creates), query: median(queries) } satisfies Phase;
}

/**
 * Seeds `ORDERS` payments of the merchant (a past date prefix, so no order number collides with
 * the platform's), a live nonce window (`live` nonces expiring over the next 300 s) and a backlog
 * of spent ones, in a few set-based statements.
 */
async function seed(database: BenchDatabase, accessKey: string, live: number): Promise<number> {
  // Seeding a million rows is one long statement: no statement timeout (the platform's is 30 s).
  const db = await openDatabase({ databaseUrl: database.url, dataDir: database.dataDir, statementTimeoutMs: 0 });
  try {
    const merchant = await db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [accessKey]);
    const merchantId = merchant.rows[0]?.id;
    await db.query(
      `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, attach,
                             status, expires_at, created_at, updated_at, finalized_at)
       SELECT 'P20200101' || lpad(i::text, 10, '0'), $1, 'seed-' || i, 'BRL', 1000 + i % 9000, 'PIX',
              'https://merchant.example/webhook/payment', 'seed',
              (ARRAY['SUCCEEDED', 'EXPIRED', 'FAILED', 'CANCELED'])[1 + i % 4],
              now() - make_interval(secs => i * 7) + interval '30 minutes',
              now() - make_interval(secs => i * 7), now() - make_interval(secs => i * 7),
              now() - make_interval(secs => i * 7)
         FROM generate_series(1, $2::int) AS i`,
      [merchantId, ORDERS],
    );
    const spent = live * SPENT_WINDOWS;
    // Nonces of the same shape as real ones (UUIDs), live ones spread over the window ahead and
    // spent ones over the windows behind the purge horizon.
    await db.query(
      `INSERT INTO request_nonces (merchant_id, nonce, expires_at)
       SELECT $1::bigint, md5(i::text || 'live')::uuid::text, now() + make_interval(secs => $3::float8 * i / $2)
         FROM generate_series(1, $2::int) AS i
       UNION ALL
       SELECT $1::bigint, md5(i::text || 'spent')::uuid::text,
              now() - make_interval(secs => $4::float8 + $3::float8 * i / greatest($5::int, 1))
         FROM generate_series(1, $5::int) AS i`,
      [merchantId, live, WINDOW_S, KEEP_AFTER_EXPIRY_S + SWEEP_S, spent],
    );
    await db.exec('ANALYZE payments; ANALYZE request_nonces');
    return spent;
  } finally {
    await db.close();
  }
}

async function nonceRows(database: BenchDatabase): Promise<{ total: number; stale: number }> {
  const db = await openDatabase({ databaseUrl: database.url, dataDir: database.dataDir });
  try {
    // Stale: past the purge horizon by more than two sweeps, i.e. a row the sweeper should have taken.
    const result = await db.query<{ total: bigint; stale: bigint }>(
      `SELECT count(*)::bigint AS total,
              count(*) FILTER (WHERE expires_at < now() - make_interval(secs => $1::float8))::bigint AS stale
         FROM request_nonces`,
      [KEEP_AFTER_EXPIRY_S + 2 * SWEEP_S],
    );
    return { total: Number(result.rows[0]?.total ?? 0), stale: Number(result.rows[0]?.stale ?? 0) };
  } finally {
    await db.close();
  }
}

/** How long the sweeper may take over a seeded backlog before the bench gives up. */
const CATCH_UP_LIMIT_S = 600;

/**
 * Waits until the platform's nonce gauge (`/metrics`) is down to `bound` rows, i.e. the sweeper
 * has purged the seeded backlog; answers the seconds that took.
 */
async function purged(url: string, bound: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const rows = Number(/^paygate_auth_nonces (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
    const seconds = (performance.now() - started) / 1000;
    if (rows <= bound) return seconds;
    if (seconds > CATCH_UP_LIMIT_S) throw new Error(`the sweeper left ${rows} nonces after ${CATCH_UP_LIMIT_S} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * PostgreSQL with autovacuum off (as on the CI machine): vacuums the nonce table the catch-up
 * emptied, as autovacuum would soon after (docs/operations.md: keep it on). Without it the purged
 * rows stay in the table and its indexes for good and every later nonce insert pays for them:
 * a state production does not run in. Answers the milliseconds it took, or undefined when
 * autovacuum is on (or the database is PGlite, where the platform's sweeper vacuums).
 */
async function standInForAutovacuum(database: BenchDatabase): Promise<number | undefined> {
  if (!database.url) return undefined;
  const db = await openDatabase({ databaseUrl: database.url, dataDir: database.dataDir, statementTimeoutMs: 0 });
  try {
    const setting = await db.query<{ autovacuum: string }>('SHOW autovacuum');
    if (setting.rows[0]?.autovacuum !== 'off') return undefined;
    const started = performance.now();
    await db.exec('VACUUM (ANALYZE) request_nonces');
    return performance.now() - started;
  } finally {
    await db.close();
  }
}

async function benchmark(database: BenchDatabase): Promise<void> {
  const signer = new Signer();
  // Workers on: the sweeper is what keeps the nonce table to the window.
  const env = { PAYGATE_WORKERS: 'true' };
  let platform = await startPlatformProcess(database, env);
  try {
    const merchant = await onboard(platform.url, database, signer);
    const start = async () => {
      const backends = database.url ? await backendsOf(database.url) : undefined;
      const charged: Charged = {
        server: platform.child.pid as number,
        ...(backends ? { database: backends.pids } : {}),
      };
      return { charged, close: async () => backends?.close() };
    };
    let session = await start();
    // As many distinct orders as the grown phase reads: reads are batched (one statement per turn
    // of the event loop), and a batch over a few hot orders returns each row once for several
    // requests, which the grown phase's spread-out reads do not (measured on PGlite: a batch of
    // 32 reads over 20 distinct orders cost ~700 µs, over 32 distinct ~1,100 µs, at 20,000 rows
    // and at 1,000,000 alike), so only the size of the database differs between the phases.
    const fresh: string[] = [];
    while (fresh.length < READ_ORDERS) {
      fresh.push(...(await Promise.all(Array.from({ length: 25 }, () => createOne(platform.url, signer, merchant)))));
    }
    const empty = await measure(platform.url, signer, merchant, fresh, session.charged);
    await session.close();
    await platform.stop();

    // A full window at the rate this platform just sustained, whichever of creates and queries is faster.
    const live = Math.round(WINDOW_S * Math.max(empty.create.rps, empty.query.rps));
    // Every request the bench signs, in both phases, is still inside the window at the end.
    const sent = 2 * (2 * 500 + 2 * ROUNDS * REQUESTS) + READ_ORDERS;
    const seeding = performance.now();
    const spent = await seed(database, merchant.accessKey, live);
    const seedSeconds = (performance.now() - seeding) / 1000;

    platform = await startPlatformProcess(database, env);
    // The spent backlog is the sweeper's to purge, once (it stands for a sweeper that was down);
    // the grown phase is measured after it, with the live window and the steady purge of what
    // expires meanwhile: the request cost of a large database, not of a one-off catch-up.
    const catchUp = await purged(platform.url, live + sent);
    const vacuumed = await standInForAutovacuum(database);
    session = await start();
    // Reads spread over the seeded orders: most of them are far from any cache.
    const seeded = Array.from(
      { length: READ_ORDERS },
      (_, i) => `P20200101${String(1 + Math.floor(((i + 0.5) * ORDERS) / READ_ORDERS)).padStart(10, '0')}`,
    );
    const grown = await measure(platform.url, signer, merchant, seeded, session.charged);
    await session.close();
    // Let the sweeper pass at least twice after the load, then look at the nonce table.
    await new Promise((resolve) => setTimeout(resolve, 2 * SWEEP_S * 1000 + 1000));
    await platform.stop();
    const nonces = await nonceRows(database);

    console.log(
      `\ndatabase: ${databaseLabel(database.kind)}; ${CONCURRENCY} in flight; median of ${ROUNDS} rounds of ${REQUESTS}; ` +
        `seeded ${ORDERS.toLocaleString('en')} orders, ${live.toLocaleString('en')} live and ${spent.toLocaleString('en')} spent nonces in ${seedSeconds.toFixed(0)} s; ` +
        `the sweeper purged the spent ones in ${catchUp.toFixed(0)} s, before the grown phase` +
        (vacuumed === undefined
          ? ''
          : `; autovacuum is off on this server: the bench vacuumed request_nonces then (${vacuumed.toFixed(0)} ms), as autovacuum would`),
    );
    for (const line of RUN_HEADER) console.log(line.replace('of ceil.', 'of empty'));
    console.log(runRow('create, empty database', empty.create));
    const grownLabel = `${ORDERS >= 1_000_000 ? `${ORDERS / 1_000_000}M` : ORDERS.toLocaleString('en')} orders + nonce window`;
    console.log(runRow(`create, ${grownLabel}`, grown.create, empty.create));
    console.log(runRow('query, empty database', empty.query));
    console.log(runRow(`query, ${grownLabel}`, grown.query, empty.query));
    const within = (name: string, grownRun: Run, emptyRun: Run) => {
      const growth = grownRun.p50 / emptyRun.p50 - 1;
      return verdict(
        `${name} median ${grownRun.p50.toFixed(1)} ms vs ${emptyRun.p50.toFixed(1)} ms empty (${growth >= 0 ? '+' : ''}${(100 * growth).toFixed(0)}%, target within 15%)`,
        growth <= 0.15,
      );
    };
    console.log(within('create', grown.create, empty.create));
    console.log(within('query', grown.query, empty.query));
    // Bounded: nothing the sweeper should have purged is left, and no more rows than one window
    // of the seeded rate plus what the bench itself sent.
    const bound = live + sent;
    console.log(
      verdict(
        `nonce table ${nonces.total.toLocaleString('en')} rows (bound: the ${WINDOW_S} s window, ${bound.toLocaleString('en')}), ${nonces.stale} past the purge horizon (target 0)`,
        nonces.stale === 0 && nonces.total <= bound,
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
