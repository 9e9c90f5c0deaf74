/**
 * The portal's operations pages in Chromium: the overview, webhook events across orders with
 * resend and recover (resend every failed event of a range), fee and net, failure reason,
 * cancel, the sandbox's channel buttons, list totals and whole-row links, filters that fit
 * their card, and order numbers on a 375 px phone. A real platform with its dispatcher, a real
 * receiver; screenshots under test-results/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  createMerchant,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { portalUser } from '../../server/test/portal-harness.js';
import { type Received, type Receiver, startReceiver } from '../../server/test/receiver.js';
import { axeViolations, ensurePortalBuilt, launchChromium, screenshot, SKIP_BROWSER, textOf } from './browser.js';

/** The Webhook-Event-Id a request carried (raw headers: name, value, name, value…). */
function eventIdOf(request: Received): string | undefined {
  const headers = request.headers as readonly string[];
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (headers[i]?.toLowerCase() === 'webhook-event-id') return headers[i + 1];
  }
  return undefined;
}

/**
 * Whether every filter form's controls sit inside it (no overflow) and controls on one row are
 * level (a field with a hint below does not push its control out of line).
 */
function filtersFit(page: Page): Promise<boolean> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('form.filters')).every((form) => {
      const box = form.getBoundingClientRect();
      // Controls less than a row apart are on the same row, and must then be level.
      const tops = Array.from(form.querySelectorAll('.field input, .field select')).map(
        (control) => control.getBoundingClientRect().top,
      );
      const level = tops.every((a) => tops.every((b) => Math.abs(a - b) >= 60 || Math.abs(a - b) <= 1));
      return (
        form.scrollWidth <= form.clientWidth &&
        level &&
        Array.from(form.querySelectorAll('input, select, button')).every(
          (control) => control.getBoundingClientRect().right <= box.right + 0.5,
        )
      );
    }),
  );
}

interface Order {
  orderNo: string;
  status: string;
}

