import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { returnUrl, webhookUrl } from '../src/validation.js';
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

describe('the returnUrl rule', () => {
  it('is the URL rule (https only in production) without the SSRF guard: the payer’s browser goes there, not the platform', () => {
    const production = { environment: 'production' as const, webhookAllowPrivate: false };
    assert.equal(returnUrl(production).safeParse('http://shop.example/thanks').success, false);
    assert.equal(webhookUrl(production).safeParse('http://shop.example/thanks').success, false);
    assert.equal(returnUrl(production).safeParse('https://shop.example/thanks').data, 'https://shop.example/thanks');
    for (const local of [
      'https://127.0.0.1:8443/back',
      'https://localhost/back',
      'https://10.0.0.7/back',
      'https://[::1]/back',
    ]) {
      assert.equal(webhookUrl(production).safeParse(local).success, false, `webhookUrl ${local}`);
      assert.equal(returnUrl(production).safeParse(local).success, true, `returnUrl ${local}`);
    }
  });
});

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
      assert.match(html, /<p class="amount" data-testid="amount">MX\$1,500\.50<\/p>/);
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

    it('returnUrl: stored normalized, echoed by create, query and list; absent when not given', async () => {
      const payment = await createPayment({ returnUrl: 'HTTPS://Shop.EXAMPLE:443/a/../thanks?cart=8812&x=%7E' });
      assert.equal(payment.returnUrl, 'https://shop.example/thanks?cart=8812&x=%7E');
      assert.equal((await query(payment.orderNo)).returnUrl, payment.returnUrl);
      const list = await get<{ items: Payment[] }>(platform, merchant, '/api/v1/payments/list', 'pageSize=100');
      assert.equal(list.body.data?.items.find((p) => p.orderNo === payment.orderNo)?.returnUrl, payment.returnUrl);
      const without = await createPayment();
      assert.equal('returnUrl' in without, false);
      assert.equal('returnUrl' in (await query(without.orderNo)), false);
    });

    it('returnUrl: refused like webhookUrl (400 VALIDATION_FAILED naming returnUrl, nothing created)', async () => {
      const before = await count(platform, 'payments');
      for (const bad of [
        'javascript:alert(1)',
        'ftp://shop.example/x',
        '/thanks',
        'https://user:pw@shop.example/',
        'https://shop.example/thanks#done',
        ' https://shop.example/',
        'https://shop.example/\r\nX: 1',
        `https://shop.example/${'a'.repeat(2048)}`,
        42,
      ]) {
        const refused = await post(platform, merchant, '/api/v1/payments', paymentInput({ returnUrl: bad }));
        assert.equal(refused.status, 400, JSON.stringify(bad));
        assert.equal(refused.body.msg, 'VALIDATION_FAILED');
        assert.deepEqual(
          refused.body.errors?.map((e) => e.field),
          ['returnUrl'],
          JSON.stringify(bad),
        );
      }
      assert.equal(await count(platform, 'payments'), before);
    });

    it('returnUrl is part of the create: the same again is the same order, another is DUPLICATE_ORDER', async () => {
      const input = paymentInput({ returnUrl: 'https://shop.example/thanks' });
      const first = await createPayment(input);
      const again = await post<Payment>(platform, merchant, '/api/v1/payments', {
        ...input,
        returnUrl: 'HTTPS://shop.example:443/thanks',
      });
      assert.equal(again.status, 200, 'the same URL in another spelling is the same field');
      assert.equal(again.body.data?.orderNo, first.orderNo);
      for (const returnUrl of ['https://shop.example/other', undefined]) {
        const changed = await post(platform, merchant, '/api/v1/payments', { ...input, returnUrl });
        assert.equal(changed.status, 409, String(returnUrl));
        assert.equal(changed.body.msg, 'DUPLICATE_ORDER');
      }
      const plain = paymentInput();
      await createPayment(plain);
      const added = await post(platform, merchant, '/api/v1/payments', {
        ...plain,
        returnUrl: 'https://shop.example/',
      });
      assert.equal(added.body.msg, 'DUPLICATE_ORDER', 'adding a returnUrl on a repeat is a different create');
    });

    it('paying or failing sends the payer to returnUrl with orderNo, merchantOrderNo and status after its own query', async () => {
      for (const [action, status] of [
        ['pay', 'SUCCEEDED'],
        ['fail', 'FAILED'],
      ] as const) {
        const payment = await createPayment({ returnUrl: 'https://shop.example/thanks?cart=8812&note=a+b%20c&flag' });
        const open = await fetch(cashier(payment.orderNo));
        assert.equal(open.status, 200);
        assert.match(await open.text(), /Then you return to <strong>shop\.example<\/strong>/);
        assert.match(
          open.headers.get('content-security-policy') ?? '',
          /form-action 'self' https:\/\/shop\.example;/,
          'the redirect after the form post is allowed to the shop only',
        );
        const response = await submit(payment.orderNo, { action, name: 'Maria Silva', documentNumber: '00123456789' });
        assert.equal(response.status, 303);
        const location = response.headers.get('location') ?? '';
        const expected = `https://shop.example/thanks?cart=8812&note=a+b%20c&flag&orderNo=${payment.orderNo}&merchantOrderNo=${payment.merchantOrderNo}&status=${status}`;
        assert.equal(location, expected);
        assert.equal((await query(payment.orderNo)).status, status);

        // Coming back to the cashier page of a final order sends the payer on again, as does a late post.
        const reopened = await fetch(cashier(payment.orderNo), { redirect: 'manual' });
        assert.equal(reopened.status, 303);
        assert.equal(reopened.headers.get('location'), expected);
        const late = await submit(payment.orderNo, { action: 'pay', name: 'Ana', documentNumber: '1' });
        assert.equal(late.status, 303);
        assert.equal(late.headers.get('location'), expected);
      }
    });

    it('a returnUrl without a query gets one; a canceled order sends the payer back too; PROCESSING stays', async () => {
      const canceled = await createPayment({ returnUrl: 'http://127.0.0.1:4000/back' });
      assert.equal(
        (await post(platform, merchant, '/api/v1/payments/cancel', { orderNo: canceled.orderNo })).status,
        200,
      );
      const back = await fetch(cashier(canceled.orderNo), { redirect: 'manual' });
      assert.equal(back.status, 303);
      assert.equal(
        back.headers.get('location'),
        `http://127.0.0.1:4000/back?orderNo=${canceled.orderNo}&merchantOrderNo=${canceled.merchantOrderNo}&status=CANCELED`,
      );

      const processing = await createPayment({ returnUrl: 'https://shop.example/back' });
      const moved = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: processing.orderNo,
        status: 'PROCESSING',
      });
      assert.equal(moved.status, 200);
      const page = await fetch(cashier(processing.orderNo), { redirect: 'manual' });
      assert.equal(page.status, 200, 'not final: the payer stays on the cashier page');
      assert.match(await page.text(), /being processed/);

      const plain = await createPayment();
      assert.equal(
        (await submit(plain.orderNo, { action: 'fail' })).headers.get('location'),
        `/cashier/${plain.orderNo}`,
      );
      const csp = (await fetch(cashier(plain.orderNo))).headers.get('content-security-policy') ?? '';
      assert.match(csp, /form-action 'self';/, 'without a returnUrl the form posts to this origin only');
    });
  });
}

