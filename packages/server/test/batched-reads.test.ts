/**
 * Reads by key, batched per turn of the event loop (modules/orders/lookups.ts, the list pages of
 * modules/orders/reads.ts, Ledger.balances): the reads that arrive together cost one statement,
 * and each caller still gets exactly what it would have got alone, for its own merchant only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Payment } from '@paygate/wire';
import { prepared } from '../src/db/db.js';
import { Balances } from '../src/modules/balances/service.js';
import { Ledger } from '../src/modules/ledger/service.js';
import { Payments } from '../src/modules/payments/service.js';
import { Payouts } from '../src/modules/payouts/service.js';
import {
  countingDb,
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';

const payeeOf = (i: number) => ({ name: `Payee ${i}`, accountNumber: `0001-${i}`, bankCode: '001' });

for (const database of databases()) {
  describe(`reads arriving together are batched (${database})`, () => {
    let platform: TestPlatform;
    let a: TestMerchant;
    let b: TestMerchant;
    let aId: bigint;
    let bId: bigint;
    /** A's and B's payments, oldest first; both have one with merchantOrderNo SHARED-1. */
    const payments = new Map<TestMerchant, Payment[]>();
    const payoutNos: string[] = [];
    const statements: string[] = [];
    const sentParams: (readonly unknown[])[] = [];
    let counted: { payments: Payments; payouts: Payouts; balances: Balances };

    before(async () => {
      platform = await startTestPlatform({ database });
      a = await createMerchant(platform, 'Shop A');
      b = await createMerchant(platform, 'Shop B');
      const idOf = async (merchant: TestMerchant) =>
        (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
      aId = await idOf(a);
      bId = await idOf(b);
      for (const merchant of [a, b]) {
        const made: Payment[] = [];
        for (let i = 1; i <= 4; i++) {
          const input = paymentInput(i === 1 ? { merchantOrderNo: 'SHARED-1' } : {});
          const created = await post<Payment>(platform, merchant, '/api/v1/payments', input);
          assert.equal(created.status, 200, JSON.stringify(created.body));
          made.push(created.body.data as Payment);
        }
        payments.set(merchant, made);
      }
      // A's first two payments succeed (funds for payouts); B's stay pending.
      for (const payment of (payments.get(a) as Payment[]).slice(0, 2)) {
        const paid = await post(platform, a, '/api/v1/sandbox/payments/simulate', {
          orderNo: payment.orderNo,
          status: 'SUCCEEDED',
        });
        assert.equal(paid.status, 200, JSON.stringify(paid.body));
      }
      for (let i = 1; i <= 2; i++) {
        const payout = await post<{ orderNo: string }>(platform, a, '/api/v1/payouts', {
          merchantOrderNo: `OUT-${i}`,
          currency: 'BRL',
          amount: '10.00',
          webhookUrl: 'https://merchant.example/webhook/payout',
          payee: payeeOf(i),
        });
        assert.equal(payout.status, 200, JSON.stringify(payout.body));
        payoutNos.push(payout.body.data?.orderNo as string);
      }
      // The services as the platform builds them, over the same database, counting statements.
      const db = countingDb(platform.services.db, statements, sentParams);
      const { config } = platform.services;
      const ledger = new Ledger(db, config);
      counted = {
        payments: new Payments(db, config),
        payouts: new Payouts(db, config, ledger),
        balances: new Balances(ledger),
      };
    });
    after(() => platform.close());

    /** Statements sent while `work` ran, and its result. */
    async function counting<T>(work: () => Promise<T>): Promise<{ result: T; sent: number }> {
      statements.length = 0;
      sentParams.length = 0;
      const result = await work();
      return { result, sent: statements.length };
    }

    const settled = <T>(promise: Promise<T>) =>
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error: (error as { code?: string }).code }),
      );

    it('payments by orderNo and by merchantOrderNo, for two merchants, in one statement', async () => {
      const [a1, a2] = payments.get(a) as Payment[];
      const [b1] = payments.get(b) as Payment[];
      const { result, sent } = await counting(() =>
        Promise.all([
          settled(counted.payments.get(aId, { orderNo: (a2 as Payment).orderNo })),
          settled(counted.payments.get(aId, { merchantOrderNo: 'SHARED-1' })),
          settled(counted.payments.get(bId, { merchantOrderNo: 'SHARED-1' })),
          // Another merchant's order number is no order of B's.
          settled(counted.payments.get(bId, { orderNo: (a1 as Payment).orderNo })),
          settled(counted.payments.get(aId, { merchantOrderNo: 'NO-SUCH-ORDER' })),
          settled(counted.payments.get(aId, { orderNo: (a2 as Payment).orderNo })),
        ]),
      );
      assert.equal(sent, 1);
      const orderNoOf = (r: (typeof result)[number]) => ('value' in r ? r.value.orderNo : r.error);
      assert.deepEqual(result.map(orderNoOf), [
        (a2 as Payment).orderNo,
        (a1 as Payment).orderNo,
        (b1 as Payment).orderNo,
        'ORDER_NOT_FOUND',
        'ORDER_NOT_FOUND',
        (a2 as Payment).orderNo,
      ]);
      // Each caller gets what it would have got alone.
      assert.deepEqual(
        (result[1] as { value: unknown }).value,
        await counted.payments.get(aId, { orderNo: (a1 as Payment).orderNo }),
      );
    });

    it("by merchantOrderNo for two merchants, one statement: neither gets the other's order", async () => {
      // A's second order, asked for by B with A's merchantOrderNo in the same batch, is no order of B's.
      const [, a2] = payments.get(a) as Payment[];
      const [b1] = payments.get(b) as Payment[];
      const { result, sent } = await counting(() =>
        Promise.all([
          settled(counted.payments.get(aId, { merchantOrderNo: (a2 as Payment).merchantOrderNo })),
          settled(counted.payments.get(bId, { merchantOrderNo: (a2 as Payment).merchantOrderNo })),
          settled(counted.payments.get(bId, { merchantOrderNo: 'SHARED-1' })),
        ]),
      );
      assert.equal(sent, 1);
      assert.deepEqual(
        result.map((r) => ('value' in r ? r.value.orderNo : r.error)),
        [(a2 as Payment).orderNo, 'ORDER_NOT_FOUND', (b1 as Payment).orderNo],
      );
    });

    it('the same merchantOrderNo asked for twice in one batch is sent once and answers both', async () => {
      const [, a2] = payments.get(a) as Payment[];
      const { merchantOrderNo } = a2 as Payment;
      const { result, sent } = await counting(() =>
        Promise.all([
          counted.payments.get(aId, { merchantOrderNo }),
          counted.payments.get(aId, { merchantOrderNo }),
          settled(counted.payments.get(bId, { merchantOrderNo })),
        ]),
      );
      assert.equal(sent, 1);
      assert.deepEqual(sentParams[0], [
        [aId.toString(), bId.toString()],
        [merchantOrderNo, merchantOrderNo],
      ]);
      assert.equal(result[0].orderNo, (a2 as Payment).orderNo);
      assert.deepEqual(result[1], result[0]);
      assert.deepEqual(result[2], { error: 'ORDER_NOT_FOUND' });
    });

    it('payouts and their receipts by either reference in one statement', async () => {
      const { result, sent } = await counting(() =>
        Promise.all([
          counted.payouts.get(aId, { orderNo: payoutNos[0] as string }),
          counted.payouts.get(aId, { merchantOrderNo: 'OUT-2' }),
          counted.payouts.receipt(aId, { merchantOrderNo: 'OUT-1' }),
          settled(counted.payouts.get(bId, { orderNo: payoutNos[1] as string })),
        ]),
      );
      assert.equal(sent, 1);
      assert.equal(result[0].orderNo, payoutNos[0]);
      assert.equal(result[1].orderNo, payoutNos[1]);
      assert.equal(result[2].orderNo, payoutNos[0]);
      assert.deepEqual(result[2].payee, payeeOf(1));
      assert.deepEqual(result[3], { error: 'ORDER_NOT_FOUND' });
    });

    it('list pages of any merchants and filters: one statement per combination of filters, each page as alone', async () => {
      const first = await counted.payments.list(aId, { pageSize: 2 });
      assert.ok(first.nextCursor);
      const requests: [bigint, Parameters<Payments['list']>[1]][] = [
        [aId, { pageSize: 2 }],
        [bId, { pageSize: 20 }],
        [aId, { pageSize: 2 }],
        [aId, { pageSize: 20, status: 'SUCCEEDED' }],
        [bId, { pageSize: 20, status: 'SUCCEEDED' }],
        [aId, { pageSize: 2, cursor: first.nextCursor }],
        [aId, { pageSize: 20, from: 0, to: Date.now() + 60_000 }],
      ];
      const alone = [];
      for (const [merchantId, filters] of requests) alone.push(await counted.payments.list(merchantId, filters));
      const { result, sent } = await counting(() =>
        Promise.all(requests.map(([merchantId, filters]) => counted.payments.list(merchantId, filters))),
      );
      // Shapes: none, status, cursor, from and to.
      assert.equal(sent, 4);
      assert.deepEqual(result, alone);
      const numbers = (page: (typeof result)[number]) => page.items.map((item) => item.orderNo);
      const aNewestFirst = (payments.get(a) as Payment[]).map((p) => p.orderNo).reverse();
      assert.deepEqual(numbers(result[0] as (typeof result)[number]), aNewestFirst.slice(0, 2));
      assert.deepEqual(numbers(result[5] as (typeof result)[number]), aNewestFirst.slice(2, 4));
      assert.equal(result[5]?.nextCursor, null);
      assert.equal(result[4]?.items.length, 0);
      assert.equal(result[3]?.items.length, 2);
      // A bad filter is refused before any statement, and does not fail the others.
      const refused = await counting(() =>
        Promise.all([
          settled(counted.payouts.list(aId, { pageSize: 20, status: 'NOPE' })),
          settled(counted.payouts.list(aId, { pageSize: 20, cursor: 'not-a-cursor' })),
          settled(counted.payouts.list(aId, { pageSize: 20 })),
        ]),
      );
      assert.equal(refused.sent, 1);
      assert.deepEqual(refused.result.slice(0, 2), [{ error: 'VALIDATION_FAILED' }, { error: 'VALIDATION_FAILED' }]);
      assert.equal((refused.result[2] as { value: { items: unknown[] } }).value.items.length, 2);
    });

    it("balances of several merchants in one statement, each merchant's own", async () => {
      const { result, sent } = await counting(() =>
        Promise.all([counted.balances.list(aId), counted.balances.list(bId), counted.balances.list(aId, 'BRL')]),
      );
      assert.equal(sent, 1);
      const brl = (list: (typeof result)[number]) => list.find((balance) => balance.currency === 'BRL');
      assert.notEqual(brl(result[0])?.available, '0.00');
      assert.notEqual(brl(result[0])?.reserved, '0.00');
      assert.deepEqual(brl(result[1]), { currency: 'BRL', available: '0.00', reserved: '0.00' });
      assert.deepEqual(result[2], [brl(result[0])]);
      assert.deepEqual(result[0], await counted.balances.list(aId));
    });

    it(
      'reads by either key, list pages, receipts and balances go to the reads connection, never behind a write',
      { skip: database !== 'postgres' && 'PostgreSQL only: the embedded database has one session' },
      async () => {
        const db = platform.services.db;
        await db.query('CREATE TABLE IF NOT EXISTS batched_reads_probe (id text PRIMARY KEY)');
        // A write that holds the pipelined writes connection until it is let go: it waits for a
        // lock this test holds in a transaction of its own.
        let release: () => void = () => {};
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked: () => void = () => {};
        const lockTaken = new Promise<void>((resolve) => (locked = resolve));
        // Let go in any case after a while: a read queued behind the write would otherwise wait
        // for this test, and this test for it.
        const letGo = setTimeout(() => release(), 3_000);
        const holder = db.transaction(async (tx) => {
          await tx.query('LOCK TABLE batched_reads_probe IN EXCLUSIVE MODE');
          locked();
          await held;
        });
        await lockTaken;
        let writeDone = false;
        const write = db
          .query(
            prepared(
              'batched_reads_probe_insert',
              'INSERT INTO batched_reads_probe (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id',
            ),
            [`probe-${Date.now()}`],
          )
          .then(() => (writeDone = true));
        try {
          const [a1] = payments.get(a) as Payment[];
          await Promise.all([
            platform.services.payments.get(aId, { orderNo: (a1 as Payment).orderNo }),
            platform.services.payments.get(aId, { merchantOrderNo: 'SHARED-1' }),
            platform.services.payments.list(aId, { pageSize: 2 }),
            platform.services.payouts.get(aId, { merchantOrderNo: 'OUT-1' }),
            platform.services.payouts.receipt(aId, { orderNo: payoutNos[0] as string }),
            platform.services.payouts.list(aId, { pageSize: 2 }),
            platform.services.balances.list(aId),
          ]);
          assert.equal(writeDone, false, 'every read was answered while the write still waited');
        } finally {
          clearTimeout(letGo);
          release();
          await holder;
          await write;
        }
        assert.equal(writeDone, true);
      },
    );
  });
}
