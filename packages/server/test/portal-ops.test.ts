/**
 * The portal API's operations pages: the overview, events across orders with resend-all-failed
 * (recover), list totals, fee and net, the failure reason, cancel, and the sandbox's channel
 * buttons (404 in production). Real platform, real receiver, real databases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { PortalClient, portalUser } from './portal-harness.js';
import { type Receiver, startReceiver } from './receiver.js';

interface Payment {
  orderNo: string;
  status: string;
}
interface Page<T> {
  items: T[];
  nextCursor: string | null;
  total: number;
}
interface EventItem {
  eventId: string;
  orderType: string;
  orderNo: string;
  status: string;
  deliveryStatus: string;
}
interface Overview {
  from: number;
  to: number;
  payments: { status: string; currency: string; count: number; amount: string }[];
  payouts: { status: string; currency: string; count: number; amount: string }[];
  balances: { currency: string; available: string; reserved: string }[];
  failedEvents: number;
  recentFailures: EventItem[];
}
interface PaymentDetail {
  payment: Payment;
  charges: { fee: string; net: string; booked: boolean };
  failureReason: string | null;
}

for (const database of databases()) {
  describe(`portal operations API (${database})`, () => {
    let platform: TestPlatform;
    let receiver: Receiver;
    let shop: TestMerchant;
    let other: TestMerchant;
    let client: PortalClient;
    let otherClient: PortalClient;
    let shopId: bigint;
    const start = Date.now() - 1_000;

    before(async () => {
      receiver = await startReceiver();
      // Two attempts in all (the first and one retry 1 ms later): events fail fast.
      platform = await startTestPlatform({ database, env: { PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1ms' } });
      shop = await createMerchant(platform, 'Ops shop');
      const row = await platform.services.db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [
        shop.accessKey,
      ]);
      shopId = row.rows[0]?.id as bigint;
      other = await createMerchant(platform, 'Other shop');
      const user = await portalUser(platform, shop);
      client = await PortalClient.signIn(platform, user.email, user.password);
      const otherUser = await portalUser(platform, other);
      otherClient = await PortalClient.signIn(platform, otherUser.email, otherUser.password);
    });
    after(async () => {
      await platform.close();
      await receiver.close();
    });

    const createPayment = async (merchant: TestMerchant, amount = '100.00') => {
      const created = await post<Payment>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ amount, webhookUrl: `${receiver.url}/hook` }),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.data as Payment;
    };
    const simulate = (orderNo: string, body: Record<string, unknown>) =>
      client.post<Payment>(`/portal/api/sandbox/payments/${orderNo}/simulate`, body);

    /** Runs the dispatcher until no event is pending, moving the clock past each retry. */
    const deliverAll = async () => {
      for (let round = 0; round < 20; round++) {
        while ((await platform.services.webhooks.deliverNext('test')) !== 'idle');
        const pending = await platform.services.webhooks.count(shopId, { status: 'pending' });
        if (pending === 0) return;
        platform.advance(1_000);
      }
      assert.fail('events stayed pending');
    };

    it('sandbox buttons drive a payment through the same service as the API; a FAILED one keeps its reason', async () => {
      const payment = await createPayment(shop);
      const processing = await simulate(payment.orderNo, { status: 'PROCESSING' });
      assert.equal(processing.status, 200, processing.text);
      assert.equal(processing.body.data?.status, 'PROCESSING');
      const failed = await simulate(payment.orderNo, { status: 'FAILED', failureReason: 'Insufficient funds' });
      assert.equal(failed.body.data?.status, 'FAILED');
      const detail = await client.get<PaymentDetail>(`/portal/api/payments/${payment.orderNo}`);
      assert.equal(detail.body.data?.failureReason, 'Insufficient funds');
      const again = await simulate(payment.orderNo, { status: 'SUCCEEDED' });
      assert.equal(again.status, 409);
      assert.equal(again.body.msg, 'INVALID_STATE');

      const reasonless = await createPayment(shop);
      const wrong = await simulate(reasonless.orderNo, { status: 'SUCCEEDED', failureReason: 'no' });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.msg, 'VALIDATION_FAILED');
      const unknownField = await simulate(reasonless.orderNo, { status: 'FAILED', paidAmount: '1.00' });
      assert.equal(unknownField.status, 400);
      // Without the CSRF token, and for another merchant's order, nothing moves.
      const noCsrf = await client.post(
        `/portal/api/sandbox/payments/${reasonless.orderNo}/simulate`,
        { status: 'FAILED' },
        { noCsrf: true },
      );
      assert.equal(noCsrf.status, 403);
      const foreign = await otherClient.post(`/portal/api/sandbox/payments/${reasonless.orderNo}/simulate`, {
        status: 'FAILED',
      });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.msg, 'ORDER_NOT_FOUND');
    });

    it('the cashier page fail path stores a reason', async () => {
      const payment = await createPayment(shop);
      const form = await fetch(`${platform.url}/cashier/${payment.orderNo}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=fail',
      });
      assert.equal(form.status, 200);
      const detail = await client.get<PaymentDetail>(`/portal/api/payments/${payment.orderNo}`);
      assert.equal(detail.body.data?.payment.status, 'FAILED');
      assert.match(detail.body.data?.failureReason ?? '', /declined/);
    });

    it('fee and net: expected from the rate table while PENDING, as booked once SUCCEEDED', async () => {
      const payment = await createPayment(shop, '200.00');
      const pending = await client.get<PaymentDetail>(`/portal/api/payments/${payment.orderNo}`);
      // BRL PIX: 0.99 % → 1.98 on 200.00.
      assert.deepEqual(pending.body.data?.charges, { fee: '1.98', net: '198.02', booked: false });
      assert.equal(pending.body.data?.failureReason, null);
      await simulate(payment.orderNo, { status: 'SUCCEEDED' });
      const paid = await client.get<PaymentDetail>(`/portal/api/payments/${payment.orderNo}`);
      assert.deepEqual(paid.body.data?.charges, { fee: '1.98', net: '198.02', booked: true });
    });

    it('cancels a PENDING payment with the API rules: again is a no-op, a final one is INVALID_STATE', async () => {
      const payment = await createPayment(shop);
      const canceled = await client.post<Payment>(`/portal/api/payments/${payment.orderNo}/cancel`);
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal(canceled.body.data?.status, 'CANCELED');
      assert.equal((await client.post<Payment>(`/portal/api/payments/${payment.orderNo}/cancel`)).status, 200);
      const paid = await createPayment(shop);
      await simulate(paid.orderNo, { status: 'SUCCEEDED' });
      const refused = await client.post(`/portal/api/payments/${paid.orderNo}/cancel`);
      assert.equal(refused.status, 409);
      const noCsrf = await client.post(`/portal/api/payments/${paid.orderNo}/cancel`, {}, { noCsrf: true });
      assert.equal(noCsrf.status, 403);
      assert.equal((await client.post('/portal/api/payments/P1/cancel')).status, 404);
    });

    it('payout sandbox buttons: simulate and return', async () => {
      const created = await post<{ orderNo: string }>(platform, shop, '/api/v1/payouts', {
        merchantOrderNo: `WO-${Date.now()}`,
        currency: 'BRL',
        amount: '10.00',
        webhookUrl: `${receiver.url}/hook`,
        payee: { name: 'João Souza', accountNumber: '000123456789' },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const orderNo = created.body.data?.orderNo as string;
      const succeeded = await client.post<{ status: string }>(`/portal/api/sandbox/payouts/${orderNo}/simulate`, {
        status: 'SUCCEEDED',
      });
      assert.equal(succeeded.body.data?.status, 'SUCCEEDED', succeeded.text);
      const returned = await client.post<{ status: string }>(`/portal/api/sandbox/payouts/${orderNo}/return`, {});
      assert.equal(returned.body.data?.status, 'REFUNDED', returned.text);
    });

    it('lists carry a total count of every match, not just the page', async () => {
      const all = await client.get<Page<Payment>>('/portal/api/payments?pageSize=2');
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.data?.items.length, 2);
      assert.equal(all.body.data?.total, 6);
      const failed = await client.get<Page<Payment>>('/portal/api/payments?status=FAILED');
      assert.equal(failed.body.data?.total, 2);
      const payouts = await client.get<Page<Payment>>('/portal/api/payouts');
      assert.equal(payouts.body.data?.total, 1);
      const theirs = await otherClient.get<Page<Payment>>('/portal/api/payments');
      assert.equal(theirs.body.data?.total, 0);
    });

    it('lists events across orders by delivery status, type, order status and time, with a total', async () => {
      receiver.fallback = { status: 500, body: 'down' };
      await deliverAll();
      const failed = await client.get<Page<EventItem>>('/portal/api/events?status=failed');
      assert.equal(failed.status, 200, failed.text);
      // FAILED ×2, CANCELED, SUCCEEDED ×2 payments; SUCCEEDED and REFUNDED payout.
      assert.equal(failed.body.data?.total, 7);
      assert.ok(failed.body.data?.items.every((e) => e.deliveryStatus === 'failed'));
      const payouts = await client.get<Page<EventItem>>('/portal/api/events?type=PAYOUT');
      assert.equal(payouts.body.data?.total, 2);
      const paymentFailed = await client.get<Page<EventItem>>('/portal/api/events?type=PAYMENT&orderStatus=FAILED');
      assert.equal(paymentFailed.body.data?.total, 2);
      assert.ok(paymentFailed.body.data?.items.every((e) => e.status === 'FAILED' && e.orderType === 'PAYMENT'));
      const future = await client.get<Page<EventItem>>(`/portal/api/events?from=${Date.now() + 3_600_000 * 10}`);
      assert.equal(future.body.data?.total, 0);
      assert.equal((await client.get('/portal/api/events?status=lost')).status, 400);
      assert.equal((await client.get('/portal/api/events?type=REFUND')).status, 400);
      assert.equal((await client.get('/portal/api/events?nope=1')).status, 400);
      assert.equal((await otherClient.get<Page<EventItem>>('/portal/api/events')).body.data?.total, 0);
    });

    it('overview: orders by status over the period, balances, recent delivery failures', async () => {
      const overview = await client.get<Overview>(`/portal/api/overview?from=${start}&to=${Date.now() + 86_400_000}`);
      assert.equal(overview.status, 200, overview.text);
      const data = overview.body.data as Overview;
      const count = (status: string) => data.payments.find((row) => row.status === status)?.count ?? 0;
      assert.equal(count('FAILED'), 2);
      assert.equal(count('SUCCEEDED'), 2);
      assert.equal(count('CANCELED'), 1);
      assert.equal(count('PENDING'), 1);
      assert.equal(data.payments.find((row) => row.status === 'SUCCEEDED')?.amount, '300.00');
      assert.deepEqual(
        data.payouts.map((row) => [row.status, row.count]),
        [['REFUNDED', 1]],
      );
      assert.ok(data.balances.some((b) => b.currency === 'BRL'));
      assert.equal(data.failedEvents, 7);
      assert.equal(data.recentFailures.length, 5);
      const empty = await client.get<Overview>(`/portal/api/overview?from=${start - 10_000}&to=${start - 5_000}`);
      assert.equal(empty.body.data?.payments.length, 0);
      assert.equal((await client.get(`/portal/api/overview?from=0&to=${Date.now()}`)).status, 400);
      assert.equal((await client.get(`/portal/api/overview?from=${start}&to=${start - 1}`)).status, 400);
    });

    it('recover: resends every failed event of the range once, CSRF-protected, and they are delivered', async () => {
      const range = { from: start, to: platform.services.now() + 1 };
      const noCsrf = await client.post('/portal/api/events/recover', range, { noCsrf: true });
      assert.equal(noCsrf.status, 403);
      assert.equal((await client.post('/portal/api/events/recover', { from: 5, to: 1 })).status, 400);
      assert.equal((await client.post('/portal/api/events/recover', { from: start })).status, 400);
      // Another merchant's recover touches none of these events.
      const theirs = await otherClient.post<{ resent: number }>('/portal/api/events/recover', range);
      assert.equal(theirs.body.data?.resent, 0);

      receiver.fallback = { status: 200, body: 'ok' };
      const before = receiver.received.length;
      const recovered = await client.post<{ resent: number; remaining: number; max: number }>(
        '/portal/api/events/recover',
        range,
      );
      assert.equal(recovered.status, 200, recovered.text);
      assert.deepEqual(recovered.body.data, { resent: 7, remaining: 0, max: 1000 });
      await deliverAll();
      assert.equal(receiver.received.length - before, 7);
      const delivered = await client.get<Page<EventItem>>('/portal/api/events?status=delivered');
      assert.equal(delivered.body.data?.total, 7);
      const again = await client.post<{ resent: number }>('/portal/api/events/recover', range);
      assert.equal(again.body.data?.resent, 0);
    });

    it('recover is bounded: at most the limit per call, answering how many are left', async () => {
      receiver.fallback = { status: 500, body: 'down' };
      for (let i = 0; i < 3; i++) await simulate((await createPayment(shop)).orderNo, { status: 'FAILED' });
      await deliverAll();
      const range = { from: start, to: platform.services.now() + 1 };
      const first = await platform.services.webhooks.resendFailed(shopId, range, 2);
      assert.deepEqual(first, { resent: 2, remaining: 1 });
      const second = await platform.services.webhooks.resendFailed(shopId, range, 2);
      assert.deepEqual(second, { resent: 1, remaining: 0 });
    });
  });
}

describe('portal operations in production', () => {
  it('has no sandbox buttons: 404', async () => {
    const platform = await startTestPlatform({ env: { PAYGATE_ENV: 'production' } });
    try {
      const shop = await createMerchant(platform);
      const user = await portalUser(platform, shop);
      const client = await PortalClient.signIn(platform, user.email, user.password);
      // The sandbox check comes first: any order number is 404 NOT_FOUND, as for an unknown path.
      const simulated = await client.post('/portal/api/sandbox/payments/P000000000000000001/simulate', {
        status: 'FAILED',
      });
      assert.equal(simulated.status, 404);
      assert.equal(simulated.body.msg, 'NOT_FOUND');
      assert.equal((await client.post('/portal/api/sandbox/payouts/W000000000000000001/simulate', {})).status, 404);
      assert.equal((await client.post('/portal/api/sandbox/payouts/W000000000000000001/return', {})).status, 404);
      // The other new pages work in production.
      assert.equal((await client.get('/portal/api/overview')).status, 200);
      assert.equal((await client.get('/portal/api/events')).status, 200);
    } finally {
      await platform.close();
    }
  });
});
