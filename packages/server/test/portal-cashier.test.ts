import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
import type { Payment } from '@paygate/wire';

for (const database of databases()) {
  describe(`sandbox cashier page (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform, 'Loja <Teste> & Cia');
    });
    after(() => platform.close());

    const createPayment = async (overrides: Record<string, unknown> = {}) => {
      const created = await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput(overrides));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.data as Payment;
    };
    const cashier = (orderNo: string) => `${platform.url}/cashier/${orderNo}`;
    const submit = (orderNo: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(cashier(orderNo), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    const query = async (orderNo: string) =>
      (await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${orderNo}`)).body.data as Payment;

    it("is served at the payment's cashierUrl with amount, currency and method, escaped", async () => {
      const payment = await createPayment({ currency: 'MXN', amount: '1500.5', paymentMethod: { code: 'SPEI' } });
      assert.ok(payment.cashierUrl.endsWith(`/cashier/${payment.orderNo}`));
      const response = await fetch(cashier(payment.orderNo));
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      const html = await response.text();
      assert.match(html, /<p class="amount" data-testid="amount">1500\.50 <span>MXN<\/span><\/p>/);
      assert.match(html, /SPEI transfer/);
      assert.match(html, /Pay Loja &lt;Teste&gt; &amp; Cia/);
      assert.match(html, /<label for="name">Payer name<\/label>/);
      assert.match(html, /<label for="documentNumber">Document number<\/label>/);
    });

    it('paying moves the order to SUCCEEDED with the payer, credits the ledger and writes the event', async () => {
      const payment = await createPayment();
      const response = await submit(payment.orderNo, {
        action: 'pay',
        name: 'Maria Silva',
        documentNumber: '00123456789',
      });
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), `/cashier/${payment.orderNo}`);
      const final = await query(payment.orderNo);
      assert.equal(final.status, 'SUCCEEDED');
      assert.equal(final.paidAmount, '125.50');
      assert.deepEqual(final.payer, { name: 'Maria Silva', documentNumber: '00123456789' });
      const events = await platform.services.db.query<{ body: Uint8Array }>(
        'SELECT body FROM events WHERE order_no = $1',
        [payment.orderNo],
      );
      assert.equal(events.rows.length, 1);
      assert.deepEqual(JSON.parse(Buffer.from(events.rows[0]?.body as Uint8Array).toString()).payer, final.payer);
      const balances = await get<{ currency: string; available: string }[]>(platform, merchant, '/api/v1/balances');
      assert.notEqual(balances.body.data?.find((b) => b.currency === 'BRL')?.available, '0.00');

      const page = await (await fetch(cashier(payment.orderNo))).text();
      assert.match(page, /Payment received/);
      assert.doesNotMatch(page, /<form/, 'a final order has no form');
      const again = await submit(payment.orderNo, { action: 'fail' });
      assert.equal(again.status, 409);
      assert.equal((await query(payment.orderNo)).status, 'SUCCEEDED');
    });

    it('making it fail moves the order to FAILED', async () => {
      const payment = await createPayment();
      const response = await submit(payment.orderNo, { action: 'fail', name: '', documentNumber: '' });
      assert.equal(response.status, 303);
      const final = await query(payment.orderNo);
      assert.equal(final.status, 'FAILED');
      assert.equal(final.payer, undefined);
      assert.match(await (await fetch(cashier(payment.orderNo))).text(), /The payment failed/);
    });

    it('asks again, with the errors tied to their fields, when payer details are missing or invalid', async () => {
      const payment = await createPayment();
      const missing = await submit(payment.orderNo, { action: 'pay', name: '', documentNumber: '' });
      assert.equal(missing.status, 400);
      const html = await missing.text();
      assert.match(html, /aria-describedby="name-hint name-error" aria-invalid="true"/);
      assert.match(html, /id="documentNumber-error">Enter the payer’s document number/);
      const invalid = await submit(payment.orderNo, { action: 'pay', name: 'Ana', documentNumber: '12 34<script>' });
      assert.equal(invalid.status, 400);
      const invalidHtml = await invalid.text();
      assert.match(invalidHtml, /id="documentNumber-error"/);
      assert.match(invalidHtml, /value="12 34&lt;script&gt;"/);
      assert.equal((await query(payment.orderNo)).status, 'PENDING');
    });

    it('refuses a form posted from another site, and an expired or unknown order', async () => {
      const payment = await createPayment();
      const foreign = await submit(
        payment.orderNo,
        { action: 'pay', name: 'Eve', documentNumber: '1' },
        { origin: 'https://evil.example' },
      );
      assert.equal(foreign.status, 403);
      assert.equal((await query(payment.orderNo)).status, 'PENDING');

      assert.equal((await fetch(cashier('P209901010000000001'))).status, 404);
      assert.equal((await fetch(cashier('not-an-order'))).status, 404);

      platform.advance(platform.config.paymentExpiryMs + 1000);
      const late = await submit(payment.orderNo, { action: 'pay', name: 'Ana', documentNumber: '1' });
      assert.equal(late.status, 409);
      assert.match(await late.text(), /expired/);
      assert.equal((await query(payment.orderNo)).status, 'PENDING', 'left to the expiry sweeper');
    });
  });
}
