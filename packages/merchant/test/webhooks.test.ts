/**
 * Webhooks end to end: the real platform's dispatcher delivers to receivers on loopback built
 * with each adapter (node:http, Express, Fastify); each verifies real deliveries and refuses
 * tampered ones; a JSON parser in front of the Express route is reported, not silently failed;
 * the inbox applies a duplicate delivery once and settles conflicts through the query API.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import {
  type InboxOutcome,
  nodeWebhookHandler,
  type OrderUpdate,
  type PaygateClient,
  RawBodyUnavailableError,
  SqlInboxStore,
  type WebhookEvent,
  WebhookInbox,
  WebhookVerificationError,
  WebhookVerifier,
} from '@paygate/merchant';
import { expressWebhook } from '@paygate/merchant/express';
import { fastifyWebhook } from '@paygate/merchant/fastify';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { createMerchant, startTestPlatform, type TestMerchant, type TestPlatform } from '../../server/test/harness.js';
import { clientFor, deliverAll, type Recorded, replay, type ScriptedServer, startScriptedServer } from './helpers.js';

/** What one receiver saw. */
interface Seen {
  events: WebhookEvent[];
  errors: unknown[];
}

const seen = (): Seen => ({ events: [], errors: [] });

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('webhooks through each adapter, from the real platform', () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let client: PaygateClient;
  let verifier: WebhookVerifier;
  let recorder: ScriptedServer;
  const receivers: { name: string; url: string; seen: Seen }[] = [];
  const servers: Server[] = [];
  let fastify: FastifyInstance;

  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform);
    client = clientFor(platform, merchant);
    verifier = new WebhookVerifier({ webhookKeys: merchant.webhookKeys });
    recorder = await startScriptedServer({ kind: 'reply', status: 200, body: '{}' });

    const node = seen();
    const nodeServer = createServer(
      nodeWebhookHandler({
        verifier,
        onEvent: (event) => void node.events.push(event),
        onError: (error) => void node.errors.push(error),
      }),
    );
    servers.push(nodeServer);
    receivers.push({ name: 'node:http', url: await listen(nodeServer), seen: node });

    // The webhook route comes before the JSON parser that the rest of the app uses.
    const viaExpress = seen();
    const app = express();
    app.post(
      '/webhook/payment',
      expressWebhook({
        verifier,
        onEvent: (event) => void viaExpress.events.push(event),
        onError: (error) => void viaExpress.errors.push(error),
      }),
    );
    app.use(express.json());
    app.post('/echo', (req, res) => void res.json(req.body));
    const expressServer = createServer(app);
    servers.push(expressServer);
    receivers.push({ name: 'express', url: await listen(expressServer), seen: viaExpress });

    const viaFastify = seen();
    fastify = Fastify();
    fastify.post('/echo', async (request) => request.body);
    await fastify.register(fastifyWebhook, {
      path: '/webhook/payment',
      verifier,
      onEvent: (event) => void viaFastify.events.push(event),
      onError: (error) => void viaFastify.errors.push(error),
    });
    const address = await fastify.listen({ port: 0, host: '127.0.0.1' });
    receivers.push({ name: 'fastify', url: address, seen: viaFastify });
  });

  after(async () => {
    for (const server of servers) await close(server);
    await fastify.close();
    await recorder.close();
    await platform.close();
  });

  /** A SUCCEEDED payment whose webhook goes to `webhookUrl`; resolves once it was delivered. */
  async function paidPayment(webhookUrl: string) {
    const payment = await client.payments.create({
      merchantOrderNo: `M-${randomUUID().slice(0, 18)}`,
      currency: 'BRL',
      amount: '80.00',
      paymentMethod: { code: 'PIX' },
      webhookUrl,
      attach: 'cart=1',
    });
    await client.sandbox.simulatePayment({
      orderNo: payment.orderNo,
      status: 'SUCCEEDED',
      payer: { name: 'Ana Lima', documentNumber: '0042' },
    });
    await deliverAll(platform);
    return payment;
  }

  for (const name of ['node:http', 'express', 'fastify']) {
    it(`${name}: verifies a real delivery (path and raw query as received) and types the event`, async () => {
      const receiver = receivers.find((r) => r.name === name);
      assert.ok(receiver);
      const payment = await paidPayment(`${receiver.url}/webhook/payment?shop=${encodeURIComponent(name)}&empty=`);
      const event = receiver.seen.events.find((e) => e.orderNo === payment.orderNo);
      assert.ok(event, `no event reached ${name}: ${receiver.seen.errors.map(String).join('; ')}`);
      assert.ok(event.orderType === 'PAYMENT' && event.status === 'SUCCEEDED');
      assert.equal(event.paidAmount, '80.00');
      assert.deepEqual(event.payer, { name: 'Ana Lima', documentNumber: '0042' });
      assert.equal(event.attach, 'cart=1');

      const [delivery] = (await client.events.list({ orderNo: payment.orderNo })).items;
      assert.equal(delivery?.deliveryStatus, 'delivered');
      assert.equal(delivery?.lastStatusCode, 200);
    });

    it(`${name}: refuses tampered deliveries, answering 401 with the failed check`, async () => {
      const receiver = receivers.find((r) => r.name === name);
      assert.ok(receiver);
      const before = recorder.received.length;
      const payment = await paidPayment(`${recorder.url}/webhook/payment?shop=${encodeURIComponent(name)}`);
      const captured = recorder.received[before] as Recorded;
      assert.ok(captured, 'the platform delivered to the recorder');
      receiver.seen.errors.length = 0;

      const body = Buffer.from(captured.body.toString('utf8').replace('"80.00"', '"8000.00"'));
      const altered = await replay(captured, receiver.url, { body });
      assert.equal(altered.status, 401);
      assert.equal(altered.body.check, 'digest');

      const moved = await replay(captured, receiver.url, { target: `/webhook/payment?shop=other` });
      assert.equal(moved.status, 401);
      assert.equal(moved.body.check, 'signature');

      const forged = await replay(captured, receiver.url, {
        headers: { 'webhook-event-id': 'evt_01JGZ7Q4V1M9X2K3C5B8N0P6RX' },
      });
      assert.equal(forged.status, 401);
      assert.equal(forged.body.check, 'event-id');

      assert.deepEqual(
        receiver.seen.errors.map((e) => (e instanceof WebhookVerificationError ? e.check : String(e))),
        ['digest', 'signature', 'event-id'],
      );
      assert.ok(!receiver.seen.events.some((e) => e.orderNo === payment.orderNo), 'nothing tampered got through');

      // The untouched delivery, replayed within its lifetime, verifies.
      const original = await replay(captured, receiver.url);
      assert.equal(original.status, 200, JSON.stringify(original.body));
      assert.ok(receiver.seen.events.some((e) => e.orderNo === payment.orderNo));
    });
  }

  it('express: a JSON parser in front of the webhook route is reported (500, RawBodyUnavailableError), and the platform retries', async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use(express.json()); // the classic mistake
    app.post(
      '/webhook/payment',
      expressWebhook({ verifier, onEvent: () => undefined, onError: (e) => void errors.push(e) }),
    );
    const server = createServer(app);
    const url = await listen(server);
    try {
      const payment = await paidPayment(`${url}/webhook/payment`);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof RawBodyUnavailableError);
      assert.match((errors[0] as Error).message, /express\.json\(\)/);
      const [delivery] = (await client.events.list({ orderNo: payment.orderNo })).items;
      assert.equal(delivery?.deliveryStatus, 'pending', 'a non-2xx answer is retried');
      assert.equal(delivery?.lastStatusCode, 500);
      assert.match(delivery?.attemptLog?.[0]?.responseExcerpt ?? '', /RAW_BODY_UNAVAILABLE/);
    } finally {
      await close(server);
    }
  });

  it('express under a mounted router and fastify under a prefix verify the path as received', async () => {
    const events: WebhookEvent[] = [];
    const onEvent = (event: WebhookEvent) => void events.push(event);
    const router = express.Router();
    router.post('/payment', expressWebhook({ verifier, onEvent }));
    const app = express();
    app.use('/hooks', router); // inside the router req.url is /payment; the signature covers /hooks/payment
    const server = createServer(app);
    const expressUrl = await listen(server);
    const prefixed = Fastify();
    await prefixed.register(fastifyWebhook, { prefix: '/hooks', path: '/payment', verifier, onEvent });
    const fastifyUrl = await prefixed.listen({ port: 0, host: '127.0.0.1' });
    try {
      const viaExpress = await paidPayment(`${expressUrl}/hooks/payment?q=1`);
      const viaFastify = await paidPayment(`${fastifyUrl}/hooks/payment?q=2`);
      assert.deepEqual(
        events.map((e) => e.orderNo),
        [viaExpress.orderNo, viaFastify.orderNo],
      );
    } finally {
      await close(server);
      await prefixed.close();
    }
  });

  it('express: a Buffer left by express.raw() is used as the raw body', async () => {
    const events: WebhookEvent[] = [];
    const app = express();
    app.post(
      '/webhook/payment',
      express.raw({ type: '*/*' }),
      expressWebhook({ verifier, onEvent: (e) => void events.push(e) }),
    );
    const server = createServer(app);
    const url = await listen(server);
    try {
      const payment = await paidPayment(`${url}/webhook/payment`);
      assert.ok(events.some((e) => e.orderNo === payment.orderNo));
    } finally {
      await close(server);
    }
  });

  describe('with the inbox (SQL store on PGlite)', () => {
    let db: PGlite;
    let inbox: WebhookInbox;
    let inboxUrl: string;
    let server: Server;
    const updates: OrderUpdate[] = [];
    const outcomes: InboxOutcome[] = [];

    before(async () => {
      db = new PGlite();
      const store = new SqlInboxStore(db);
      await store.migrate();
      inbox = new WebhookInbox({ store, client, onUpdate: (update) => void updates.push(update) });
      server = createServer(
        nodeWebhookHandler({ verifier, onEvent: async (event) => void outcomes.push(await inbox.process(event)) }),
      );
      inboxUrl = await listen(server);
    });
    after(async () => {
      await close(server);
      await db.close();
    });

    it('applies a duplicate delivery (a resend of the same eventId) once', async () => {
      const payment = await paidPayment(`${inboxUrl}/webhook/payment`);
      const mine = () => updates.filter((u) => u.orderNo === payment.orderNo);
      assert.equal(mine().length, 1);
      assert.deepEqual(
        { status: mine()[0]?.status, previous: mine()[0]?.previousStatus, source: mine()[0]?.source },
        { status: 'SUCCEEDED', previous: undefined, source: 'webhook' },
      );

      const [event] = (await client.events.list({ orderNo: payment.orderNo })).items;
      outcomes.length = 0;
      await client.events.resend(event?.eventId as string);
      assert.equal(await deliverAll(platform), 1);
      assert.deepEqual(outcomes, [{ kind: 'duplicate', eventId: event?.eventId }]);
      assert.equal(mine().length, 1, 'onUpdate ran once');
      const [again] = (await client.events.list({ orderNo: payment.orderNo })).items;
      assert.equal(again?.attempts, 2);
      assert.equal(again?.deliveryStatus, 'delivered');
      assert.equal(await inbox.status({ orderType: 'PAYMENT', orderNo: payment.orderNo }), 'SUCCEEDED');
    });

    it('settles a conflict with local state through the query API: the confirmed status wins', async () => {
      // Local state says FAILED (say, a stale poll); the platform's event says SUCCEEDED.
      const payment = await client.payments.create({
        merchantOrderNo: `M-${randomUUID().slice(0, 18)}`,
        currency: 'BRL',
        amount: '10.00',
        paymentMethod: { code: 'PIX' },
        webhookUrl: `${inboxUrl}/webhook/payment`,
      });
      const order = {
        orderType: 'PAYMENT' as const,
        orderNo: payment.orderNo,
        merchantOrderNo: payment.merchantOrderNo,
      };
      await inbox.recordStatus(order, 'FAILED');
      outcomes.length = 0;
      await client.sandbox.simulatePayment({ orderNo: payment.orderNo, status: 'SUCCEEDED' });
      await deliverAll(platform);
      assert.equal(outcomes.length, 1);
      const [outcome] = outcomes;
      assert.equal(outcome?.kind, 'confirmed');
      assert.ok(outcome?.kind === 'confirmed');
      assert.equal(outcome.update.previousStatus, 'FAILED');
      assert.equal(outcome.update.status, 'SUCCEEDED');
      assert.equal(outcome.update.source, 'query');
      assert.equal(outcome.update.confirmed?.status, 'SUCCEEDED');
      assert.equal(await inbox.status(order), 'SUCCEEDED');
    });

    it('keeps REFUNDED when the payout SUCCEEDED event arrives late, after the query API confirms it', async () => {
      const funding = await client.payments.create({
        merchantOrderNo: `M-${randomUUID().slice(0, 18)}`,
        currency: 'BRL',
        amount: '500.00',
        paymentMethod: { code: 'PIX' },
        webhookUrl: `${recorder.url}/webhook/payment`,
      });
      await client.sandbox.simulatePayment({ orderNo: funding.orderNo, status: 'SUCCEEDED' });
      const payout = await client.payouts.create({
        merchantOrderNo: `W-${randomUUID().slice(0, 18)}`,
        currency: 'BRL',
        amount: '50.00',
        webhookUrl: `${recorder.url}/webhook/payout`,
        payee: { name: 'Rui Costa', accountNumber: '998877' },
      });
      await client.sandbox.simulatePayout({ orderNo: payout.orderNo, status: 'SUCCEEDED' });
      await client.sandbox.returnPayout({ orderNo: payout.orderNo });
      const before = recorder.received.length;
      await deliverAll(platform);
      const deliveries = recorder.received.slice(before).filter((r) => r.target === '/webhook/payout');
      const statusOf = (r: Recorded) => (JSON.parse(r.body.toString('utf8')) as { status: string }).status;
      const succeeded = deliveries.find((r) => statusOf(r) === 'SUCCEEDED');
      const refunded = deliveries.find((r) => statusOf(r) === 'REFUNDED');
      assert.ok(succeeded && refunded, 'both payout events were delivered');

      // Delivered out of order to the inbox: REFUNDED first, then the late SUCCEEDED.
      outcomes.length = 0;
      assert.equal((await replay(refunded, inboxUrl)).status, 200);
      assert.equal((await replay(succeeded, inboxUrl)).status, 200);
      assert.deepEqual(
        outcomes.map((o) => o.kind),
        ['applied', 'kept'],
      );
      assert.deepEqual(outcomes[1], {
        kind: 'kept',
        eventId: JSON.parse(succeeded.body.toString('utf8')).eventId,
        status: 'REFUNDED',
      });
      const order = { orderType: 'PAYOUT' as const, orderNo: payout.orderNo };
      assert.equal(await inbox.status(order), 'REFUNDED');
      assert.deepEqual(
        updates.filter((u) => u.orderNo === payout.orderNo).map((u) => u.status),
        ['REFUNDED'],
      );
    });
  });
});
