import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  count,
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import type { Payment } from '@paygate/wire';

for (const database of databases()) {
  describe(`payment orders (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
    });
    after(() => platform.close());

    const eventsOf = async (orderNo: string) =>
      (
        await platform.services.db.query<{ event_id: string; status: string; body: Uint8Array }>(
          'SELECT event_id, status, body FROM events WHERE order_no = $1 ORDER BY id',
          [orderNo],
        )
      ).rows.map((row) => ({ ...row, json: JSON.parse(Buffer.from(row.body).toString('utf8')) }));

    it('create → query → simulate SUCCEEDED → query shows payer and paidAmount; the outbox event matches', async () => {
      const input = paymentInput();
      const created = await post<Payment>(platform, merchant, '/api/v1/payments', input);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.msg, 'SUCCESS');
      const order = created.body.data as Payment;
      assert.match(order.orderNo, /^P\d{18}$/);
      assert.equal(order.status, 'PENDING');
      assert.equal(order.amount, '125.50');
      // With PORT=0 the link carries the port the server actually took.
      assert.equal(order.cashierUrl, `${platform.url}/cashier/${order.orderNo}`);
      assert.ok(created.headers.get('request-id')?.startsWith('req_'));

      const byMerchantNo = await get<Payment>(
        platform,
        merchant,
        '/api/v1/payments',
        `merchantOrderNo=${input.merchantOrderNo}`,
      );
      assert.equal(byMerchantNo.body.data?.orderNo, order.orderNo);

      const simulated = await post<Payment>(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: order.orderNo,
        status: 'SUCCEEDED',
        paidAmount: '125.50',
        channelTradeNo: 'CH-77120045',
        payer: { name: 'Maria Silva', documentNumber: '00123456789' },
      });
      assert.equal(simulated.status, 200, JSON.stringify(simulated.body));

      const queried = await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${order.orderNo}`);
      const final = queried.body.data as Payment;
      assert.equal(final.status, 'SUCCEEDED');
      assert.equal(final.paidAmount, '125.50');
      assert.deepEqual(final.payer, { name: 'Maria Silva', documentNumber: '00123456789' });

      const events = await eventsOf(order.orderNo);
      assert.equal(events.length, 1);
      const event = events[0]?.json;
      assert.match(event.eventId, /^evt_[0-9A-Z]{26}$/);
      assert.deepEqual(Object.keys(event), [
        'eventId',
        'orderType',
        'orderNo',
        'merchantOrderNo',
        'status',
        'currency',
        'amount',
        'paidAmount',
        'channelTradeNo',
        'payer',
        'attach',
      ]);
      assert.equal(event.orderType, 'PAYMENT');
      assert.deepEqual(event.payer, final.payer);
      assert.equal(event.paidAmount, '125.50');
      assert.equal(event.attach, input.attach);
    });

    it('a repeated create with the same fields returns the same order; different fields are DUPLICATE_ORDER', async () => {
      const input = paymentInput();
      const first = await post<Payment>(platform, merchant, '/api/v1/payments', input);
      const again = await post<Payment>(platform, merchant, '/api/v1/payments', input);
      assert.equal(again.status, 200);
      assert.equal(again.body.data?.orderNo, first.body.data?.orderNo);
      const different = await post(platform, merchant, '/api/v1/payments', { ...input, amount: '99.00' });
      assert.equal(different.status, 409);
      assert.equal(different.body.msg, 'DUPLICATE_ORDER');
    });

    it('100 concurrent creates with one merchantOrderNo make one order', async () => {
      const input = paymentInput();
      const before = await count(platform, 'payments');
      const results = await Promise.all(
        Array.from({ length: 100 }, () => post<Payment>(platform, merchant, '/api/v1/payments', input)),
      );
      assert.ok(
        results.every((r) => r.status === 200),
        JSON.stringify(results.find((r) => r.status !== 200)?.body),
      );
      assert.equal(new Set(results.map((r) => r.body.data?.orderNo)).size, 1);
      assert.equal((await count(platform, 'payments')) - before, 1);
    });

    it('validates fields with field errors and writes nothing', async () => {
      const before = await count(platform, 'payments');
      const cases: [Record<string, unknown>, string][] = [
        [{ currency: 'XXX' }, 'currency'],
        [{ paymentMethod: { code: 'SPEI' } }, 'paymentMethod.code'],
        [{ amount: '1.005' }, 'amount'],
        [{ amount: '-1.00' }, 'amount'],
        [{ amount: '1e3' }, 'amount'],
        [{ amount: '0.00' }, 'amount'],
        [{ amount: 12.5 }, 'amount'],
        [{ amount: '01.00' }, 'amount'],
        [{ webhookUrl: 'ftp://merchant.example/x' }, 'webhookUrl'],
        [{ webhookUrl: 'https://user:pw@merchant.example/x' }, 'webhookUrl'],
        [{ merchantOrderNo: '' }, 'merchantOrderNo'],
        [{ merchantOrderNo: 'has space' }, 'merchantOrderNo'],
        [{ attach: 'nul\u0000byte' }, 'attach'],
      ];
      for (const [override, field] of cases) {
        const response = await post(platform, merchant, '/api/v1/payments', paymentInput(override));
        assert.equal(response.status, 400, `${JSON.stringify(override)} → ${response.status}`);
        assert.equal(response.body.msg, 'VALIDATION_FAILED');
        assert.ok(
          response.body.errors?.some((e) => e.field === field),
          `${JSON.stringify(override)}: ${JSON.stringify(response.body.errors)}`,
        );
      }
      assert.equal(await count(platform, 'payments'), before);
    });

    it('payer details never come from the create request: a payer member is refused, naming it', async () => {
      const created = await post<Payment>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ payer: { name: 'Eve', documentNumber: '1' } }),
      );
      assert.equal(created.status, 400);
      assert.equal(created.body.msg, 'VALIDATION_FAILED');
      assert.deepEqual(
        created.body.errors?.map((error) => error.field),
        ['payer'],
      );
    });

    it('keeps leading zeros, omits missing payer fields and the whole object when both are missing', async () => {
      const a = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: a.orderNo,
        status: 'SUCCEEDED',
        payer: { documentNumber: '000123' },
      });
      const qa = (await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${a.orderNo}`)).body
        .data as Payment;
      assert.deepEqual(qa.payer, { documentNumber: '000123' });

      const b = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo: b.orderNo, status: 'SUCCEEDED' });
      const qb = (await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${b.orderNo}`)).body
        .data as Payment;
      assert.equal(qb.payer, undefined);
      assert.equal(qb.paidAmount, qb.amount);
      const [event] = await eventsOf(b.orderNo);
      assert.ok(event);
      assert.equal('payer' in event.json, false);
    });

    it('final states are frozen: no further moves, payer unchanged, one event per final state', async () => {
      const p = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: p.orderNo,
        status: 'PROCESSING',
        payer: { name: 'Ana' },
      });
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo: p.orderNo, status: 'FAILED' });
      const again = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: p.orderNo,
        status: 'SUCCEEDED',
        payer: { name: 'Bob' },
      });
      assert.equal(again.status, 409);
      assert.equal(again.body.msg, 'INVALID_STATE');
      const repeat = await post<Payment>(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: p.orderNo,
        status: 'FAILED',
      });
      assert.equal(repeat.status, 200);
      const q = (await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${p.orderNo}`)).body
        .data as Payment;
      assert.equal(q.status, 'FAILED');
      assert.deepEqual(q.payer, { name: 'Ana' });
      const events = await eventsOf(p.orderNo);
      assert.deepEqual(
        events.map((e) => e.status),
        ['FAILED'],
      );
      assert.deepEqual(events[0]?.json.payer, { name: 'Ana' });
    });

    it('cancel moves PENDING to CANCELED with an event; a PROCESSING order cannot be canceled', async () => {
      const p = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      const canceled = await post<Payment>(platform, merchant, '/api/v1/payments/cancel', {
        merchantOrderNo: p.merchantOrderNo,
      });
      assert.equal(canceled.body.data?.status, 'CANCELED');
      assert.deepEqual(
        (await eventsOf(p.orderNo)).map((e) => e.status),
        ['CANCELED'],
      );

      const q = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo: q.orderNo, status: 'PROCESSING' });
      const refused = await post(platform, merchant, '/api/v1/payments/cancel', { orderNo: q.orderNo });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.msg, 'INVALID_STATE');
    });

    it('update changes attach and webhookUrl while not final', async () => {
      const p = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      const updated = await post<Payment>(platform, merchant, '/api/v1/payments/update', {
        orderNo: p.orderNo,
        attach: 'new',
        webhookUrl: 'https://merchant.example/hooks/2',
      });
      assert.equal(updated.body.data?.attach, 'new');
      assert.equal(updated.body.data?.webhookUrl, 'https://merchant.example/hooks/2');
      await post(platform, merchant, '/api/v1/payments/cancel', { orderNo: p.orderNo });
      const late = await post(platform, merchant, '/api/v1/payments/update', { orderNo: p.orderNo, attach: 'x' });
      assert.equal(late.body.msg, 'INVALID_STATE');
    });

    it("unknown orders are ORDER_NOT_FOUND, and one merchant cannot read another's order", async () => {
      const other = await createMerchant(platform, 'Other');
      const p = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      const response = await get(platform, other, '/api/v1/payments', `orderNo=${p.orderNo}`);
      assert.equal(response.status, 404);
      assert.equal(response.body.msg, 'ORDER_NOT_FOUND');
    });

    it("refuses query parameters outside the endpoint's list", async () => {
      const response = await get(
        platform,
        merchant,
        '/api/v1/payments',
        'orderNo=P202601010000000001&documentNumber=123',
      );
      assert.equal(response.status, 400);
      assert.deepEqual(
        response.body.errors?.map((e) => e.field),
        ['documentNumber'],
      );
      assert.doesNotMatch(JSON.stringify(response.body), /123/);
    });

    it('lists with status and time filters and cursor paging, newest first', async () => {
      const lister = await createMerchant(platform, 'Lister');
      const orders: Payment[] = [];
      for (let i = 0; i < 5; i++) {
        orders.push((await post<Payment>(platform, lister, '/api/v1/payments', paymentInput())).body.data as Payment);
      }
      await post(platform, lister, '/api/v1/payments/cancel', { orderNo: orders[1]?.orderNo });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof get<{ items: Payment[]; nextCursor: string | null }>>> = await get(
          platform,
          lister,
          '/api/v1/payments/list',
          `pageSize=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        seen.push(...(page.body.data?.items ?? []).map((p) => p.orderNo));
        cursor = page.body.data?.nextCursor ?? null;
      } while (cursor);
      assert.deepEqual(seen, orders.map((o) => o.orderNo).reverse());
      const canceled = await get<{ items: Payment[] }>(platform, lister, '/api/v1/payments/list', 'status=CANCELED');
      assert.deepEqual(
        canceled.body.data?.items.map((p) => p.orderNo),
        [orders[1]?.orderNo],
      );
      const future = await get<{ items: Payment[] }>(
        platform,
        lister,
        '/api/v1/payments/list',
        `from=${Date.now() + 60_000}`,
      );
      assert.deepEqual(future.body.data?.items, []);
    });

    it('the sweeper expires PENDING payments after the configured time, with an event', async () => {
      const p = (await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput())).body.data as Payment;
      const { sweepOnce } = await import('../src/worker/sweeper.js');
      platform.advance(31 * 60_000);
      try {
        const result = await sweepOnce(platform.services);
        assert.ok(result.expired >= 1);
      } finally {
        platform.advance(-31 * 60_000);
      }
      const q = (await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${p.orderNo}`)).body
        .data as Payment;
      assert.equal(q.status, 'EXPIRED');
      assert.deepEqual(
        (await eventsOf(p.orderNo)).map((e) => e.status),
        ['EXPIRED'],
      );
    });
  });

  describe(`payment creates arriving together (${database})`, () => {
    let platform: TestPlatform;
    let merchantId: bigint;

    before(async () => {
      platform = await startTestPlatform({ database });
      const merchant = await createMerchant(platform);
      merchantId = (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
      // The database itself counts the INSERT statements on payments and refuses one poisoned row.
      await platform.services.db.exec(`
        CREATE TABLE payment_insert_statements (n integer NOT NULL);
        INSERT INTO payment_insert_statements VALUES (0);
        CREATE FUNCTION count_payment_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN UPDATE payment_insert_statements SET n = n + 1; RETURN NULL; END $$;
        CREATE TRIGGER count_payment_inserts AFTER INSERT ON payments
          FOR EACH STATEMENT EXECUTE FUNCTION count_payment_inserts();
        CREATE FUNCTION refuse_poisoned_payment() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.merchant_order_no LIKE 'POISON-%' THEN RAISE EXCEPTION 'poisoned row'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER refuse_poisoned_payment BEFORE INSERT ON payments
          FOR EACH ROW EXECUTE FUNCTION refuse_poisoned_payment();`);
    });
    after(() => platform.close());

    const insertStatements = async () =>
      (await platform.services.db.query<{ n: number }>('SELECT n FROM payment_insert_statements')).rows[0]?.n ?? 0;
    const createAll = (inputs: readonly Record<string, unknown>[]) =>
      Promise.allSettled(inputs.map((input) => platform.services.payments.create(merchantId, input)));

    it('share one INSERT statement, each answered with its own new order', async () => {
      const inputs = Array.from({ length: 20 }, (_, i) => paymentInput({ amount: `${i + 1}.00` }));
      const before = await insertStatements();
      const answers = await createAll(inputs);
      assert.equal((await insertStatements()) - before, 1, 'one statement for the 20 creates');
      const orders = answers.map((answer) => {
        assert.equal(answer.status, 'fulfilled');
        return (answer as PromiseFulfilledResult<Awaited<ReturnType<typeof platform.services.payments.create>>>).value;
      });
      assert.equal(new Set(orders.map((order) => order.payment.orderNo)).size, 20);
      orders.forEach((order, i) => {
        assert.equal(order.created, true);
        assert.equal(order.payment.merchantOrderNo, inputs[i]?.merchantOrderNo);
        assert.equal(order.payment.amount, `${i + 1}.00`);
      });
    });

    it('one merchantOrderNo twice in a batch: the same order for a retry, DUPLICATE_ORDER for other fields', async () => {
      const input = paymentInput();
      const [first, retry, other] = await createAll([input, { ...input }, { ...input, amount: '9.99' }]);
      assert.equal(first?.status, 'fulfilled');
      assert.equal(retry?.status, 'fulfilled');
      const created = (first as PromiseFulfilledResult<{ created: boolean; payment: Payment }>).value;
      const again = (retry as PromiseFulfilledResult<{ created: boolean; payment: Payment }>).value;
      assert.deepEqual([created.created, again.created], [true, false]);
      assert.equal(again.payment.orderNo, created.payment.orderNo);
      assert.equal(other?.status, 'rejected');
      assert.equal(((other as PromiseRejectedResult).reason as { code?: string }).code, 'DUPLICATE_ORDER');
      const rows = await platform.services.db.query<{ n: bigint }>(
        'SELECT count(*)::bigint AS n FROM payments WHERE merchant_order_no = $1',
        [input.merchantOrderNo],
      );
      assert.equal(rows.rows[0]?.n, 1n);
    });

    it('a row the database refuses fails its own create only', async () => {
      const inputs = [paymentInput(), paymentInput({ merchantOrderNo: `POISON-${Date.now()}` }), paymentInput()];
      const [good, poisoned, alsoGood] = await createAll(inputs);
      assert.equal(good?.status, 'fulfilled');
      assert.equal(alsoGood?.status, 'fulfilled');
      assert.equal(poisoned?.status, 'rejected');
      assert.match(String((poisoned as PromiseRejectedResult).reason), /poisoned row/);
      const stored = await platform.services.db.query<{ merchant_order_no: string }>(
        'SELECT merchant_order_no FROM payments WHERE merchant_order_no = ANY($1::text[])',
        [inputs.map((input) => input.merchantOrderNo)],
      );
      assert.deepEqual(
        stored.rows.map((row) => row.merchant_order_no).sort(),
        [inputs[0]?.merchantOrderNo, inputs[2]?.merchantOrderNo].sort(),
      );
    });
  });
}
