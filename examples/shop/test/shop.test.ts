/**
 * The example shop against a real platform on loopback: an order becomes a payment, the payer
 * is sent to the cashier page and pays (or fails) there as a person would, the platform's
 * webhook reaches the shop, is verified and applied through the inbox, and the order page shows
 * the final state. A resent webhook changes nothing; a tampered one is refused.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { PaygateClient, WebhookVerifier } from '@paygate/merchant';
import { deliverAll } from '../../../packages/merchant/test/helpers.js';
import { createMerchant, startTestPlatform, type TestPlatform } from '../../../packages/server/test/harness.js';
import { createShop, type Shop } from '../src/app.js';
import type { ShopOrder } from '../src/orders.js';

describe('example shop', () => {
  let platform: TestPlatform;
  let db: PGlite;
  let shop: Shop;
  let server: Server;
  let shopUrl: string;
  let client: PaygateClient;
  const errors: unknown[] = [];

  before(async () => {
    platform = await startTestPlatform();
    const merchant = await createMerchant(platform, 'Example shop');
    client = new PaygateClient({
      baseUrl: platform.url,
      accessKey: merchant.accessKey,
      privateKey: merchant.key.secretKey,
      bodyKey: merchant.bodyKey,
    });
    db = new PGlite();
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    shop = await createShop({
      client,
      verifier: new WebhookVerifier({ webhookKeys: merchant.webhookKeys }),
      db,
      publicUrl: shopUrl,
      onError: (error) => void errors.push(error),
    });
    server.on('request', shop.app);
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db.close();
    await platform.close();
  });

  /** Buys a product like a browser would: the shop answers with a redirect to the cashier. */
  async function buy(product: string): Promise<{ cashierUrl: string; order: ShopOrder }> {
    const response = await fetch(`${shopUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ product }),
      redirect: 'manual',
    });
    assert.equal(response.status, 303);
    const location = response.headers.get('location') as string;
    assert.match(location, new RegExp(`^${platform.url}/cashier/P\\d{18}$`));
    const [latest] = await shop.orders.latest(1);
    assert.ok(latest);
    assert.equal(latest.cashierUrl, location);
    return { cashierUrl: location, order: latest };
  }

  async function orderJson(id: string): Promise<ShopOrder> {
    return (await (await fetch(`${shopUrl}/api/orders/${id}`)).json()) as ShopOrder;
  }

  /** The payer's click on the cashier page. */
  async function cashier(cashierUrl: string, form: Record<string, string>): Promise<void> {
    const page = await fetch(cashierUrl);
    assert.equal(page.status, 200);
    const answer = await fetch(cashierUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
      redirect: 'manual',
    });
    assert.equal(answer.status, 303);
  }

  it('shows the products', async () => {
    const home = await (await fetch(shopUrl)).text();
    assert.match(home, /Coffee beans/);
    assert.match(home, /<form method="post" action="\/orders">/);
  });

  it('a paid order: cashier → verified webhook → SUCCEEDED with the payer, on the order page', async () => {
    const { cashierUrl, order } = await buy('coffee');
    assert.equal(order.status, 'PENDING');
    assert.match(await (await fetch(`${shopUrl}/orders/${order.id}`)).text(), /Pay at the cashier/);

    await cashier(cashierUrl, { action: 'pay', name: 'Maria Silva', documentNumber: '00123456789' });
    assert.equal((await orderJson(order.id)).status, 'PENDING', 'nothing changes before the webhook arrives');
    assert.equal(await deliverAll(platform), 1);

    const paid = await orderJson(order.id);
    assert.equal(paid.status, 'SUCCEEDED');
    assert.equal(paid.paidAmount, '89.90');
    assert.equal(paid.payerName, 'Maria Silva');
    const html = await (await fetch(`${shopUrl}/orders/${order.id}`)).text();
    assert.match(html, /Paid BRL 89\.90 by Maria Silva/);
    assert.doesNotMatch(html, /http-equiv="refresh"/, 'a final order stops refreshing');
    assert.deepEqual(errors, []);

    // A resend of the same event (same eventId) is acknowledged and changes nothing.
    const [event] = (await client.events.list({ orderNo: paid.orderNo as string })).items;
    await client.events.resend(event?.eventId as string);
    assert.equal(await deliverAll(platform), 1);
    assert.deepEqual(await orderJson(order.id), paid);
  });

  it('a failed payment shows FAILED', async () => {
    const { cashierUrl, order } = await buy('mug');
    await cashier(cashierUrl, { action: 'fail', name: '', documentNumber: '' });
    await deliverAll(platform);
    assert.equal((await orderJson(order.id)).status, 'FAILED');
    assert.match(await (await fetch(`${shopUrl}/orders/${order.id}`)).text(), /The payment failed/);
  });

  it('refuses a webhook that was not signed by the platform, and the order keeps its state', async () => {
    const { order } = await buy('grinder');
    const body = JSON.stringify({
      eventId: 'evt_01JGZ7Q4V1M9X2K3C5B8N0P6RT',
      orderType: 'PAYMENT',
      orderNo: order.orderNo,
      merchantOrderNo: order.id,
      status: 'SUCCEEDED',
      currency: 'USD',
      amount: '59.00',
      paidAmount: '59.00',
    });
    const forged = await fetch(`${shopUrl}/webhook/payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(forged.status, 401);
    assert.equal(((await forged.json()) as { check: string }).check, 'shape');
    assert.equal((await orderJson(order.id)).status, 'PENDING');
  });

  it('an unknown product is a 400 page', async () => {
    const response = await fetch(`${shopUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ product: 'unicorn' }),
    });
    assert.equal(response.status, 400);
  });
});