describe('portal operations pages in Chromium', { skip: SKIP_BROWSER }, () => {
  let platform: TestPlatform;
  let browser: Browser;
  let receiver: Receiver;
  let shop: TestMerchant;
  let shopId: bigint;
  let user: { email: string; password: string };
  let context: BrowserContext;
  let page: Page;
  const orders: Record<string, string> = {};

  before(async () => {
    browser = await launchChromium();
    ensurePortalBuilt();
    receiver = await startReceiver({ status: 500, body: 'endpoint down' });
    // The dispatcher runs in the server; two attempts 100 ms apart, so deliveries fail fast.
    platform = await startTestPlatform({
      env: { PAYGATE_WORKERS: 'true', PAYGATE_WEBHOOK_RETRY_SCHEDULE: '100ms' },
    });
    shop = await createMerchant(platform, 'Loja Operações');
    const row = await platform.services.db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [
      shop.accessKey,
    ]);
    shopId = row.rows[0]?.id as bigint;
    user = await portalUser(platform, shop);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
    await receiver?.close();
  });

  const createPayment = async (amount: string) => {
    const created = await post<Order>(
      platform,
      shop,
      '/api/v1/payments',
      paymentInput({ amount, webhookUrl: `${receiver.url}/hook` }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return created.body.data as Order;
  };

  /** Waits until the merchant has `count` events with this delivery status. */
  const waitForEvents = async (status: string, count: number) => {
    for (let i = 0; i < 100; i++) {
      if ((await platform.services.webhooks.count(shopId, { status })) === count) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`the merchant does not have ${count} ${status} events`);
  };

  const openOrder = async (type: 'payments' | 'payouts', orderNo: string) => {
    await page.goto(`${platform.url}/portal/${type}/${orderNo}`);
    await page
      .getByRole('heading', { level: 1, name: `${type === 'payments' ? 'Payment' : 'Payout'} ${orderNo}` })
      .waitFor();
  };
  const detail = async (label: string) => {
    const rows = await page.locator('#summary + dl .details-row').allTextContents();
    return rows.find((row) => row.startsWith(label))?.slice(label.length);
  };

  it('signs in to the overview', async () => {
    await page.goto(`${platform.url}/portal/`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/portal/overview');
  });

  it('sandbox buttons drive a payment: FAILED with its reason; fee and net before and after SUCCEEDED', async () => {
    const failing = await createPayment('80.00');
    orders.failed = failing.orderNo;
    await openOrder('payments', failing.orderNo);
    await page.getByLabel('Failure reason (optional)').fill('Insufficient funds');
    await page.getByRole('button', { name: 'Simulate FAILED' }).click();
    await page.getByText('The payment is now FAILED.').waitFor();
    await page.getByTestId('failure-reason').waitFor();
    assert.equal(await textOf(page, '[data-testid="failure-reason"]'), 'Insufficient funds');
    assert.match((await page.locator('.sandbox-panel').textContent()) ?? '', /final: the channel cannot move it/);
    await screenshot(page, 'ops-01-payment-failed-reason');

    const paying = await createPayment('200.00');
    orders.paid = paying.orderNo;
    await openOrder('payments', paying.orderNo);
    // BRL Pix: 0.99 % of 200.00.
    assert.equal(await detail('Fee (if paid)'), 'R$1.98');
    assert.equal(await detail('Net (if paid)'), 'R$198.02');
    await page.getByRole('button', { name: 'Simulate PROCESSING' }).click();
    await page.getByText('The payment is now PROCESSING.').waitFor();
    // The notice shows before the page has reloaded the order; PROCESSING's moves come with the reload.
    await page.getByRole('button', { name: 'Simulate EXPIRED' }).waitFor({ state: 'detached' });
    assert.equal(await page.getByRole('button', { name: 'Simulate EXPIRED' }).count(), 0, 'PROCESSING cannot expire');
    await page.getByRole('button', { name: 'Simulate SUCCEEDED' }).click();
    await page.getByText('The payment is now SUCCEEDED.').waitFor();
    await page.locator('#summary + dl').getByText('Net to you').waitFor();
    assert.equal(await detail('Fee'), 'R$1.98');
    assert.equal(await detail('Net to you'), 'R$198.02');
    assert.equal(await page.getByTestId('failure-reason').count(), 0);
    await screenshot(page, 'ops-02-payment-fee-net');
  });

  it('sandbox buttons drive a payout to SUCCEEDED and back (REFUNDED)', async () => {
    const created = await post<Order>(platform, shop, '/api/v1/payouts', {
      merchantOrderNo: `WO-${Date.now()}`,
      currency: 'BRL',
      amount: '20.00',
      webhookUrl: `${receiver.url}/hook`,
      payee: { name: 'João Souza', accountNumber: '000123456789' },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const orderNo = created.body.data?.orderNo as string;
    orders.payout = orderNo;
    await openOrder('payouts', orderNo);
    await page.getByRole('button', { name: 'Simulate SUCCEEDED' }).click();
    await page.getByText('The payout is now SUCCEEDED.').waitFor();
    await page.getByRole('button', { name: 'Simulate return (REFUNDED)' }).click();
    await page.getByText('The payout was returned (REFUNDED).').waitFor();
    assert.match((await page.locator('#receipt + dl').textContent()) ?? '', /StatusREFUNDED/);
    await screenshot(page, 'ops-03-payout-returned');
  });

  it('cancels a PENDING payment after a confirmation', async () => {
    const payment = await createPayment('15.00');
    orders.canceled = payment.orderNo;
    await openOrder('payments', payment.orderNo);
    await page.getByRole('button', { name: 'Cancel payment' }).click();
    await page.getByRole('button', { name: 'Keep it' }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'payment page with the sandbox panel and the cancel question');
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.getByText('The payment was canceled.').waitFor();
    // The notice comes first; the order is read again after it (on a busy machine, a moment later).
    await page.locator('#summary + dl .details-row', { hasText: /^Status.*CANCELED/ }).waitFor();
    assert.match((await detail('Status')) ?? '', /CANCELED/);
    assert.equal(await page.getByRole('button', { name: 'Cancel payment' }).count(), 0);
    await screenshot(page, 'ops-04-payment-canceled');
  });

  it('overview: orders by status in a chart, balances, recent delivery failures linking to the order', async () => {
    // FAILED, SUCCEEDED, CANCELED payments and the payout's SUCCEEDED and REFUNDED: 5 events, all failing.
    await waitForEvents('failed', 5);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByTestId('failed-events').waitFor();
    assert.equal(await textOf(page, '[data-testid="payments-by-status-total"]'), '3 orders created in this period.');
    const chart = (await page.locator('#payments-by-status ~ svg').getAttribute('aria-label')) ?? '';
    assert.match(chart, /SUCCEEDED 1, FAILED 1, EXPIRED 0, CANCELED 1/);
    assert.equal(await textOf(page, '[data-testid="volume-payments-by-status-SUCCEEDED-BRL"]'), 'R$200.00');
    // 198.02 from the payment, 20.00 + 2.00 fee out and the 20.00 back.
    assert.equal(await textOf(page, '[data-testid="overview-available-BRL"]'), 'R$196.02');
    assert.equal(await textOf(page, '[data-testid="overview-reserved-BRL"]'), 'R$0.00');
    assert.match(await textOf(page, '[data-testid="failed-events"]'), /^5 events have failed delivery/);
    assert.equal(await page.locator('.failure-list li').count(), 5);
    assert.deepEqual(await axeViolations(page), [], 'overview');
    await screenshot(page, 'ops-05-overview');
    await page.getByRole('combobox', { name: 'Period' }).selectOption('24h');
    await page.waitForURL(/period=24h/);
    await page
      .locator('.failure-list')
      .getByRole('link', { name: orders.failed as string })
      .click();
    await page.getByRole('heading', { level: 1, name: `Payment ${orders.failed}` }).waitFor();
  });

  it('events page: filters by delivery, type and order status, with a total; the whole row opens the order', async () => {
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook events' }).waitFor();
    await page.getByTestId('total').waitFor();
    assert.equal(await textOf(page, '[data-testid="total"]'), '5 events match these filters.');
    const filters = page.getByRole('form', { name: 'Filter events' });
    await filters.getByLabel('Delivery').selectOption('failed');
    await filters.getByLabel('Type').selectOption('PAYOUT');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/type=PAYOUT/);
    await page.getByText('2 events match these filters.').waitFor();
    const payoutRows = await page.locator('table tbody tr').allTextContents();
    assert.equal(payoutRows.length, 2);
    assert.ok(payoutRows.every((row) => row.includes(orders.payout as string) && row.includes('failed')));
    await filters.getByLabel('Type').selectOption('PAYMENT');
    await filters.getByLabel('Order status').selectOption('FAILED');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('1 event matches these filters.').waitFor();
    assert.deepEqual(await axeViolations(page), [], 'events page');
    await screenshot(page, 'ops-06-events-filtered');
    // A click anywhere on the row (here the delivery cell) opens the order.
    await page.locator('table tbody tr td').nth(1).click();
    await page.getByRole('heading', { level: 1, name: `Payment ${orders.failed}` }).waitFor();
    await page.goBack();
    await page.getByText('1 event matches these filters.').waitFor();
  });

  it('resends one event from the events page: the receiver now answers 200 and it is delivered', async () => {
    receiver.fallback = { status: 200, body: 'ok' };
    const before = receiver.received.length;
    const eventId = ((await page.locator('table tbody tr .mono.small').first().textContent()) ?? '').trim();
    assert.match(eventId, /^evt_/);
    await page.getByRole('button', { name: `Resend event ${eventId}` }).click();
    await page.getByText(`Event ${eventId} is being sent again.`).waitFor();
    await waitForEvents('failed', 4);
    await waitForEvents('delivered', 1);
    assert.equal(receiver.received.length - before, 1);
    assert.equal(eventIdOf(receiver.received.at(-1) as Received), eventId);
    await page.goto(`${platform.url}/portal/events?status=delivered`);
    await page.getByText('1 event matches these filters.').waitFor();
    await screenshot(page, 'ops-07-event-resent');
  });

  it('recover: resends every failed event of a range at once; each is delivered', async () => {
    await page.goto(`${platform.url}/portal/events?status=failed`);
    await page.getByText('4 events match these filters.').waitFor();
    const failedIds = (await page.locator('table tbody tr .mono.small').allTextContents()).map((id) => id.trim());
    const before = receiver.received.length;
    const recover = page.getByRole('form', { name: 'Resend failed events' });
    await recover.getByRole('button', { name: 'Resend failed events' }).click();
    await page.getByText('4 failed events are being sent again.').waitFor();
    await waitForEvents('delivered', 5);
    await waitForEvents('failed', 0);
    const resent = receiver.received.slice(before).map(eventIdOf);
    assert.deepEqual(resent.sort(), [...failedIds].sort(), 'each failed event was sent once more');
    await page.goto(`${platform.url}/portal/events?status=failed`);
    await page.getByText('0 events match these filters.').waitFor();
    await recover.getByRole('button', { name: 'Resend failed events' }).click();
    await page.getByText('No failed event in this range.').waitFor();
    await screenshot(page, 'ops-08-recovered');
  });

  it('lists: a total, whole-row and keyboard links, filters inside their card', async () => {
    await page.getByRole('link', { name: 'Payments', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments' }).waitFor();
    await page.getByText('3 payments match these filters.').waitFor();
    assert.ok(await filtersFit(page), 'every filter control sits inside its form, level with the others');
    await screenshot(page, 'ops-09-payments-list');
    // Keyboard: the row's link takes focus and Enter opens the order.
    await page.getByRole('link', { name: orders.paid as string }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: `Payment ${orders.paid}` }).waitFor();
    await page.goBack();
    await page
      .locator('table tbody tr', { hasText: orders.canceled as string })
      .locator('td.num')
      .click();
    await page.getByRole('heading', { level: 1, name: `Payment ${orders.canceled}` }).waitFor();
  });

  it('on a 375 px phone the order numbers are whole and on one line, nothing scrolls sideways', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true });
    const small = await phone.newPage();
    small.setDefaultTimeout(10_000);
    try {
      await small.goto(`${platform.url}/portal/`);
      await small.getByLabel('Email').fill(user.email);
      await small.getByLabel('Password').fill(user.password);
      await small.getByRole('button', { name: 'Sign in' }).click();
      await small.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await small.goto(`${platform.url}/portal/payments`);
      await small.getByText('3 payments match these filters.').waitFor();
      for (const link of await small.locator('table tbody th a').all()) {
        const box = await link.boundingBox();
        const lineHeight = await link.evaluate((el) => parseFloat(getComputedStyle(el).fontSize) * 1.6);
        assert.ok(box && box.height <= lineHeight, `one line (${box?.height}px)`);
        assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `inside the screen (${box?.x}+${box?.width})`);
      }
      const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `no sideways scrolling (${overflow}px)`);
      assert.ok(await filtersFit(small), 'the filters fit a phone too');
      await screenshot(small, 'ops-10-phone-payments');
      const wrapOverflow = await small.locator('.table-wrap').evaluate((el) => el.scrollWidth - el.clientWidth);
      assert.ok(wrapOverflow <= 1, `the table fits (${wrapOverflow}px)`);
      await small.goto(`${platform.url}/portal/events`);
      await small.getByText('5 events match these filters.').waitFor();
      await screenshot(small, 'ops-11-phone-events');
    } finally {
      await phone.close();
    }
  });

  it('the payout page with its sandbox panel passes axe', async () => {
    await openOrder('payouts', orders.payout as string);
    assert.deepEqual(await axeViolations(page), [], 'payout page');
  });
});
