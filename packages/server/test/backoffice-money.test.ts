/**
 * Money changed by people takes two (issue 45): balance adjustments (the proposer cannot approve,
 * a debit beyond the available balance books nothing, two approvals at once book once, the ledger
 * balances, the merchant sees it in the portal with its reason) and fee plans (what /api/v1/rates
 * answers and the fees booked are the merchant's own from the next order on); the replay of a
 * merchant's failed deliveries (same ids and bodies, signed afresh, counted); the money page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CurrencyRates } from '@paygate/wire';
import {
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { BACKOFFICE, operator, type OperatorClient } from './backoffice-harness.js';
import { assertBooksHealthy, balanceOf, fund, payoutInput, SIMPLE_FEES } from './money-harness.js';
import { PortalClient, portalUser } from './portal-harness.js';
import { nonceOf, type Receiver, startReceiver, verifyReceived } from './receiver.js';

interface Adjustment {
  adjustmentId: string;
  status: string;
  amount: string;
  reason: string;
  proposedBy: string;
  decidedBy: string | null;
}

for (const database of databases()) {
  describe(`back-office money (${database})`, () => {
    let platform: TestPlatform;
    let shop: TestMerchant;
    let other: TestMerchant;
    let financeA: OperatorClient;
    let financeB: OperatorClient;
    let adminC: OperatorClient;
    let receiver: Receiver;

    before(async () => {
      receiver = await startReceiver({ status: 500, body: 'down' });
      platform = await startTestPlatform({
        database,
        env: { PAYGATE_FEES: SIMPLE_FEES, PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1ms' },
      });
      shop = await createMerchant(platform, 'Money Shop');
      other = await createMerchant(platform, 'Other Shop');
      financeA = await operator(platform, 'finance', 'finance.a@ops.example');
      financeB = await operator(platform, 'finance', 'finance.b@ops.example');
      adminC = await operator(platform, 'admin', 'admin.c@ops.example');
      await fund(platform, shop, '100.00');
    });
    after(async () => {
      await platform.close();
      await receiver.close();
    });

    const propose = (by: OperatorClient, amount: string, reason = 'goodwill credit for a late payout') =>
      by.post<Adjustment>(`${BACKOFFICE}/adjustments`, { merchant: shop.accessKey, currency: 'BRL', amount, reason });

    it('an adjustment is proposed, refused to its proposer, booked by another as one transaction the merchant sees', async () => {
      const proposed = await propose(financeA, '12.34');
      assert.equal(proposed.status, 200, proposed.text);
      const adjustment = proposed.body.data as Adjustment;
      assert.equal(adjustment.status, 'PROPOSED');
      assert.match(adjustment.adjustmentId, /^adj_/);
      assert.equal((await balanceOf(platform, shop)).available, '100.00', 'a proposal moves no money');

      const own = await financeA.post(`${BACKOFFICE}/adjustments/${adjustment.adjustmentId}/approve`, {});
      assert.equal(own.status, 403, own.text);
      assert.equal(own.body.msg, 'FORBIDDEN');
      assert.equal((await balanceOf(platform, shop)).available, '100.00');

      const booked = await financeB.post<Adjustment>(
        `${BACKOFFICE}/adjustments/${adjustment.adjustmentId}/approve`,
        {},
      );
      assert.equal(booked.status, 200, booked.text);
      assert.equal(booked.body.data?.status, 'BOOKED');
      assert.equal(booked.body.data?.decidedBy, 'finance.b@ops.example');
      assert.equal(
        (await balanceOf(platform, shop)).available,
        '112.34',
        'the available balance moves by the amount exactly',
      );
      const again = await adminC.post(`${BACKOFFICE}/adjustments/${adjustment.adjustmentId}/approve`, {});
      assert.equal(again.status, 409, 'booked at most once');
      assert.equal((await balanceOf(platform, shop)).available, '112.34');
      await assertBooksHealthy(platform);

      // One ledger transaction, against the platform's adjustments account, carrying the reason.
      const transactions = await platform.services.ledger.transactionsOf(adjustment.adjustmentId);
      assert.equal(transactions.length, 1);
      assert.equal(transactions[0]?.kind, 'adjustment');
      assert.equal(transactions[0]?.reason, 'goodwill credit for a late payout');
      // The merchant sees it in the portal's ledger, with its reason.
      const person = await portalUser(platform, shop);
      const portal = await PortalClient.signIn(platform, person.email, person.password);
      const ledger = await portal.get<{ items: { transactionKind: string; amount: string; reason?: string }[] }>(
        '/portal/api/ledger?currency=BRL',
      );
      const entry = ledger.body.data?.items.find((e) => e.transactionKind === 'adjustment');
      assert.deepEqual(entry && { amount: entry.amount, reason: entry.reason }, {
        amount: '12.34',
        reason: 'goodwill credit for a late payout',
      });
      // The audit trail names both operators, with the reason and the amount.
      const trail = await platform.services.audit.list({ merchant: shop.accessKey });
      const proposedEntry = trail.find(
        (e) => e.action === 'adjustment.proposed' && e.object === adjustment.adjustmentId,
      );
      const bookedEntry = trail.find((e) => e.action === 'adjustment.booked' && e.object === adjustment.adjustmentId);
      assert.deepEqual(proposedEntry?.actor, { kind: 'operator', email: 'finance.a@ops.example' });
      assert.deepEqual(bookedEntry?.actor, { kind: 'operator', email: 'finance.b@ops.example' });
      assert.equal(bookedEntry?.detail?.reason, 'goodwill credit for a late payout');
      assert.equal(bookedEntry?.detail?.amount, '12.34');
    });

    it('a debit beyond the available balance books nothing: 409 INSUFFICIENT_BALANCE, still proposed', async () => {
      const before = await balanceOf(platform, shop);
      const proposed = await propose(financeA, '-1000.00', 'chargeback passed on');
      assert.equal(proposed.status, 200, proposed.text);
      const id = proposed.body.data?.adjustmentId as string;
      const refused = await financeB.post(`${BACKOFFICE}/adjustments/${id}/approve`, {});
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.msg, 'INSUFFICIENT_BALANCE');
      assert.deepEqual(await balanceOf(platform, shop), before);
      assert.deepEqual(await platform.services.ledger.transactionsOf(id), []);
      const listed = await adminC.get<{ adjustments: Adjustment[] }>(`${BACKOFFICE}/adjustments?status=PROPOSED`);
      assert.ok(listed.body.data?.adjustments.some((a) => a.adjustmentId === id));
      assert.equal(
        (await platform.services.audit.list({ action: 'adjustment.booked' })).filter((e) => e.object === id).length,
        0,
      );
      // A debit within it is booked; a rejected one never is.
      const small = await propose(financeA, '-2.34', 'bank fee passed on');
      assert.equal(
        (await adminC.post(`${BACKOFFICE}/adjustments/${small.body.data?.adjustmentId}/approve`, {})).status,
        200,
      );
      assert.equal((await balanceOf(platform, shop)).available, '110.00');
      const rejected = await financeB.post<Adjustment>(`${BACKOFFICE}/adjustments/${id}/reject`, { note: 'too much' });
      assert.equal(rejected.body.data?.status, 'REJECTED');
      assert.equal((await financeB.post(`${BACKOFFICE}/adjustments/${id}/approve`, {})).status, 409);
      await assertBooksHealthy(platform);
    });

    it('two approvals at once book once', async () => {
      const proposed = await propose(financeA, '5.00', 'goodwill credit, twice approved');
      const id = proposed.body.data?.adjustmentId as string;
      const before = await balanceOf(platform, shop);
      const answers = await Promise.all([
        financeB.post(`${BACKOFFICE}/adjustments/${id}/approve`, {}),
        adminC.post(`${BACKOFFICE}/adjustments/${id}/approve`, {}),
      ]);
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], answers.map((a) => a.text).join('\n'));
      const after = await balanceOf(platform, shop);
      assert.equal(Number(after.available) - Number(before.available), 5);
      assert.equal((await platform.services.ledger.transactionsOf(id)).length, 1);
      await assertBooksHealthy(platform);
    });

    it('bad adjustments change nothing: zero, too many decimals, an unknown merchant or currency, no reason', async () => {
      for (const body of [
        { merchant: shop.accessKey, currency: 'BRL', amount: '0.00', reason: 'nothing at all' },
        { merchant: shop.accessKey, currency: 'BRL', amount: '1.234', reason: 'too precise' },
        { merchant: shop.accessKey, currency: 'BRL', amount: '+1.00', reason: 'a plus sign' },
        { merchant: shop.accessKey, currency: 'XXX', amount: '1.00', reason: 'no such currency' },
        { merchant: shop.accessKey, currency: 'BRL', amount: '1.00', reason: '' },
      ]) {
        const refused = await financeA.post(`${BACKOFFICE}/adjustments`, body);
        assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
      }
      const unknown = await financeA.post(`${BACKOFFICE}/adjustments`, {
        merchant: 'ak_test_nosuch',
        currency: 'BRL',
        amount: '1.00',
        reason: 'nobody',
      });
      assert.equal(unknown.status, 404);
    });

    it("a fee plan takes two people, and /api/v1/rates and the fees booked are the merchant's own from then on", async () => {
      const rates = async (merchant: TestMerchant) =>
        (await get<CurrencyRates[]>(platform, merchant, '/api/v1/rates', 'currency=BRL')).body.data?.[0];
      assert.equal((await rates(shop))?.payout.feeFixed, '2.00');
      const plan = {
        payments: { BRL: { PIX: { percent: '2.5', fixed: '0.10' } } },
        payouts: { BRL: { percent: '0', fixed: '5.00' } },
      };
      const bad = await financeA.post(`${BACKOFFICE}/fee-changes`, {
        merchant: shop.accessKey,
        plan: { payments: { BRL: { CARD: { percent: '1', fixed: '0' } } } },
        reason: 'a method BRL has not',
      });
      assert.equal(bad.status, 400, bad.text);
      const proposed = await financeA.post<{ changeId: string; status: string }>(`${BACKOFFICE}/fee-changes`, {
        merchant: shop.accessKey,
        plan,
        reason: 'negotiated rates for 2027',
      });
      assert.equal(proposed.status, 200, proposed.text);
      assert.equal(proposed.body.data?.status, 'PROPOSED');
      assert.equal((await rates(shop))?.payout.feeFixed, '2.00', 'a proposal changes nothing');
      const id = proposed.body.data?.changeId as string;
      assert.equal((await financeA.post(`${BACKOFFICE}/fee-changes/${id}/approve`, {})).status, 403);
      const applied = await adminC.post<{ status: string }>(`${BACKOFFICE}/fee-changes/${id}/approve`, {});
      assert.equal(applied.status, 200, applied.text);
      assert.equal(applied.body.data?.status, 'APPLIED');

      const mine = await rates(shop);
      assert.deepEqual(
        mine?.payments.find((p) => p.method === 'PIX'),
        { method: 'PIX', feePercent: '2.50', feeFixed: '0.10' },
      );
      assert.equal(mine?.payout.feeFixed, '5.00');
      assert.equal((await rates(other))?.payout.feeFixed, '2.00', "another merchant's rates are the platform's");

      // A payment of 100.00 now pays 2.5% + 0.10; a payout of 10.00 reserves 5.00 of fee.
      const before = await balanceOf(platform, shop);
      const created = await post<{ orderNo: string }>(
        platform,
        shop,
        '/api/v1/payments',
        paymentInput({ amount: '100.00' }),
      );
      const orderNo = created.body.data?.orderNo as string;
      assert.equal(
        (await post(platform, shop, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'SUCCEEDED' })).status,
        200,
      );
      const paid = await balanceOf(platform, shop);
      assert.equal((Number(paid.available) - Number(before.available)).toFixed(2), '97.40');
      const payout = await post<{ fee: string }>(platform, shop, '/api/v1/payouts', payoutInput({ amount: '10.00' }));
      assert.equal(payout.status, 200, JSON.stringify(payout.body));
      const reserved = await balanceOf(platform, shop);
      assert.equal((Number(paid.available) - Number(reserved.available)).toFixed(2), '15.00');
      const page = await financeB.get<{ overrides: unknown; changes: { changeId: string }[] }>(
        `${BACKOFFICE}/merchants/${shop.accessKey}/fees`,
      );
      assert.deepEqual(page.body.data?.overrides, plan);
      const audited = await platform.services.audit.list({ action: 'fee_plan.applied' });
      assert.deepEqual(audited.at(-1)?.actor, { kind: 'operator', email: 'admin.c@ops.example' });
      await assertBooksHealthy(platform);
    });

    it('the replay delivers again every failed event of the range: same ids and bodies, signed afresh, counted', async () => {
      const start = platform.services.now();
      const orders: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await post<{ orderNo: string }>(
          platform,
          other,
          '/api/v1/payments',
          paymentInput({ webhookUrl: `${receiver.url}/hook` }),
        );
        orders.push(created.body.data?.orderNo as string);
        await post(platform, other, '/api/v1/sandbox/payments/simulate', { orderNo: orders.at(-1), status: 'FAILED' });
      }
      const deliverAll = async () => {
        for (let round = 0; round < 20; round++) {
          while ((await platform.services.webhooks.deliverNext('test')) !== 'idle');
          const pending = await platform.services.db.query<{ n: bigint }>(
            "SELECT count(*)::bigint AS n FROM events WHERE delivery_status = 'pending'",
          );
          if (Number(pending.rows[0]?.n) === 0) return;
          platform.advance(1_000);
        }
        assert.fail('events stayed pending');
      };
      await deliverAll();
      const failing = await adminC.get<{ items: { eventId: string; merchant: string; deliveryStatus: string }[] }>(
        `${BACKOFFICE}/events?status=failed&merchant=${other.accessKey}`,
      );
      assert.equal(failing.body.data?.items.length, 3);
      assert.ok(failing.body.data?.items.every((e) => e.merchant === other.accessKey && e.deliveryStatus === 'failed'));
      const firstTry = receiver.received.filter((r) => r.path === '/hook');
      const bodies = new Map(firstTry.map((r) => [JSON.parse(r.body.toString()).eventId as string, r.body.toString()]));

      const support = await operator(platform, 'support', 'support.replay@ops.example');
      const outside = await support.post<{ count: number }>(`${BACKOFFICE}/events/replay`, {
        merchant: other.accessKey,
        from: 0,
        to: start,
      });
      assert.deepEqual(outside.body.data, { count: 0 }, 'before the range: none');
      receiver.fallback = { status: 200, body: 'ok' };
      const before = receiver.received.length;
      const replayed = await support.post<{ count: number }>(`${BACKOFFICE}/events/replay`, {
        merchant: other.accessKey,
        from: start,
        to: platform.services.now() + 1,
      });
      assert.equal(replayed.status, 200, replayed.text);
      assert.deepEqual(replayed.body.data, { count: 3 });
      await deliverAll();
      const again = receiver.received.slice(before);
      assert.equal(again.length, 3);
      const keys = (await platform.services.platformKeys.publishedWebhookKeys()).map((k) => ({
        keyid: k.keyId,
        publicKey: k.publicKey,
      }));
      const firstNonces = new Set(firstTry.map(nonceOf));
      for (const request of again) {
        const eventId = JSON.parse(request.body.toString()).eventId as string;
        assert.equal(request.body.toString(), bodies.get(eventId), 'the same body, byte for byte');
        assert.ok(!firstNonces.has(nonceOf(request)), 'signed afresh');
        assert.ok(verifyReceived(request, keys, platform.services.now()));
      }
      const entry = (await platform.services.audit.list({ action: 'events.replayed' })).at(-1);
      assert.deepEqual(entry?.actor, { kind: 'operator', email: 'support.replay@ops.example' });
      assert.equal(entry?.detail?.count, 3);
      const none = await support.post<{ count: number }>(`${BACKOFFICE}/events/replay`, {
        merchant: other.accessKey,
        from: start,
        to: platform.services.now() + 1,
      });
      assert.deepEqual(none.body.data, { count: 0 }, 'delivered now: nothing to replay');
    });

    it("the money page: the platform's balances per currency, fees earned and the day's volume", async () => {
      const money = await financeA.get<{
        totals: { currency: string; merchantsAvailable: string; feesEarned: string }[];
        day: { volume: { currency: string; payments: { count: number; amount: string } }[] };
      }>(`${BACKOFFICE}/money`);
      assert.equal(money.status, 200, money.text);
      const brl = money.body.data?.totals.find((t) => t.currency === 'BRL');
      assert.ok(brl && Number(brl.merchantsAvailable) > 0);
      assert.equal(brl?.feesEarned, '2.60');
      const volume = money.body.data?.day.volume.find((v) => v.currency === 'BRL');
      assert.ok((volume?.payments.count ?? 0) >= 2);
      assert.equal((await financeA.get(`${BACKOFFICE}/money?day=2026-13-01`)).status, 400);
    });
  });
}
