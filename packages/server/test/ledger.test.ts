import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.js';
import { sqlState } from '../src/db/db.js';
import { credit, debit, merchantAccount, platformAccount } from '../src/modules/ledger/service.js';
import { DEFAULT_FEES, feeOn, paymentFee } from '../src/fees.js';
import {
  count,
  createMerchant,
  databases,
  get,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { assertBooksHealthy, balanceOf, fund, payoutInput, postingsOf } from './money-harness.js';
import type { LedgerEntry } from '@paygate/wire';

type Entry = LedgerEntry;

describe('fees', () => {
  it('percent rounds half up to the minor unit, plus the fixed part; a pay-in fee never exceeds the amount', () => {
    assert.equal(feeOn({ percentBps: 99, fixedMinor: 0n }, 12_550n), 124n); // 124.245 → 124
    assert.equal(feeOn({ percentBps: 290, fixedMinor: 30n }, 10_000n), 320n);
    assert.equal(feeOn({ percentBps: 50, fixedMinor: 0n }, 100n), 1n); // 0.5 → 1
    assert.equal(feeOn({ percentBps: 50, fixedMinor: 0n }, 99n), 0n); // 0.495 → 0
    assert.equal(paymentFee(DEFAULT_FEES, 'BRL', 'BOLETO', 100n), 100n, 'capped at the paid amount');
    assert.equal(paymentFee(DEFAULT_FEES, 'BRL', 'BOLETO', 10_000n), 350n);
  });

  it('PAYGATE_FEES overrides parts of the default table and refuses anything it cannot charge exactly', () => {
    const config = parseConfig({
      PAYGATE_FEES: JSON.stringify({
        payments: { USD: { CARD: { percent: '3.5', fixed: '0.10' } } },
        payouts: { EUR: { percent: 1, fixed: '0' } },
      }),
    });
    assert.deepEqual(config.fees.payments.USD?.CARD, { percentBps: 350, fixedMinor: 10n });
    assert.deepEqual(config.fees.payments.BRL, DEFAULT_FEES.payments.BRL);
    assert.deepEqual(config.fees.payouts.EUR, { percentBps: 100, fixedMinor: 0n });
    assert.deepEqual(config.fees.payouts.BRL, DEFAULT_FEES.payouts.BRL);
    for (const bad of [
      'not json',
      '{"payments":{"XXX":{"PIX":{"percent":"1","fixed":"0"}}}}',
      '{"payments":{"BRL":{"SPEI":{"percent":"1","fixed":"0"}}}}',
      '{"payouts":{"BRL":{"percent":"1.005","fixed":"0"}}}',
      '{"payouts":{"BRL":{"percent":"101","fixed":"0"}}}',
      '{"payouts":{"BRL":{"percent":"1","fixed":"0.001"}}}',
      '{"payouts":{"BRL":{"percent":"1","fixed":"-1"}}}',
      '{"payouts":{"BRL":{"percent":"1"}}}',
      '{"refunds":{}}',
    ]) {
      assert.throws(() => parseConfig({ PAYGATE_FEES: bad }), ConfigError, bad);
    }
  });
});

for (const database of databases()) {
  describe(`ledger (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let merchantId: bigint;

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
      merchantId = (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
    });
    after(() => platform.close());

    const legsOf = async (reference: string) =>
      (
        await platform.services.db.query<{ merchant_id: bigint | null; kind: string; amount: bigint }>(
          `SELECT a.merchant_id, a.kind, e.amount FROM ledger_entries e
             JOIN ledger_accounts a ON a.id = e.account_id JOIN ledger_transactions t ON t.id = e.transaction_id
            WHERE t.reference = $1 ORDER BY a.kind`,
          [reference],
        )
      ).rows;

    it('a SUCCEEDED payment debits channel clearing and credits the merchant net of the fee and the platform the fee', async () => {
      const orderNo = await fund(platform, merchant, '125.50'); // BRL PIX: 0.99 % → 1.24
      assert.deepEqual(await legsOf(`payment:${orderNo}:succeeded`), [
        { merchant_id: merchantId, kind: 'available', amount: 12_426n },
        { merchant_id: null, kind: 'channel_clearing', amount: -12_550n },
        { merchant_id: null, kind: 'fee_revenue', amount: 124n },
      ]);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '124.26', reserved: '0.00' });

      // The fee follows the method; the paid amount (not the order amount) is what is charged on.
      const boleto = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', {
        merchantOrderNo: `B-${Date.now()}`,
        currency: 'BRL',
        amount: '100.00',
        paymentMethod: { code: 'BOLETO' },
        webhookUrl: 'https://merchant.example/webhook/payment',
      });
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: boleto.body.data?.orderNo,
        status: 'SUCCEEDED',
        paidAmount: '90.00',
      });
      assert.deepEqual(await legsOf(`payment:${boleto.body.data?.orderNo}:succeeded`), [
        { merchant_id: merchantId, kind: 'available', amount: 8_650n },
        { merchant_id: null, kind: 'channel_clearing', amount: -9_000n },
        { merchant_id: null, kind: 'fee_revenue', amount: 350n },
      ]);
      // Failed, expired and canceled payments move no money.
      const failed = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', {
        merchantOrderNo: `F-${Date.now()}`,
        currency: 'BRL',
        amount: '10.00',
        paymentMethod: { code: 'PIX' },
        webhookUrl: 'https://merchant.example/webhook/payment',
      });
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: failed.body.data?.orderNo,
        status: 'FAILED',
      });
      assert.deepEqual(await postingsOf(platform, failed.body.data?.orderNo as string), []);
      await assertBooksHealthy(platform);
    });

    it('the same reference posts once: a repeat writes no entries and reports "already posted"', async () => {
      const { ledger, db } = platform.services;
      const posting = {
        reference: `test:${Date.now()}:once`,
        kind: 'payment' as const,
        orderNo: 'P000000000000000000',
        currency: 'EUR',
        legs: [
          debit(platformAccount('channel_clearing'), 500n),
          credit(merchantAccount(merchantId, 'available'), 500n),
        ],
      };
      const first = await db.transaction((tx) => ledger.post(tx, posting));
      assert.equal(first.posted, true);
      const entries = await count(platform, 'ledger_entries');
      const again = await db.transaction((tx) => ledger.post(tx, posting));
      assert.deepEqual(again, { posted: false });
      // A second identity (refund by refundNo) blocks a posting under a different main reference.
      const aliased = { ...posting, reference: `${posting.reference}:a`, altReference: `${posting.reference}:alt` };
      assert.equal((await db.transaction((tx) => ledger.post(tx, aliased))).posted, true);
      const viaAlias = await db.transaction((tx) =>
        ledger.post(tx, { ...aliased, reference: `${posting.reference}:b` }),
      );
      assert.deepEqual(viaAlias, { posted: false });
      assert.equal(await count(platform, 'ledger_entries'), entries + 2);
      assert.deepEqual(await balanceOf(platform, merchant, 'EUR'), {
        currency: 'EUR',
        available: '10.00',
        reserved: '0.00',
      });
      await assertBooksHealthy(platform);
    });

    it('the database refuses an unbalanced transaction at commit, and one without entries', async () => {
      const { db } = platform.services;
      const transactions = await count(platform, 'ledger_transactions');
      const [account] = (
        await db.query<{ id: bigint }>(
          `SELECT id FROM ledger_accounts WHERE merchant_id IS NULL AND currency = 'BRL' AND kind = 'fee_revenue'`,
        )
      ).rows;
      let reachedCommit = false;
      await assert.rejects(
        db.transaction(async (tx) => {
          const t = await tx.query<{ id: bigint }>(
            `INSERT INTO ledger_transactions (reference, kind, order_no, created_at)
             VALUES ('test:unbalanced', 'payment', 'P0', now()) RETURNING id`,
          );
          await tx.query(
            `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount, created_at)
             VALUES ($1, $2, 'BRL', 100, now()), ($1, $2, 'BRL', -60, now())`,
            [t.rows[0]?.id, account?.id],
          );
          reachedCommit = true; // the statements succeed: the check is deferred to COMMIT
        }),
        (error: unknown) => sqlState(error) === '23000' && /does not balance/.test(String(error)),
      );
      assert.ok(reachedCommit);
      await assert.rejects(
        db.query(
          `INSERT INTO ledger_transactions (reference, kind, order_no, created_at) VALUES ('test:empty', 'payment', 'P0', now())`,
        ),
        (error: unknown) => sqlState(error) === '23000' && /fewer than two entries/.test(String(error)),
      );
      assert.equal(await count(platform, 'ledger_transactions'), transactions);
      await assertBooksHealthy(platform);
    });

    it('the database refuses an entry of no such transaction or account, and one added to a committed transaction', async () => {
      const { db } = platform.services;
      const [account] = (
        await db.query<{ id: bigint }>(
          `SELECT id FROM ledger_accounts WHERE merchant_id IS NULL AND currency = 'BRL' AND kind = 'fee_revenue'`,
        )
      ).rows;
      const [committed] = (await db.query<{ id: bigint }>('SELECT max(id) AS id FROM ledger_transactions')).rows;
      const entries = await count(platform, 'ledger_entries');
      const entry = (transaction: unknown, accountId: unknown, currency = 'BRL') =>
        db.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount, created_at)
             VALUES ($1, $2, $3, 100, now()), ($1, $2, $3, -100, now())`,
            [transaction, accountId, currency],
          );
        });
      // Checked once per statement, as the foreign keys they replace were: the same SQLSTATE.
      await assert.rejects(entry(committed?.id, 987_654_321n), (error: unknown) => sqlState(error) === '23503');
      await assert.rejects(entry(committed?.id, account?.id, 'EUR'), (error: unknown) => sqlState(error) === '23503');
      await assert.rejects(entry(987_654_321n, account?.id), (error: unknown) => sqlState(error) === '23503');
      // Balanced, of a real transaction and account, but that transaction was committed before.
      await assert.rejects(
        entry(committed?.id, account?.id),
        (error: unknown) => sqlState(error) === '23000' && /another database transaction/.test(String(error)),
      );
      // Inside a savepoint (as every signed request's work runs) a transaction and its entries still go together.
      await db.transaction(async (tx) => {
        await tx.query('SAVEPOINT inner_work');
        const t = await tx.query<{ id: bigint }>(
          `INSERT INTO ledger_transactions (reference, kind, order_no, created_at)
           VALUES ('test:savepoint', 'payment', 'P0', now()) RETURNING id`,
        );
        await tx.query(
          `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount, created_at)
           VALUES ($1, $2, 'BRL', 100, now()), ($1, $2, 'BRL', -100, now())`,
          [t.rows[0]?.id, account?.id],
        );
        await tx.query('RELEASE SAVEPOINT inner_work');
      });
      assert.equal(await count(platform, 'ledger_entries'), entries + 2);
      await assertBooksHealthy(platform);
    });

    it('entries and transactions are immutable; balances move only by posting; no merchant balance goes below zero', async () => {
      const { db } = platform.services;
      const refusals: [string, string][] = [
        ['UPDATE ledger_entries SET amount = amount * 2', '23000'],
        ['DELETE FROM ledger_entries', '23000'],
        ['TRUNCATE ledger_entries CASCADE', '23000'],
        [`UPDATE ledger_transactions SET reference = reference || 'x'`, '23000'],
        ['DELETE FROM ledger_transactions', '23000'],
        ['UPDATE ledger_accounts SET balance = balance + 1', '23000'],
        ['DELETE FROM ledger_accounts', '23000'],
      ];
      for (const [sql, state] of refusals) {
        await assert.rejects(db.query(sql), (error: unknown) => sqlState(error) === state, sql);
      }
      // A balanced posting that would overdraw a merchant account is refused by the CHECK.
      await assert.rejects(
        db.transaction((tx) =>
          platform.services.ledger.post(tx, {
            reference: 'test:overdraw',
            kind: 'payout_reserve',
            orderNo: 'W0',
            currency: 'BRL',
            legs: [
              debit(merchantAccount(merchantId, 'available'), 1_000_000_00n),
              credit(merchantAccount(merchantId, 'reserved'), 1_000_000_00n),
            ],
          }),
        ),
        (error: unknown) => sqlState(error) === '23514',
      );
      await assertBooksHealthy(platform);
    });

    it('every balance equals the sum of its entries', async () => {
      const other = await createMerchant(platform);
      await fund(platform, other, '500.00');
      const payout = await post<{ orderNo: string }>(platform, other, '/api/v1/payouts', payoutInput());
      await post(platform, other, '/api/v1/sandbox/payouts/simulate', {
        orderNo: payout.body.data?.orderNo,
        status: 'SUCCEEDED',
      });
      await post(platform, other, '/api/v1/sandbox/payouts/return', { orderNo: payout.body.data?.orderNo });
      const rows = await platform.services.db.query<{ balance: bigint; sum: bigint }>(
        `SELECT a.balance, coalesce(sum(e.amount), 0)::bigint AS sum
           FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id GROUP BY a.id, a.balance`,
      );
      assert.ok(rows.rows.length >= 4);
      for (const row of rows.rows) assert.equal(row.balance, row.sum);
      // And the platform's books close: across every account of a currency the balances sum to zero.
      const totals = await platform.services.db.query<{ currency: string; total: bigint }>(
        'SELECT currency, sum(balance)::bigint AS total FROM ledger_accounts GROUP BY currency',
      );
      for (const row of totals.rows) assert.equal(row.total, 0n, row.currency);
    });

    it("entries: a merchant's own postings, newest first, by currency and time, paged (service and HTTP)", async () => {
      const reader = await createMerchant(platform);
      const readerId = (await platform.services.merchants.findByAccessKey(reader.accessKey))?.id as bigint;
      const paymentNo = await fund(platform, reader, '200.00');
      const usdNo = await fund(platform, reader, '50.00', 'USD'); // CARD: 2.90 % + 0.30 → 1.75
      const payout = await post<{ orderNo: string }>(platform, reader, '/api/v1/payouts', payoutInput());
      const payoutNo = payout.body.data?.orderNo as string;

      const all = await platform.services.ledger.entries(readerId, { pageSize: 100 });
      assert.deepEqual(
        all.items.map((e) => [e.reference, e.account, e.amount]),
        [
          [`payout:${payoutNo}:reserve`, 'reserved', '102.00'],
          [`payout:${payoutNo}:reserve`, 'available', '-102.00'],
          [`payment:${usdNo}:succeeded`, 'available', '48.25'],
          [`payment:${paymentNo}:succeeded`, 'available', '198.02'],
        ],
      );
      assert.equal(all.items[0]?.transactionKind, 'payout_reserve');
      assert.equal(all.items[0]?.orderNo, payoutNo);
      // The direction is stated once, by the sign of the amount (migration 0024 dropped `side`).
      assert.deepEqual(Object.keys(all.items[1] ?? {}).sort(), [
        'account',
        'amount',
        'createdAt',
        'currency',
        'entryId',
        'orderNo',
        'reference',
        'transactionKind',
      ]);
      assert.equal(all.nextCursor, null);

      const brl = await platform.services.ledger.entries(readerId, { currency: 'BRL', pageSize: 2 });
      assert.equal(brl.items.length, 2);
      assert.ok(brl.nextCursor);
      const rest = await platform.services.ledger.entries(readerId, {
        currency: 'BRL',
        pageSize: 2,
        cursor: brl.nextCursor,
      });
      assert.deepEqual(
        rest.items.map((e) => e.reference),
        [`payment:${paymentNo}:succeeded`],
      );
      const future = await platform.services.ledger.entries(readerId, { from: Date.now() + 60_000, pageSize: 10 });
      assert.deepEqual(future.items, []);

      const http = await get<{ items: Entry[]; nextCursor: string | null }>(
        platform,
        reader,
        '/api/v1/ledger/entries',
        'currency=USD',
      );
      assert.equal(http.status, 200, JSON.stringify(http.body));
      assert.deepEqual(
        http.body.data?.items.map((e) => [e.currency, e.account, e.amount]),
        [['USD', 'available', '48.25']],
      );
      assert.ok(
        http.body.data?.items.every((e) => !('side' in e)),
        'the API states the direction once: the sign',
      );
      // Nobody else's entries, and the platform's own accounts never show.
      const others = await platform.services.ledger.entries(merchantId, { pageSize: 100 });
      assert.ok(others.items.every((e) => e.orderNo !== payoutNo && e.orderNo !== paymentNo));
      assert.ok(all.items.every((e) => e.account === 'available' || e.account === 'reserved'));
      assert.equal((await get(platform, reader, '/api/v1/ledger/entries', 'currency=XXX')).status, 400);
    });
  });
}
