/**
 * The merchant portal in a real browser: Chromium (headless, driven by playwright-core) against a
 * real platform on loopback, with orders created through signed API requests and paid on the
 * sandbox cashier page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PaygateClient } from '@paygate/merchant';
import { generateSigningKey, seedOf } from '@paygate/protocol';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  buildRead,
  createMerchant,
  get,
  paymentInput,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { portalUser } from '../../server/test/portal-harness.js';
import { type Receiver, startReceiver } from '../../server/test/receiver.js';
import { axeViolations, ensurePortalBuilt, launchChromium, screenshot, SKIP_BROWSER, textOf } from './browser.js';

interface Payment {
  orderNo: string;
  merchantOrderNo: string;
  status: string;
  cashierUrl: string;
  createdAt: number;
  payer?: { name?: string; documentNumber?: string };
}

describe('merchant portal in Chromium', { skip: SKIP_BROWSER }, () => {
  let platform: TestPlatform;
  let browser: Browser;
  let shopA: TestMerchant;
  let shopB: TestMerchant;
  let userA: { email: string; password: string };
  let userB: { email: string; password: string };
  let contextA: BrowserContext;
  let pageA: Page;
  let paidOrder: Payment;
  let receiver: Receiver;
  /** Every URL the merchant's browser asked for, across the suite. */
  const requested: string[] = [];

  before(async () => {
    browser = await launchChromium();
    ensurePortalBuilt();
    receiver = await startReceiver();
    // The webhook dispatcher runs in the server, as with `npm start`; a failed attempt waits an
    // hour for its retry, so only the portal's Resend sends it again within the test.
    platform = await startTestPlatform({ env: { PAYGATE_WORKERS: 'true', PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1h' } });
    shopA = await createMerchant(platform, 'Loja Aurora');
    shopB = await createMerchant(platform, 'Other Shop');
    userA = await portalUser(platform, shopA);
    userB = await portalUser(platform, shopB);
    contextA = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    contextA.on('request', (request) => requested.push(request.url()));
    pageA = await contextA.newPage();
    pageA.setDefaultTimeout(10_000);
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
    await receiver?.close();
  });

  const signIn = async (page: Page, user: { email: string; password: string }) => {
    await page.goto(`${platform.url}/portal/`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  };

  /** Refreshes the order page until its first event shows `status` with `attempts` attempts. */
  const waitForDelivery = async (page: Page, status: string, attempts: number) => {
    for (let i = 0; i < 50; i++) {
      const head = (await page.locator('.event-head').first().textContent()) ?? '';
      const rows = await page.locator('table.attempts tbody tr').count();
      if (head.includes(`Delivery: ${status}`) && rows === attempts) return;
      await page.waitForTimeout(200);
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
    assert.fail(`the event did not reach ${status} with ${attempts} attempts`);
  };

  /** The merchant's integration: the SDK's client with the merchant's own key. */
  const clientOf = (merchant: TestMerchant) =>
    new PaygateClient({
      baseUrl: platform.url,
      accessKey: merchant.accessKey,
      privateKey: seedOf(merchant.key),
      bodyKey: merchant.bodyKey,
    });

  /** Creates a payment the way a merchant integration does: through the SDK's client. */
  const createPayment = async (merchant: TestMerchant, overrides: { amount?: string } = {}): Promise<Payment> => {
    const input = paymentInput({ webhookUrl: `${receiver.url}/webhook/payment`, ...overrides });
    return clientOf(merchant).payments.create({ ...input, currency: 'BRL', paymentMethod: { code: 'PIX' } });
  };

  it('signs in (keyboard only) and shows the environment badge', async () => {
    await pageA.goto(`${platform.url}/portal/`);
    await pageA.getByRole('heading', { level: 1, name: 'Sign in to the merchant portal' }).waitFor();
    await screenshot(pageA, '01-sign-in');
    // Keyboard only: the page heading has focus, Tab reaches the fields, Enter submits.
    await pageA.keyboard.press('Tab');
    await pageA.keyboard.type(userA.email);
    await pageA.keyboard.press('Tab');
    await pageA.keyboard.type(userA.password);
    await pageA.keyboard.press('Enter');
    await pageA.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(await textOf(pageA, '.topbar .env'), 'Sandbox');
    assert.equal(await textOf(pageA, '.topbar .merchant'), 'Loja Aurora');
    const cookies = await contextA.cookies();
    const session = cookies.find((c) => c.name === 'paygate_portal');
    assert.ok(session?.httpOnly, 'the session cookie is HttpOnly');
    assert.equal(session?.sameSite, 'Strict');
    assert.equal(await pageA.evaluate(() => document.cookie), '', 'scripts cannot read the session cookie');
  });

  it('shows the credentials and uploads a second public key that then signs requests', async () => {
    await pageA.getByRole('link', { name: 'Credentials' }).click();
    await pageA.getByRole('heading', { level: 1, name: 'Credentials' }).waitFor();
    assert.equal(await textOf(pageA, '[data-testid="value-access-key"]'), shopA.accessKey);
    assert.equal(await textOf(pageA, '[data-testid="value-body-keyid"]'), shopA.bodyKey.keyId);
    const webhookKeyid = shopA.webhookKeys[0]?.keyid as string;
    assert.ok((await pageA.locator('#webhook-keys + p + ul').textContent())?.includes(webhookKeyid));
    assert.equal(await pageA.getByRole('button', { name: /^Copy / }).count(), 3 + 2 * shopA.webhookKeys.length);

    const next = generateSigningKey();
    await pageA.getByLabel('Add a public key').fill(next.publicKey.toString('base64'));
    await pageA.getByRole('button', { name: 'Upload key' }).click();
    await pageA.getByText('Public key added.').waitFor();
    const rows = pageA.getByRole('region', { name: 'Your public keys' }).locator('tbody tr');
    assert.equal(await rows.count(), 2);
    assert.equal(await pageA.getByRole('button', { name: 'Upload key' }).isDisabled(), true, 'two keys are active');
    await screenshot(pageA, '02-credentials');

    const rotated: TestMerchant = { ...shopA, key: next };
    assert.equal((await get(platform, rotated, '/api/v1/balances')).status, 200, 'the uploaded key signs');
  });

  it('pays a payment on the sandbox cashier page and shows it SUCCEEDED with the payer in the portal', async () => {
    const payment = await createPayment(shopA, { amount: '249.90' });
    const cashier = await contextA.newPage();
    assert.equal(payment.cashierUrl, `${platform.url}/cashier/${payment.orderNo}`);
    await cashier.goto(payment.cashierUrl);
    assert.equal(await textOf(cashier, '[data-testid="amount"]'), 'R$249.90');
    assert.equal(await textOf(cashier, '[data-testid="method"]'), 'Pix');
    await cashier.getByLabel('Payer name').fill('Maria Silva');
    await cashier.getByLabel('Document number').fill('00123456789');
    await screenshot(cashier, '03-cashier');
    await cashier.getByRole('button', { name: /^Pay / }).click();
    await cashier.getByText('Payment received').waitFor();
    await screenshot(cashier, '04-cashier-paid');
    await cashier.close();

    await pageA.getByRole('link', { name: 'Payments', exact: true }).click();
    await pageA.getByLabel('Search').fill(payment.merchantOrderNo);
    await pageA.getByLabel('Status').selectOption('SUCCEEDED');
    await pageA.getByRole('button', { name: 'Apply filters' }).click();
    const link = pageA.getByRole('link', { name: payment.orderNo });
    await link.waitFor();
    assert.equal(await pageA.locator('table tbody tr').count(), 1);
    await link.click();
    await pageA.getByRole('heading', { level: 1, name: `Payment ${payment.orderNo}` }).waitFor();
    const details = (await pageA.locator('#summary + dl').textContent()) ?? '';
    assert.match(details, /StatusSUCCEEDED/);
    assert.match(details, /Payer nameMaria Silva/);
    assert.match(details, /Payer document00123456789/);
    assert.match(details, /Paid amountR\$249\.90/);
    const timeline = (await pageA.locator('.timeline').textContent()) ?? '';
    assert.match(timeline, /Order created/);
    assert.match(timeline, /Succeeded/);
    await pageA.getByRole('heading', { level: 3, name: /^evt_/ }).waitFor();
    await waitForDelivery(pageA, 'delivered', 1);
    const attempt = (await pageA.locator('table.attempts tbody tr').first().textContent()) ?? '';
    assert.match(attempt, /200/);
    assert.equal(receiver.received.length, 1, 'the merchant received the webhook');
    await screenshot(pageA, '05-order-succeeded');
    paidOrder = payment;
  });

  it('shows a failed delivery with its attempt, and resends it from the order page', async () => {
    receiver.fallback = { status: 500, body: 'database is down' };
    const payment = await createPayment(shopA, { amount: '10.00' });
    const cashier = await contextA.newPage();
    await cashier.goto(`${platform.url}/cashier/${payment.orderNo}`);
    await cashier.getByLabel('Payer name').fill('Ana Costa');
    await cashier.getByLabel('Document number').fill('98765432100');
    await cashier.getByRole('button', { name: /^Pay / }).click();
    await cashier.getByText('Payment received').waitFor();
    await cashier.close();

    await pageA.goto(`${platform.url}/portal/payments/${payment.orderNo}`);
    await pageA.getByRole('heading', { level: 1, name: `Payment ${payment.orderNo}` }).waitFor();
    await waitForDelivery(pageA, 'pending', 1);
    const failed = (await pageA.locator('table.attempts tbody tr').first().textContent()) ?? '';
    assert.match(failed, /500/);
    assert.match(failed, /database is down/);
    await screenshot(pageA, '06-delivery-failed');

    receiver.fallback = { status: 200, body: 'ok' };
    const eventId = (await pageA.getByRole('heading', { level: 3, name: /^evt_/ }).textContent())?.trim() as string;
    await pageA.getByRole('button', { name: `Resend event ${eventId}` }).click();
    await pageA.getByText(`Event ${eventId} is being sent again.`).waitFor();
    await waitForDelivery(pageA, 'delivered', 2);
    const rows = pageA.locator('table.attempts tbody tr');
    assert.match((await rows.nth(1).textContent()) ?? '', /200/);
    const sent = receiver.received.filter((r) => r.body.toString().includes(payment.orderNo));
    assert.equal(sent.length, 2);
    assert.deepEqual(sent[0]?.body, sent[1]?.body, 'the resend carries the same body bytes');
    await screenshot(pageA, '07-delivery-resent');
  });

  it('shows the balance and ledger entries and exports them as CSV', async () => {
    await pageA.getByRole('link', { name: 'Balances', exact: true }).click();
    await pageA.getByRole('heading', { level: 1, name: 'Balances and ledger' }).waitFor();
    const available = await textOf(pageA, '[data-testid="available-BRL"]');
    assert.notEqual(available, 'R$0.00');
    await pageA.getByRole('link', { name: paidOrder.orderNo }).first().waitFor();
    const [download] = await Promise.all([
      pageA.waitForEvent('download'),
      pageA.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const path = await download.path();
    assert.ok(path);
    const { readFileSync } = await import('node:fs');
    const csv = readFileSync(path, 'utf8');
    assert.match(csv, /^entryId,createdAt,currency,account,amount,transactionKind,reference,orderNo\r\n/);
    assert.ok(csv.includes(`payment:${paidOrder.orderNo}:succeeded`));
    await screenshot(pageA, '08-balances');
  });

  it('shows a payout returned upstream: its receipt with the payee, REFUNDED, and both events delivered', async () => {
    const client = clientOf(shopA);
    const payout = await client.payouts.create({
      merchantOrderNo: `WO-${Date.now()}`,
      currency: 'BRL',
      amount: '50.00',
      webhookUrl: `${receiver.url}/webhook/payout`,
      payee: { name: 'João Souza', accountNumber: '000123456789', bankCode: '341', documentNumber: '01234567890' },
    });
    await client.payouts.confirm({ orderNo: payout.orderNo });
    await client.sandbox.simulatePayout({ orderNo: payout.orderNo, status: 'SUCCEEDED' });
    await client.sandbox.returnPayout({ orderNo: payout.orderNo, refundNo: `RF-${payout.orderNo}` });

    await pageA.getByRole('link', { name: 'Payouts' }).click();
    await pageA.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    await pageA.getByRole('link', { name: payout.orderNo }).click();
    await pageA.getByRole('heading', { level: 1, name: `Payout ${payout.orderNo}` }).waitFor();
    const receipt = (await pageA.locator('#receipt + dl').textContent()) ?? '';
    assert.match(receipt, /StatusREFUNDED/);
    assert.match(receipt, /PayeeJoão Souza/);
    assert.match(receipt, /Account000123456789/);
    assert.match(receipt, /AmountR\$50\.00/);
    assert.match(receipt, new RegExp(`Refund no.RF-${payout.orderNo}`));
    for (let i = 0; i < 50; i++) {
      const heads = await pageA.locator('.event-head').allTextContents();
      if (heads.length === 2 && heads.every((h) => h.includes('Delivery: delivered'))) break;
      await pageA.waitForTimeout(200);
      await pageA.getByRole('button', { name: 'Refresh' }).click();
    }
    const heads = await pageA.locator('.event-head').allTextContents();
    assert.equal(heads.length, 2);
    assert.match(heads[0] ?? '', /SUCCEEDED.*Delivery: delivered/);
    assert.match(heads[1] ?? '', /REFUNDED.*Delivery: delivered/);
    // The payee appears on the receipt only: never in the webhooks the merchant received.
    const payoutHooks = receiver.received.filter((r) => r.path === '/webhook/payout');
    assert.equal(payoutHooks.length, 2);
    for (const hook of payoutHooks) assert.doesNotMatch(hook.body.toString(), /João|000123456789/);
    await screenshot(pageA, '09-payout-refunded');
  });

  it('lists rejected requests with the failed step and the signature base (sandbox)', async () => {
    const bad = buildRead(shopA, '/api/v1/payments', `orderNo=${paidOrder.orderNo}`, platform.services.now());
    bad.headers.signature = `merchant=:${Buffer.alloc(64, 1).toString('base64')}:`;
    const refused = await fetch(`${platform.url}/api/v1/payments?orderNo=${paidOrder.orderNo}`, {
      headers: bad.headers,
    });
    assert.equal(refused.status, 401);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await pageA.getByRole('link', { name: 'Refused requests', exact: true }).click();
    await pageA.getByRole('heading', { level: 1, name: 'Refused requests' }).waitFor();
    const base = await pageA.locator('[data-testid="signature-base"]').first().textContent();
    assert.ok(base?.startsWith('"@method": GET\n"@path": /api/v1/payments\n"@query": ?orderNo='), base ?? '');
    assert.match((await pageA.locator('article').first().textContent()) ?? '', /Ed25519 signature/);
    // The signature base wraps: nothing of it is cut off or scrolled out of view.
    const scrolls = await pageA
      .locator('[data-testid="signature-base"]')
      .first()
      .evaluate((pre) => pre.scrollWidth - pre.clientWidth);
    assert.ok(scrolls <= 1, `the signature base wraps (${scrolls}px hidden)`);
    await screenshot(pageA, '10-rejected-requests');
  });

  it('has no WCAG 2 A/AA violations (axe-core, contrast included) on its pages and the cashier page', async () => {
    const pages: [path: string, heading: string | RegExp][] = [
      ['/portal/payments', 'Payments'],
      [`/portal/payments/${paidOrder.orderNo}`, `Payment ${paidOrder.orderNo}`],
      ['/portal/payouts', 'Payouts'],
      ['/portal/balances', 'Balances and ledger'],
      ['/portal/credentials', 'Credentials'],
      ['/portal/rejected', 'Refused requests'],
    ];
    for (const [path, heading] of pages) {
      await pageA.goto(`${platform.url}${path}`);
      await pageA.getByRole('heading', { level: 1, name: heading }).waitFor();
      assert.deepEqual(await axeViolations(pageA), [], path);
    }
    const pending = await createPayment(shopA, { amount: '5.00' });
    const cashier = await contextA.newPage();
    await cashier.goto(`${platform.url}/cashier/${pending.orderNo}`);
    assert.deepEqual(await axeViolations(cashier), [], 'cashier page');
    await cashier.close();
    const signedOut = await browser.newContext();
    const signInPage = await signedOut.newPage();
    await signInPage.goto(`${platform.url}/portal/`);
    await signInPage.getByRole('heading', { level: 1, name: 'Sign in to the merchant portal' }).waitFor();
    assert.deepEqual(await axeViolations(signInPage), [], 'sign-in page');
    await signedOut.close();
  });

  it("another merchant's session cannot see the order", async () => {
    const contextB = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const pageB = await contextB.newPage();
    pageB.setDefaultTimeout(10_000);
    try {
      await signIn(pageB, userB);
      assert.equal(await textOf(pageB, '.topbar .merchant'), 'Other Shop');
      assert.equal(await pageB.getByRole('link', { name: paidOrder.orderNo }).count(), 0);
      await pageB.goto(`${platform.url}/portal/payments/${paidOrder.orderNo}`);
      await pageB.getByRole('alert').filter({ hasText: 'no such order' }).waitFor();
      assert.equal(await pageB.getByText('Maria Silva').count(), 0);
      await pageB.goto(`${platform.url}/portal/payments?orderNo=${paidOrder.merchantOrderNo}`);
      await pageB.getByText('No payments match these filters.').waitFor();
      await screenshot(pageB, '11-other-merchant');
    } finally {
      await contextB.close();
    }
  });

  it('works on a phone-sized screen: the navigation folds behind a Menu button', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await phone.newPage();
    page.setDefaultTimeout(10_000);
    try {
      await signIn(page, userA);
      const nav = page.getByRole('navigation', { name: 'Primary' });
      assert.equal(await nav.isVisible(), false);
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.click();
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      await page.getByRole('link', { name: 'Payments', exact: true }).waitFor();
      await screenshot(page, '12-phone-menu');
      await page.getByRole('link', { name: 'Payments', exact: true }).click();
      await page.getByRole('link', { name: paidOrder.orderNo }).click();
      await page.getByRole('heading', { level: 1, name: `Payment ${paidOrder.orderNo}` }).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `no sideways scrolling of the page (${overflow}px)`);
      await screenshot(page, '13-phone-order');
    } finally {
      await phone.close();
    }
  });

  it('keeps the navigation on one row at 1366×768, without overflow', async () => {
    const desktop = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page = await desktop.newPage();
    page.setDefaultTimeout(10_000);
    try {
      await signIn(page, userA);
      const rows = await page.evaluate(() => {
        const links = Array.from(document.querySelectorAll('#primary-nav li a, #primary-nav button, .topbar .brand'));
        return new Set(
          links.map((a) => Math.round(a.getBoundingClientRect().top + a.getBoundingClientRect().height / 2)),
        ).size;
      });
      assert.equal(rows, 1, 'every link and the sign-out button share one row');
      const bar = await page.locator('.topbar-inner').evaluate((el) => ({
        height: el.getBoundingClientRect().height,
        overflow: el.scrollWidth - el.clientWidth,
      }));
      assert.ok(bar.height < 64, `the bar is one row (${bar.height}px high)`);
      assert.ok(bar.overflow <= 0, `nothing overflows the bar (${bar.overflow}px)`);
      const page_ = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(page_ <= 1366, `no sideways scrolling (${page_}px)`);
      assert.deepEqual(await axeViolations(page), [], 'overview at 1366 px');
      await screenshot(page, '14-desktop-1366');
      // Desktop: the filters are open at first, and the toggle says so.
      await page.getByRole('link', { name: 'Payments', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Filters', exact: true }).getAttribute('aria-expanded'),
        'true',
      );
      assert.equal(await page.getByLabel('Search').isVisible(), true);
    } finally {
      await desktop.close();
    }
  });

  it('on a phone the lists do not scroll the page sideways and the filters fold behind a button', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await phone.newPage();
    page.setDefaultTimeout(10_000);
    try {
      await signIn(page, userA);
      for (const [path, heading, shot] of [
        ['/portal/payments', 'Payments', '15-phone-payments'],
        ['/portal/events', 'Webhook events', '16-phone-events'],
      ] as const) {
        await page.goto(`${platform.url}${path}`);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await page.locator('table tbody tr').first().waitFor();
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        const wide = await page.evaluate(() =>
          Array.from(document.querySelectorAll('main *'))
            .filter((el) => el.getBoundingClientRect().right > 391 && !el.closest('.table-wrap'))
            .slice(0, 3)
            .map((el) => `${el.tagName}.${el.className}`)
            .join(' '),
        );
        assert.ok(width <= 390, `${path}: no sideways scrolling of the page (${width}px: ${wide})`);
        const toggle = page.getByRole('button', { name: 'Filters', exact: true });
        const apply = page.getByRole('button', { name: 'Apply filters' });
        assert.equal(await toggle.getAttribute('aria-expanded'), 'false', `${path}: folded at first`);
        assert.equal(await apply.isVisible(), false);
        await screenshot(page, shot);
        await toggle.click();
        assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
        await apply.waitFor({ state: 'visible' });
        assert.deepEqual(await axeViolations(page), [], `${path} on a phone, filters open`);
        await screenshot(page, `${shot}-filters`);
        await toggle.click();
        await apply.waitFor({ state: 'hidden' });
      }
    } finally {
      await phone.close();
    }
  });

  it("writes amounts and dates in the user's locale (pt-BR), finds by payer name and amount, has a favicon", async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      locale: 'pt-BR',
      timezoneId: 'America/Sao_Paulo',
    });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    try {
      const icon = page.waitForResponse((response) => response.url().endsWith('/portal/favicon.svg'));
      await signIn(page, userA);
      assert.equal((await icon).headers()['content-type'], 'image/svg+xml');
      await page.goto(`${platform.url}/portal/payments`);
      await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
      // Search: the payer's name (a word of it) finds the paid order; so does its amount as typed in Brazil.
      for (const text of ['maria', '249,90', '00123456789']) {
        await page.getByLabel('Search').fill(text);
        await page.getByRole('button', { name: 'Apply filters' }).click();
        await page.waitForURL(`**/portal/payments?q=${encodeURIComponent(text)}`);
        await page.getByRole('link', { name: paidOrder.orderNo }).waitFor();
      }
      const row = page.locator('tr', { has: page.getByRole('link', { name: paidOrder.orderNo }) });
      const cells = ((await row.textContent()) ?? '').replace(/\u00a0/g, ' ');
      assert.match(cells, /R\$ 249,90/);
      const created = new Intl.DateTimeFormat('pt-BR', {
        dateStyle: 'medium',
        timeStyle: 'long',
        timeZone: 'America/Sao_Paulo',
      })
        .format(paidOrder.createdAt)
        .replace(/\u00a0/g, ' ');
      assert.ok(cells.includes(created), `${created} in ${cells}`);
      await screenshot(page, '17-payments-pt-BR-search');
      await page.getByLabel('Search').fill('nobody at all');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('No payments match these filters.').waitFor();

      await page.goto(`${platform.url}/portal/payouts`);
      const report = page.getByRole('link', { name: 'Download the payouts report (CSV)' });
      assert.equal(await report.getAttribute('href'), '/portal/api/payouts/report.csv');
      await page.goto(`${platform.url}/portal/payments`);
      const payments = page.getByRole('link', { name: 'Download the payments report (CSV)' });
      assert.equal(await payments.getAttribute('href'), '/portal/api/payments/report.csv');
      assert.deepEqual(await axeViolations(page), [], 'payouts with the report link');
    } finally {
      await context.close();
    }
  });

  it('loads nothing from other origins: fonts, scripts and styles are bundled', () => {
    assert.ok(requested.length > 20, `${requested.length} requests seen`);
    const foreign = requested.filter((url) => !url.startsWith(`${platform.url}/`) && !url.startsWith('data:'));
    assert.deepEqual(foreign, []);
  });

  it('signs out: the portal is closed again and the old session is dead', async () => {
    await pageA.getByRole('button', { name: 'Sign out' }).click();
    await pageA.getByRole('heading', { level: 1, name: 'Sign in to the merchant portal' }).waitFor();
    await pageA.goto(`${platform.url}/portal/credentials`);
    await pageA.getByRole('heading', { level: 1, name: 'Sign in to the merchant portal' }).waitFor();
    const status = await pageA.evaluate(async () => (await fetch('/portal/api/session')).status);
    assert.equal(status, 401);
  });
});
