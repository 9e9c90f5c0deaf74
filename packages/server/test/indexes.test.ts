import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pagesStatement } from '../src/db/paging.js';
import { BALANCES } from '../src/modules/ledger/service.js';
import { lookupStatements } from '../src/db/order-lookups.js';
import { type Db, openDatabase, prepared } from '../src/db/db.js';
import {
  createMerchant,
  databases,
  freshPostgres,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestPlatform,
} from './harness.js';

/**
 * The hot queries must be served by indexes, so that they stay fast at millions of orders. With
 * sequential scans disabled the planner shows whether an index can serve each query at all.
 */
for (const database of databases()) {
  describe(`query plans use indexes (${database})`, () => {
    let platform: TestPlatform;
    let merchantId: bigint;
    let bulkMerchantId: bigint;

    before(async () => {
      platform = await startTestPlatform({ database });
      const merchant = await createMerchant(platform);
      for (let i = 0; i < 3; i++) await post(platform, merchant, '/api/v1/payments', paymentInput());
      merchantId = (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
      // Realistic statistics: many merchants, many orders each, then ANALYZE.
      const db = platform.services.db;
      await db.query(
        `INSERT INTO merchants (name, environment, access_key)
         SELECT 'bulk ' || g, 'sandbox', 'ak_test_bulk' || g FROM generate_series(1, 50) g`,
      );
      await db.query(
        `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url,
                               status, expires_at, created_at, updated_at)
         SELECT 'P2026' || lpad(g::text, 14, '0'), m.id, 'BULK-' || g, 'BRL', 100, 'PIX', 'https://m.example/w',
                (ARRAY['PENDING','SUCCEEDED','FAILED','CANCELED'])[1 + g % 4], now() + interval '1 hour',
                now() - (g || ' seconds')::interval, now()
           FROM generate_series(1, 20000) g
           JOIN merchants m ON m.access_key = 'ak_test_bulk' || (1 + g % 50)`,
      );
      await db.query('ANALYZE');
      bulkMerchantId = (await db.query<{ id: bigint }>(`SELECT id FROM merchants WHERE access_key = 'ak_test_bulk1'`))
        .rows[0]?.id as bigint;
    });
    after(() => platform.close());

    const PAYMENTS = { table: 'payments', columns: 'id, created_at', statuses: ['PENDING'] } as const;
    /** The arrays of a batch of two list requests, one per merchant. */
    const pageParams = (use: { status?: boolean; range?: boolean; after?: boolean }) => {
      const two = <T>(value: T) => [value, value];
      // The arrays of the filters the shape uses, in the statement's order (see pagesStatement).
      return [
        [merchantId, bulkMerchantId],
        ...(use.status ? [two('PENDING')] : []),
        ...(use.range ? [two(new Date(Date.now() - 3_600_000)), two(new Date())] : []),
        ...(use.after ? [two(new Date()), two('10')] : []),
        two(21),
      ];
    };

    async function plan(sql: string, params: unknown[]): Promise<string> {
      return platform.services.db.transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        const rows = (await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).rows;
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    }

    const cases: [string, string, () => unknown[], RegExp][] = [
      [
        'lookup by orderNo',
        'SELECT * FROM payments WHERE merchant_id = $1 AND order_no = $2',
        () => [merchantId, 'P1'],
        /payments_order_no_key/,
      ],
      [
        'lookup of a batch by orderNo (reads arriving together)',
        'SELECT * FROM payments WHERE order_no = ANY($1::text[])',
        () => [['P1', 'P2', 'P3']],
        /payments_order_no_key/,
      ],
      [
        'lookup of a batch by merchantOrderNo (reads arriving together, for two merchants)',
        lookupStatements('payments', 'id').byMerchantOrderNo.text,
        () => [
          [merchantId, bulkMerchantId],
          ['M-1', 'BULK-1'],
        ],
        /payments_merchant_id_merchant_order_no_key/,
      ],
      [
        'lookup of a batch by both references (reads arriving together: orderNo, merchantOrderNo)',
        lookupStatements('payments', 'id').both.text,
        () => [
          ['P1', 'P2'],
          [merchantId, bulkMerchantId],
          ['M-1', 'BULK-1'],
        ],
        /payments_order_no_key[\s\S]*payments_merchant_id_merchant_order_no_key/,
      ],
      [
        'balances of a batch of merchants',
        BALANCES.text,
        () => [[merchantId, bulkMerchantId]],
        /ledger_accounts_merchant/,
      ],
      // Batched list pages: each shape of filters keeps its index conditions inside the LATERAL.
      [
        'list pages of a batch, newest first',
        pagesStatement(PAYMENTS, 0).text,
        () => pageParams({}),
        /Index (?:Only )?Scan using payments_list on payments o[^\n]*\n\s+Index Cond: \(merchant_id = k\.merchant_id\)/,
      ],
      [
        'list pages of a batch, after a cursor',
        pagesStatement(PAYMENTS, 8).text,
        () => pageParams({ after: true }),
        /Index (?:Only )?Scan using payments_list on payments o[^\n]*\n\s+Index Cond: \(\(merchant_id = k\.merchant_id\) AND \(ROW\(created_at, id\) < ROW\(k\.after_at, k\.after_id\)\)\)/,
      ],
      [
        'list pages of a batch by status and time',
        pagesStatement(PAYMENTS, 7).text,
        () => pageParams({ status: true, range: true }),
        /Index (?:Only )?Scan using payments_list_status on payments o[^\n]*\n\s+Index Cond: \(\(merchant_id = k\.merchant_id\) AND \(status = k\.status\) AND \(created_at >= k\.created_from\) AND \(created_at <= k\.created_to\)\)/,
      ],
      [
        'lookup by merchantOrderNo (dedup)',
        'SELECT * FROM payments WHERE merchant_id = $1 AND merchant_order_no = $2',
        () => [merchantId, 'M-1'],
        /payments_merchant_id_merchant_order_no_key/,
      ],
      [
        'list newest first with a cursor',
        'SELECT * FROM payments WHERE merchant_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT 21',
        () => [bulkMerchantId, new Date(), 10n],
        /payments_list/,
      ],
      [
        'list by status',
        'SELECT * FROM payments WHERE merchant_id = $1 AND status = $2 ORDER BY created_at DESC, id DESC LIMIT 21',
        () => [bulkMerchantId, 'PENDING'],
        /payments_list_status/,
      ],
      [
        'expiry sweep',
        "SELECT * FROM payments WHERE status = 'PENDING' AND expires_at <= $1 ORDER BY expires_at LIMIT 100",
        () => [new Date()],
        /payments_pending_expiry/,
      ],
      [
        'nonce purge, a batch at a time',
        `DELETE FROM request_nonces WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM request_nonces WHERE expires_at < $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
        () => [new Date(), 5000],
        /Index Scan using request_nonces_expiry[\s\S]*Tid Scan on request_nonces/,
      ],
    ];
    for (const [name, sql, params, index] of cases) {
      it(name, async () => {
        const text = await plan(sql, params());
        assert.match(text, index, text);
        assert.doesNotMatch(text, /Seq Scan on payments/, text);
      });
    }
  });
}

/** An EXPLAIN of a prepared statement, run in the session that prepared it (see explainIn). */
const EXPLAIN_FUNCTION = `CREATE OR REPLACE FUNCTION test_plan_of(execute text) RETURNS SETOF text
  LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) EXECUTE ' || execute; END $$`;

/**
 * The plan that the session of the pipelined reads connection keeps for a statement it prepared,
 * `execute` being `name(arguments)`: asked as a prepared read, the EXPLAIN runs on that session.
 */
async function explainIn(db: Db, execute: string): Promise<string> {
  const { rows } = await db.query<{ line: string }>(
    prepared('indexes_test_plan_of', 'SELECT test_plan_of($1) AS line'),
    [execute],
  );
  return rows.map((row) => row.line).join('\n');
}

/** What a kept plan of a batched read must never hold: a scan of the table or a join that hashes or sorts it. */
const NOT_AN_INDEX_PLAN = /Seq Scan|Hash Join|Merge Join/;

/**
 * PostgreSQL's pipelined reads connection keeps one plan per statement, made without seeing the
 * keys (`force_generic_plan`) and with every choice but index probes turned off, and drops its plans
 * every so often (db.ts, CACHED_INDEX_PLANS). Planning had been most of these statements' time.
 * A plan kept since a table was nearly empty can still probe the wrong index; the renewal bounds
 * how long. (The embedded database plans every statement for its parameters: see openDatabase.)
 */
describe(
  'batched reads keep index plans, renewed (postgres)',
  {
    skip: !databases().includes('postgres') && 'TEST_DATABASE_URL is not set',
  },
  () => {
    it("the platform's batched reads (by orderNo, by merchantOrderNo, list pages, balances) are planned once, as index probes", async () => {
      const platform = await startTestPlatform({ database: 'postgres' });
      try {
        const db = platform.services.db;
        await db.query(EXPLAIN_FUNCTION);
        const merchant = await createMerchant(platform);
        const input = paymentInput();
        const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', input);
        const orderNo = created.body.data?.orderNo ?? assert.fail(JSON.stringify(created.body));
        const reads: [string, string][] = [
          ['/api/v1/payments', `orderNo=${orderNo}`],
          ['/api/v1/payments', `merchantOrderNo=${input.merchantOrderNo}`],
          ['/api/v1/payments/list', ''],
          ['/api/v1/payouts/list', 'status=PENDING'],
          ['/api/v1/balances', ''],
        ];
        for (let i = 0; i < 12; i++) {
          for (const [path, query] of reads) {
            const found = await get<unknown>(platform, merchant, path, query);
            assert.equal(found.status, 200, `${path}?${query}`);
          }
        }
        const cached = await db.query<{ name: string; generic_plans: bigint; custom_plans: bigint }>(
          prepared(
            'indexes_test_array_lookups',
            `SELECT name, generic_plans, custom_plans FROM pg_prepared_statements
              WHERE statement ~ '^\\s*SELECT' AND (statement LIKE '%= ANY(%' OR statement LIKE '%unnest(%')
                AND name <> 'indexes_test_array_lookups' ORDER BY name`,
          ),
        );
        assert.deepEqual(
          cached.rows.map((row) => row.name),
          [
            'ledger_balances_many',
            'payments_by_merchant_order_nos',
            'payments_by_order_nos',
            'payments_pages_0',
            'payouts_pages_1',
          ],
        );
        for (const row of cached.rows) {
          assert.equal(row.custom_plans, 0n, row.name);
          assert.ok(row.generic_plans >= 12n, `${row.name}: ${row.generic_plans} runs of the kept plan`);
        }
        const merchantId = (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
        for (const execute of [
          `ledger_balances_many('{${merchantId}}')`,
          `payments_by_merchant_order_nos('{${merchantId}}', '{${input.merchantOrderNo}}')`,
          `payments_by_order_nos('{${orderNo}}')`,
          `payments_pages_0('{${merchantId}}', '{21}')`,
          `payouts_pages_1('{${merchantId}}', '{PENDING}', '{21}')`,
        ]) {
          const plan = await explainIn(db, execute);
          assert.doesNotMatch(plan, NOT_AN_INDEX_PLAN, `${execute}:\n${plan}`);
          assert.match(plan, /Index (Only )?Scan/, `${execute}:\n${plan}`);
        }
      } finally {
        await platform.close();
      }
    });

    it('a plan made while the table was empty gives way to the index the keys need', async () => {
      const database = await freshPostgres();
      const db = await openDatabase({ databaseUrl: database.url, dataDir: 'memory://', planRenewalMs: 500 });
      try {
        await db.query(EXPLAIN_FUNCTION);
        // No ANALYZE behind the test's back: only the renewal may change the plan.
        await db.query('ALTER TABLE payments SET (autovacuum_enabled = false)');
        const lookups = lookupStatements('payments', 'id, order_no, merchant_id, merchant_order_no');
        const pairs = [['1'], ['BULK-7']];
        const execute = `payments_by_merchant_order_nos('{1}', '{BULK-7}')`;
        assert.equal((await db.query(lookups.byMerchantOrderNo, pairs)).rows.length, 0);
        const planned = Date.now();
        const empty = await explainIn(db, execute);
        assert.doesNotMatch(empty, NOT_AN_INDEX_PLAN, empty);

        await db.query(
          `INSERT INTO merchants (name, environment, access_key) VALUES ('bulk', 'sandbox', 'ak_test_bulk')`,
        );
        await db.query(
          `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url,
                                 status, expires_at, created_at, updated_at)
           SELECT 'P2026' || lpad(g::text, 14, '0'), m.id, 'BULK-' || g, 'BRL', 100, 'PIX', 'https://m.example/w',
                  'PENDING', now() + interval '1 hour', now() - (g || ' seconds')::interval, now()
             FROM generate_series(1, 20000) g, merchants m WHERE m.access_key = 'ak_test_bulk'`,
        );
        const merchantId = (
          await db.query<{ id: bigint }>(`SELECT id FROM merchants WHERE access_key = 'ak_test_bulk'`)
        ).rows[0]?.id as bigint;
        const found = [[merchantId.toString()], ['BULK-7']];
        if (Date.now() - planned < 400) {
          // Still the plan made on the empty table: kept, not made again for the rows now there.
          assert.equal((await db.query(lookups.byMerchantOrderNo, found)).rows.length, 1);
          assert.equal(await explainIn(db, execute), empty);
        }

        await new Promise((resolve) => setTimeout(resolve, 600));
        // The first statement after the renewal time drops the kept plans; this one is planned again.
        assert.equal((await db.query(lookups.byMerchantOrderNo, found)).rows.length, 1);
        const renewed = await explainIn(db, execute);
        assert.doesNotMatch(renewed, NOT_AN_INDEX_PLAN, renewed);
        assert.match(renewed, /Index Scan using payments_merchant_id_merchant_order_no_key/, renewed);
        assert.notEqual(renewed, empty, 'the plan made on the empty table probed the unique index already');
      } finally {
        await db.close();
        await database.drop();
      }
    });
  },
);
