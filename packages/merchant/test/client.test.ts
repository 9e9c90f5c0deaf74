/**
 * Every client method end to end against a real platform on loopback (PGlite), plus the
 * transport's behaviour: typed errors with the Request-Id, retries on network errors and 5xx
 * only (through a loopback proxy in front of the platform), a fresh nonce per attempt, timeouts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  PaygateApiError,
  PaygateClient,
  PaygateConfigError,
  PaygateNetworkError,
  type Payment,
} from '@paygate/merchant';
import { generateSigningKey } from '@paygate/protocol';
import { createMerchant, startTestPlatform, type TestMerchant, type TestPlatform } from '../../server/test/harness.js';
import { clientFor, clientOptions, header, type ScriptedServer, startScriptedServer } from './helpers.js';

const newOrderNo = () => `M-${randomUUID().slice(0, 18)}`;
const paymentInput = (overrides: Partial<Parameters<PaygateClient['payments']['create']>[0]> = {}) => ({
  merchantOrderNo: newOrderNo(),
  currency: 'BRL',
  amount: '125.50',
  paymentMethod: { code: 'PIX' },
  webhookUrl: 'https://merchant.example/webhook/payment',
  attach: 'cart=8812',
  ...overrides,
});

async function apiError(promise: Promise<unknown>): Promise<PaygateApiError> {
  const error = await promise.then(
    () => assert.fail('expected a PaygateApiError'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof PaygateApiError, String(error));
  return error;
}

describe('PaygateClient against a real platform', () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let client: PaygateClient;

  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform);
    client = clientFor(platform, merchant);
  });
  after(() => platform.close());

  it('payments: create (repeat-safe), query by both numbers, list, update, cancel', async () => {
    const input = paymentInput();
    const created = await client.payments.create(input);
    assert.equal(created.status, 'PENDING');
    assert.match(created.orderNo, /^P\d{18}$/);
    assert.match(created.cashierUrl, new RegExp(`/cashier/${created.orderNo}$`));

    const again = await client.payments.create(input);
    assert.equal(again.orderNo, created.orderNo, 'a repeated create returns the same order');

    assert.equal((await client.payments.query({ orderNo: created.orderNo })).merchantOrderNo, input.merchantOrderNo);
    assert.equal((await client.payments.query({ merchantOrderNo: input.merchantOrderNo })).orderNo, created.orderNo);

    const page = await client.payments.list({ status: 'PENDING', pageSize: 100 });
    assert.ok(page.items.some((p) => p.orderNo === created.orderNo));
    assert.ok(page.nextCursor === null || typeof page.nextCursor === 'string');

    const updated = await client.payments.update({ orderNo: created.orderNo, attach: 'cart=9999' });
    assert.equal(updated.attach, 'cart=9999');

    const canceled = await client.payments.cancel({ merchantOrderNo: input.merchantOrderNo });
    assert.equal(canceled.status, 'CANCELED');
    assert.equal((await client.payments.cancel({ orderNo: created.orderNo })).status, 'CANCELED');

    const error = await apiError(client.payments.update({ orderNo: created.orderNo, attach: 'late' }));
    assert.equal(error.msg, 'INVALID_STATE');
    assert.equal(error.status, 409);
    assert.match(error.requestId ?? '', /^req_/);
    assert.match(error.message, /POST \/api\/v1\/payments\/update failed with 409 INVALID_STATE/);
  });

  it('business failures are typed: VALIDATION_FAILED with field errors, DUPLICATE_ORDER, ORDER_NOT_FOUND', async () => {
    const invalid = await apiError(client.payments.create(paymentInput({ amount: '12.345' })));
    assert.equal(invalid.msg, 'VALIDATION_FAILED');
    assert.equal(invalid.status, 400);
    assert.deepEqual(
      invalid.fieldErrors.map((e) => e.field),
      ['amount'],
    );
    assert.match(invalid.message, /\(amount must be /);

    const input = paymentInput();
    await client.payments.create(input);
    const duplicate = await apiError(client.payments.create({ ...input, amount: '1.00' }));
    assert.equal(duplicate.msg, 'DUPLICATE_ORDER');
    assert.equal(duplicate.status, 409);

    const missing = await apiError(client.payments.query({ merchantOrderNo: 'no-such-order' }));
    assert.equal(missing.msg, 'ORDER_NOT_FOUND');
    assert.equal(missing.status, 404);
  });

  it('sandbox payment, balances, rates, ledger entries', async () => {
    const payment = await client.payments.create(paymentInput({ amount: '500.00' }));
    const paid = await client.sandbox.simulatePayment({
      orderNo: payment.orderNo,
      status: 'SUCCEEDED',
      payer: { name: 'Maria Silva', documentNumber: '00123456789' },
    });
    assert.equal(paid.status, 'SUCCEEDED');
    assert.equal(paid.paidAmount, '500.00');
    assert.deepEqual(paid.payer, { name: 'Maria Silva', documentNumber: '00123456789' });

    const [brl] = await client.balances({ currency: 'BRL' });
    assert.equal(brl?.currency, 'BRL');
    assert.ok(Number(brl?.available) > 0);
    assert.equal((await client.balances()).length, 4);

    const rates = await client.rates({ currency: 'BRL', method: 'PIX' });
    assert.equal(rates[0]?.currency, 'BRL');
    assert.equal(rates[0]?.payments[0]?.method, 'PIX');

    const entries = await client.ledger.entries({ currency: 'BRL', pageSize: 10 });
    assert.ok(entries.items.some((e) => e.orderNo === payment.orderNo && e.transactionKind === 'payment'));
  });

  it('payouts: create, query, update, list, confirm, receipt; sandbox simulate and return', async () => {
    const funding = await client.payments.create(paymentInput({ amount: '1000.00' }));
    await client.sandbox.simulatePayment({ orderNo: funding.orderNo, status: 'SUCCEEDED' });

    const input = {
      merchantOrderNo: newOrderNo(),
      currency: 'BRL',
      amount: '100.00',
      webhookUrl: 'https://merchant.example/webhook/payout',
      payee: { name: 'João Souza', accountNumber: '12345678', bankCode: '001', documentNumber: '00987654321' },
    };
    const payout = await client.payouts.create(input);
    assert.equal(payout.status, 'PENDING');
    assert.match(payout.orderNo, /^W\d{18}$/);
    assert.equal((await client.payouts.create(input)).orderNo, payout.orderNo, 'a repeated create is the same');
    assert.equal((await client.payouts.query({ merchantOrderNo: input.merchantOrderNo })).orderNo, payout.orderNo);
    assert.equal((await client.payouts.update({ orderNo: payout.orderNo, attach: 'batch-7' })).attach, 'batch-7');
    assert.ok((await client.payouts.list({ pageSize: 50 })).items.some((p) => p.orderNo === payout.orderNo));

    const confirmed = await client.payouts.confirm({ orderNo: payout.orderNo });
    assert.equal(confirmed.status, 'PROCESSING');

    const receipt = await client.payouts.receipt({ orderNo: payout.orderNo });
    assert.equal(receipt.payee.documentNumber, '00987654321');
    assert.equal(receipt.total, (Number(receipt.amount) + Number(receipt.fee)).toFixed(2));

    const succeeded = await client.sandbox.simulatePayout({ orderNo: payout.orderNo, status: 'SUCCEEDED' });
    assert.equal(succeeded.status, 'SUCCEEDED');
    const refunded = await client.sandbox.returnPayout({
      orderNo: payout.orderNo,
      refundNo: `RF-${randomUUID().slice(0, 8)}`,
    });
    assert.equal(refunded.status, 'REFUNDED');
    assert.equal(refunded.refundAmount, '100.00');
    assert.equal(typeof refunded.refundTime, 'number');

    const broke = await apiError(
      client.payouts.create({ ...input, merchantOrderNo: newOrderNo(), amount: '99999.00' }),
    );
    assert.equal(broke.msg, 'INSUFFICIENT_BALANCE');
  });

  it('events: list by order with the attempt log, resend', async () => {
    const payment = await client.payments.create(paymentInput());
    await client.sandbox.simulatePayment({ orderNo: payment.orderNo, status: 'FAILED' });
    const events = await client.events.list({ orderNo: payment.orderNo });
    assert.equal(events.items.length, 1);
    const [event] = events.items;
    assert.match(event?.eventId ?? '', /^evt_/);
    assert.equal(event?.status, 'FAILED');
    assert.equal(event?.orderType, 'PAYMENT');
    assert.deepEqual(event?.attemptLog, []);

    const resent = await client.events.resend(event?.eventId as string);
    assert.equal(resent.eventId, event?.eventId);
    assert.equal(resent.deliveryStatus, 'pending');
    assert.ok((await client.events.list({ status: 'pending', pageSize: 100 })).items.length >= 1);

    const unknown = await apiError(client.events.resend('evt_01JGZ7Q4V1M9X2K3C5B8N0P6RT'));
    assert.equal(unknown.msg, 'EVENT_NOT_FOUND');
  });

  it('signs a raw query exactly as it is sent, even when the URL parser has to encode it', async () => {
    // A space and a non-ASCII letter are percent-encoded on the way out; the signature covers
    // what was sent, so the platform gets past authentication to validate the value.
    const response = await client.send({ method: 'GET', path: '/api/v1/payments', query: 'merchantOrderNo=a bç' });
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal((response.body as { msg: string }).msg, 'VALIDATION_FAILED');
    assert.match(response.sent.signatureBase, /"@query": \?merchantOrderNo=a%20b%C3%A7\n/);
  });

  it('a wrong private key is UNAUTHORIZED, with the Request-Id and what usually causes it', async () => {
    const impostor = new PaygateClient({
      ...clientOptions(platform.url, merchant),
      privateKey: generateSigningKey().secretKey,
    });
    const error = await apiError(impostor.payments.query({ orderNo: 'P000000000000000001' }));
    assert.equal(error.msg, 'UNAUTHORIZED');
    assert.equal(error.status, 401);
    assert.match(error.requestId ?? '', /^req_/);
    assert.match(error.message, /private key/);
  });

  it('refuses unusable configuration with a message naming the option', () => {
    const good = clientOptions(platform.url, merchant);
    const problems: [Partial<typeof good>, RegExp][] = [
      [{ privateKey: 'not a key' }, /privateKey/],
      [{ privateKey: Buffer.alloc(31) }, /privateKey: an Ed25519 private key is 32 or 64 bytes/],
      [{ accessKey: 'merchant-1' }, /accessKey/],
      [{ bodyKey: { keyId: '', publicKey: merchant.bodyKey.publicKey } }, /bodyKey.keyId/],
      [{ bodyKey: { keyId: 'bk_x', publicKey: 'AAAA' } }, /bodyKey.publicKey/],
      [{ baseUrl: 'ftp://example.com' }, /baseUrl/],
    ];
    for (const [change, message] of problems) {
      assert.throws(
        () => new PaygateClient({ ...good, ...change }),
        (e: unknown) => {
          assert.ok(e instanceof PaygateConfigError);
          assert.match(e.message, message);
          return true;
        },
      );
    }
  });

  it('refuses a request that cannot be sent, before sending it', async () => {
    await assert.rejects(client.send({ method: 'POST', path: '/api/v1/payments?x=1', body: {} }), PaygateConfigError);
    await assert.rejects(client.send({ method: 'POST', path: '/api/v1/payments', body: undefined }), /must be JSON/);
    const huge = { attach: 'x'.repeat(1024 * 1024) };
    await assert.rejects(client.send({ method: 'POST', path: '/api/v1/payments', body: huge }), /at most 1 MiB/);
    await assert.rejects(client.send({ method: 'GET', path: 'api/v1/payments' }), /must start with \//);
  });

  describe('retries, through a loopback proxy in front of the platform', () => {
    let proxy: ScriptedServer;
    let viaProxy: PaygateClient;
    const nonceOf = (i: number) =>
      /nonce="([^"]+)"/.exec(header(proxy.received[i] as never, 'signature-input') ?? '')?.[1];

    before(async () => {
      proxy = await startScriptedServer({ kind: 'forward' }, platform.url);
      viaProxy = new PaygateClient({ ...clientOptions(proxy.url, merchant), retries: 2, retryDelayMs: 1 });
    });
    after(() => proxy.close());

    it('retries a 503 and a dropped connection, signing and sealing every attempt afresh', async () => {
      proxy.received.length = 0;
      proxy.script(
        { kind: 'reply', status: 503, body: '{"msg":"UNAVAILABLE"}' },
        { kind: 'destroy' },
        { kind: 'forward' },
      );
      const created: Payment = await viaProxy.payments.create(paymentInput());
      assert.equal(created.status, 'PENDING');
      assert.equal(proxy.received.length, 3);
      const nonces = new Set([0, 1, 2].map(nonceOf));
      assert.equal(nonces.size, 3, 'each attempt has its own nonce');
      const digests = new Set(proxy.received.map((r) => header(r, 'content-digest')));
      assert.equal(digests.size, 3, 'each attempt has its own sealed envelope');
      const keys = new Set(proxy.received.map((r) => header(r, 'idempotency-key')));
      assert.equal(keys.size, 1, 'one Idempotency-Key per call, for tracing');
    });

    it('a create whose answer was lost is retried into the same order (the platform dedups by merchantOrderNo)', async () => {
      const input = paymentInput();
      proxy.received.length = 0;
      // The first attempt reaches the platform and creates the order, but its answer is lost.
      proxy.script({ kind: 'forward', answer: 502 });
      const created = await viaProxy.payments.create(input);
      assert.equal(proxy.received.length, 2, 'the create was sent twice');
      const page = await client.payments.list({ pageSize: 100 });
      const same = page.items.filter((p) => p.merchantOrderNo === input.merchantOrderNo);
      assert.equal(same.length, 1, 'one order for the two attempts');
      assert.equal(same[0]?.orderNo, created.orderNo);
    });

    it('sends through an injected fetch', async () => {
      const seen: string[] = [];
      const injected: typeof fetch = (input, init) => {
        seen.push(`${init?.method} ${String(input)}`);
        return fetch(input, init);
      };
      const withFetch = new PaygateClient({ ...clientOptions(platform.url, merchant), fetch: injected });
      assert.equal((await withFetch.balances({ currency: 'EUR' }))[0]?.currency, 'EUR');
      assert.deepEqual(seen, [`GET ${platform.url}/api/v1/balances?currency=EUR`]);
    });

    it('never retries a 4xx', async () => {
      proxy.received.length = 0;
      await apiError(viaProxy.payments.query({ merchantOrderNo: 'missing-order' }));
      assert.equal(proxy.received.length, 1);
    });

    it('gives up after the retries with the last 5xx as a typed error', async () => {
      proxy.received.length = 0;
      const reply = {
        kind: 'reply',
        status: 500,
        body: '{"msg":"INTERNAL_ERROR"}',
        headers: { 'request-id': 'req_x' },
      } as const;
      proxy.script(reply, reply, reply);
      const error = await apiError(viaProxy.balances());
      assert.equal(error.msg, 'INTERNAL_ERROR');
      assert.equal(error.status, 500);
      assert.equal(error.requestId, 'req_x');
      assert.equal(proxy.received.length, 3);
    });

    it('a non-JSON answer is INVALID_RESPONSE, quoting it', async () => {
      proxy.script({ kind: 'reply', status: 404, body: '<html>not here</html>' });
      const error = await apiError(viaProxy.balances());
      assert.equal(error.msg, 'INVALID_RESPONSE');
      assert.match(error.message, /not here/);
    });

    it('network failures on every attempt are a PaygateNetworkError; a hung attempt times out', async () => {
      proxy.script({ kind: 'destroy' }, { kind: 'destroy' }, { kind: 'destroy' });
      const dropped = await viaProxy.balances().catch((e: unknown) => e);
      assert.ok(dropped instanceof PaygateNetworkError, String(dropped));
      assert.equal(dropped.attempts, 3);
      assert.equal(dropped.timedOut, false);

      proxy.script({ kind: 'hang' });
      const hung = await viaProxy.balances({}, { retries: 0, timeoutMs: 200 }).catch((e: unknown) => e);
      assert.ok(hung instanceof PaygateNetworkError, String(hung));
      assert.equal(hung.timedOut, true);
      assert.match(hung.message, /timed out/);
    });

    it("the caller's AbortSignal cancels without retrying", async () => {
      proxy.received.length = 0;
      proxy.script({ kind: 'hang' });
      const controller = new AbortController();
      const pending = viaProxy.balances({}, { signal: controller.signal });
      while (proxy.received.length === 0) await new Promise((resolve) => setImmediate(resolve));
      controller.abort(new Error('user canceled'));
      await assert.rejects(pending, /user canceled/);
      assert.equal(proxy.received.length, 1);
    });
  });
});
