/**
 * Pay pressed again (a stale page, a resubmitted form) on an order whose payment became final
 * before its webhook was processed: the order must still reach the final status when the
 * webhook arrives.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { generateSigningKey } from '@paygate/protocol';
import type { Payment, PaygateClient } from '@paygate/merchant';
import { WebhookVerifier } from '@paygate/merchant';
import { createShop } from '../src/app.js';

it('a repeated Pay that finds the payment SUCCEEDED does not swallow the SUCCEEDED webhook', async () => {
  let status: Payment['status'] = 'PENDING';
  const payment = (merchantOrderNo: string): Payment => ({
    orderNo: 'P202601010000000001',
    merchantOrderNo,
    status,
    currency: 'BRL',
    amount: '89.90',
    paymentMethod: { code: 'PIX' },
    webhookUrl: 'http://127.0.0.1/webhook/payment',
    cashierUrl: 'http://127.0.0.1:8080/cashier/P202601010000000001',
    payerAction: { kind: 'redirect', url: 'http://127.0.0.1:8080/cashier/P202601010000000001' },
    createdAt: 1,
    updatedAt: 1,
    expiresAt: 2,
  });
  // The platform's create: deduplicated by merchantOrderNo, it answers the order as it is now.
  const client = {
    payments: { create: async (input: { merchantOrderNo: string }) => payment(input.merchantOrderNo) },
    payouts: {},
  } as unknown as PaygateClient;
  const key = generateSigningKey();
  const db = new PGlite();
  const shop = await createShop({
    client,
    verifier: new WebhookVerifier({ webhookKeys: [{ keyid: 'wk_test', publicKey: key.publicKey }] }),
    db,
    publicUrl: 'http://127.0.0.1',
    onError: () => undefined,
  });
  const server = createServer(shop.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const bought = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'product=coffee',
      redirect: 'manual',
    });
    assert.equal(bought.status, 303);
    const [order] = await shop.orders.latest();
    assert.ok(order);
    assert.equal(order.status, 'PENDING');

    // The payer pays; the webhook is still on its way when Pay is pressed again.
    status = 'SUCCEEDED';
    await fetch(`${url}/orders/${order.id}/pay`, { method: 'POST', redirect: 'manual' });

    await shop.inbox.process({
      eventId: 'evt_01JGZ7Q4V1M9X2K3C5B8N0P6RX',
      orderType: 'PAYMENT',
      orderNo: 'P202601010000000001',
      merchantOrderNo: order.id,
      status: 'SUCCEEDED',
      currency: 'BRL',
      amount: '89.90',
      paidAmount: '89.90',
      payer: { name: 'Ana Lima' },
    });
    const after = await shop.orders.get(order.id);
    assert.equal(after?.status, 'SUCCEEDED');
    assert.equal(after?.paidAmount, '89.90');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db.close();
  }
});