const RESULTS_DIR = new URL('../test-results/', import.meta.url).pathname;
const AXE_SOURCE = new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** PAYGATE_SKIP_BROWSER=1 skips the browser suites (as packages/portal's do), with this message. */
const SKIP_BROWSER =
  process.env.PAYGATE_SKIP_BROWSER === '1' ? 'PAYGATE_SKIP_BROWSER=1: the browser (Chromium) tests are skipped' : false;

/** axe-core in the page (WCAG 2.0/2.1 A and AA), as `rule: targets` lines. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP rightly refuses an injected script.
  await page.evaluate(`${readFileSync(AXE_SOURCE, 'utf8')}\n;0`);
  // A string, not a function: the test code is type-checked without the DOM library.
  return (await page.evaluate(`axe
    .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    .then((r) => r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
}

/** A merchant's shop on loopback: its return page shows the query it was sent with. */
async function startShop(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const query = new URL(request.url ?? '/', 'http://shop').searchParams;
    const rows = [...query].map(([name, value]) => `<li>${name}: ${value.replace(/[<&]/g, '')}</li>`).join('');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html lang="en"><title>Shop</title><main><h1>Back at the shop</h1><ul>${rows}</ul></main></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the cashier return in Chromium', { skip: SKIP_BROWSER }, () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let shop: { url: string; server: Server };
  let browser: Browser;
  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform, 'Loja Exemplo');
    shop = await startShop();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.server.close(resolve));
    await platform.close();
  });

  const createPayment = async (returnUrl: string) => {
    const created = await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput({ returnUrl }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return created.body.data as Payment;
  };
  const landed = (page: Page) => Object.fromEntries(new URL(page.url()).searchParams);

  it('pays, then lands on the shop with the order number and status; the page passes axe', async () => {
    const payment = await createPayment(`${shop.url}/thanks?cart=8812`);
    const page = await browser.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    await page.goto(payment.cashierUrl);
    assert.equal(
      ((await page.getByTestId('return').textContent()) ?? '').trim(),
      `Then you return to ${new URL(shop.url).host}.`,
    );
    assert.deepEqual(await axeViolations(page), [], 'cashier page with a returnUrl');
    await page.getByLabel('Payer name').fill('Maria Silva');
    await page.getByLabel('Document number').fill('00123456789');
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: join(RESULTS_DIR, 'cashier-return-open.png'), fullPage: true });
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(`${shop.url}/thanks?**`);
    await page.getByRole('heading', { name: 'Back at the shop' }).waitFor();
    await page.screenshot({ path: join(RESULTS_DIR, 'cashier-return-shop.png'), fullPage: true });
    assert.deepEqual(landed(page), {
      cart: '8812',
      orderNo: payment.orderNo,
      merchantOrderNo: payment.merchantOrderNo,
      status: 'SUCCEEDED',
    });
    assert.deepEqual(blocked, [], 'CSP violations');

    // Opening the cashier page again, as a payer pressing back would, lands on the shop again.
    await page.goto(payment.cashierUrl);
    await page.waitForURL(`${shop.url}/thanks?**`);
    assert.equal(landed(page).status, 'SUCCEEDED');
    await page.close();
  });

  it('speaks Portuguese to a pt-BR browser, shows the payer a masked CPF after paying, and passes axe', async () => {
    const created = await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput({ amount: '10' }));
    const payment = created.body.data as Payment;
    const context = await browser.newContext({ locale: 'pt-BR' });
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const icon = page.waitForResponse((response) => response.url().endsWith('/favicon.svg'));
    await page.goto(payment.cashierUrl);
    assert.equal((await icon).headers()['content-type'], 'image/svg+xml');
    assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR');
    assert.equal(((await page.getByTestId('amount').textContent()) ?? '').replace(/\u00a0/g, ' '), 'R$ 10,00');
    assert.deepEqual(await axeViolations(page), [], 'the pt-BR payer page');
    await page.getByLabel('Nome do pagador').fill('Maria Silva');
    await page.getByLabel('Número do documento').fill('123.456.789-01');
    await page.getByRole('button', { name: /^Pagar / }).click();
    await page.getByText('Pagamento recebido').waitFor();
    assert.equal(await page.getByTestId('payer').textContent(), 'Maria Silva · ***.456.789-**');
    assert.ok(!(await page.content()).includes('123.456.789-01'), 'the whole CPF is not on the page');
    mkdirSync(RESULTS_DIR, { recursive: true });
    await page.screenshot({ path: join(RESULTS_DIR, 'cashier-pt-BR-paid.png'), fullPage: true });
    await page.getByRole('link', { name: 'Español' }).click();
    await page.getByText('Pago recibido').waitFor();
    assert.deepEqual(blocked, [], 'CSP violations');
    await context.close();
  });

  it('making it fail lands on the shop with status FAILED', async () => {
    const payment = await createPayment(`${shop.url}/back`);
    const page = await browser.newPage();
    await page.goto(payment.cashierUrl);
    await page.getByRole('button', { name: 'Make it fail' }).click();
    await page.waitForURL(`${shop.url}/back?**`);
    assert.deepEqual(landed(page), {
      orderNo: payment.orderNo,
      merchantOrderNo: payment.merchantOrderNo,
      status: 'FAILED',
    });
    await page.close();
  });
});
