/**
 * Channels end to end (issue 13): real processes on loopback, on PGlite and PostgreSQL.
 *
 * - `paygate-psp` (packages/psp-simulator, its sources through tsx: the program `npx paygate-psp`
 *   runs once built) as its own process, with its own data directory and PSP_SECRET;
 * - the platform (`npm start`'s main.ts) as its own process in production mode:
 *   PAYGATE_ENV=production, PAYGATE_MASTER_KEY_FILE, PAYGATE_CHANNELS (one psp-sim channel `sim`),
 *   a short PAYGATE_CHANNEL_POLL_AFTER, PAYGATE_WEBHOOK_ALLOW_PRIVATE=true so the merchant's
 *   loopback receiver is allowed, and NODE_EXTRA_CA_CERTS trusting that receiver's test
 *   certificate (production webhooks are https only);
 * - the merchant: onboarded through the operator API, calling the platform with the real SDK
 *   (`@paygate/merchant`) and receiving webhooks on an https server verifying them with the SDK;
 * - PAYGATE_PUBLIC_URL points at a small loopback relay in front of the platform, so the
 *   simulator's notifications pass through it: the tests see every notification on the wire, and
 *   the relay can hold the platform's answers (the simulator is then killed mid-notification).
 *
 * One simulator, one platform and one merchant per database; the cases share them.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  nodeWebhookHandler,
  PaygateApiError,
  PaygateClient,
  type Payment,
  type WebhookEvent,
  WebhookVerifier,
} from '@paygate/merchant';
import { generateSigningKey } from '@paygate/protocol';
import { sign } from '@paygate/psp-simulator/auth';
import { databases, type DatabaseKind } from './harness.js';
import {
  productionStorage,
  PSP_SIMULATOR,
  runCli,
  type Spawned,
  spawnNode,
  spawnPlatform,
  stopSpawned,
  waitFor,
  waitForLine,
} from './spawned.js';
import { freePort } from './sshd-fixture.js';
import { RECEIVER_CERT, RECEIVER_KEY } from './tls-fixture.js';

const SECRET = 'e2e-psp-secret-0123456789abcdef';
const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';
const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
/** PAYGATE_CHANNEL_POLL_AFTER: short, so dropped notifications are recovered within the test. */
const POLL_AFTER_MS = 3_000;
/** PAYGATE_PAYMENT_EXPIRY: a payment nobody pays expires while the suite runs. */
const EXPIRY_MS = 20_000;
/** The amount of the one payment whose channel answers after the platform's timeout (no other case uses it). */
const ABANDONED_AMOUNT = '31.31';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- processes

/** Log lines at error level or worse (a fault of ours). */
function errorLines(proc: Spawned): string[] {
  return proc
    .output()
    .split('\n')
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        return false;
      }
    });
}

// ---------------------------------------------------------------- the relay in front of the platform

interface Relayed {
  readonly target: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** The platform's answer, once it came. */
  answer?: { status: number; text: string };
}

/**
 * PAYGATE_PUBLIC_URL: forwards every request to the platform as is. In `hold` mode it still
 * forwards (the platform applies the notification) but never answers the caller.
 */
async function startRelay() {
  const seen: Relayed[] = [];
  const held = new Set<ServerResponse>();
  const relay = {
    url: '',
    upstream: '',
    /**
     * Notifications about this order reference are passed on but their answers held back from the
     * simulator (which then waits, with everything queued behind). Only the one order's: another
     * notification arriving meanwhile (the expiring payment's, say) must not be held as well.
     */
    holdReference: undefined as string | undefined,
    seen,
    server: undefined as Server | undefined,
  };
  relay.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
            headers[name] = value;
        }
        const entry: Relayed = { target: req.url ?? '/', headers, body: Buffer.concat(chunks) };
        seen.push(entry);
        const hold = relay.holdReference !== undefined && referenceOf(entry) === relay.holdReference;
        try {
          const upstream = await fetch(relay.upstream + entry.target, {
            method: req.method ?? 'POST',
            headers,
            ...(entry.body.length > 0 ? { body: new Uint8Array(entry.body) } : {}),
          });
          entry.answer = { status: upstream.status, text: await upstream.text() };
        } catch (error) {
          entry.answer = { status: 502, text: String(error) };
        }
        if (hold) {
          held.add(res);
          return;
        }
        res.writeHead(entry.answer.status, { 'content-type': 'application/json' });
        res.end(entry.answer.text);
      })();
    });
  });
  await new Promise<void>((resolve) => relay.server?.listen(0, '127.0.0.1', resolve));
  relay.url = `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`;
  return {
    relay,
    /** Notifications seen for an event id. */
    deliveriesOf: (eventId: string) => seen.filter((entry) => eventIdOf(entry) === eventId),
    close: async () => {
      for (const res of held) res.destroy();
      relay.server?.closeAllConnections();
      await new Promise<void>((resolve) => relay.server?.close(() => resolve()));
    },
  };
}

function eventIdOf(entry: Relayed): string | undefined {
  try {
    return (JSON.parse(entry.body.toString('utf8')) as { id?: string }).id;
  } catch {
    return undefined;
  }
}

function referenceOf(entry: Relayed): string | undefined {
  try {
    return (JSON.parse(entry.body.toString('utf8')) as { object?: { reference?: string } }).object?.reference;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- the world of one database

interface World {
  readonly database: DatabaseKind;
  readonly dir: string;
  readonly pspPort: number;
  readonly pspUrl: string;
  readonly pspDataDir: string;
  psp: Spawned;
  platform: Spawned | undefined;
  platformUrl: string;
  readonly platformEnv: Record<string, string>;
  readonly relay: Awaited<ReturnType<typeof startRelay>>;
  readonly receiver: { url: string; events: WebhookEvent[]; refused: unknown[]; close: () => Promise<void> };
  readonly shop: PaygateClient;
  readonly dropDb: (() => Promise<void>) | undefined;
  /** A payment created at the start that nobody pays: it expires while the suite runs. */
  readonly expiring: Payment;
}

async function startPsp(port: number, dataDir: string): Promise<Spawned> {
  const proc = spawnNode(PSP_SIMULATOR, {
    HOST: '127.0.0.1',
    PSP_PORT: String(port),
    PSP_SECRET: SECRET,
    PSP_DATA_DIR: dataDir,
    PSP_TICK_MS: '25',
    PSP_RETRY_BASE_MS: '100',
    PSP_RETRY_MAX_MS: '400',
    PSP_NOTIFY_TIMEOUT_MS: '30000',
    LOG_LEVEL: 'info',
  });
  await waitForLine(proc, /paygate-psp listening/);
  return proc;
}

async function admin<T>(world: World, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${world.platformUrl}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as { data: T };
  assert.equal(response.status, 200, JSON.stringify(json));
  return json.data;
}

async function startWorld(database: DatabaseKind): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-channels-e2e-'));
  const pspPort = await freePort();
  const pspUrl = `http://127.0.0.1:${pspPort}`;
  const pspDataDir = join(dir, 'psp');
  const psp = await startPsp(pspPort, pspDataDir);
  const relay = await startRelay();
  const channels = join(dir, 'channels.json');
  writeFileSync(
    channels,
    JSON.stringify({
      channels: [
        {
          name: 'sim',
          kind: 'psp-sim',
          methods: [{ currency: 'BRL', code: 'PIX' }],
          payouts: ['BRL'],
          baseUrl: pspUrl,
          secret: SECRET,
          timeoutMs: 1_500,
        },
      ],
    }),
  );
  const certFile = join(dir, 'receiver-cert.pem');
  writeFileSync(certFile, RECEIVER_CERT);
  // As docs/channels.md's walkthrough keeps it: a file only its owner can read.
  const masterKeyFile = join(dir, 'live-master.key');
  writeFileSync(masterKeyFile, `${MASTER_KEY}\n`, { mode: 0o600 });
  const storage = await productionStorage(database, dir);
  const platformEnv: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    PAYGATE_ENV: 'production',
    PAYGATE_MASTER_KEY_FILE: masterKeyFile,
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
    PAYGATE_CHANNELS: channels,
    PAYGATE_CHANNEL_POLL_AFTER: `${POLL_AFTER_MS / 1000}s`,
    PAYGATE_PAYMENT_EXPIRY: `${EXPIRY_MS / 1000}s`,
    PAYGATE_PUBLIC_URL: relay.relay.url,
    PAYGATE_SHUTDOWN_DRAIN: '0',
    PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s',
    NODE_EXTRA_CA_CERTS: certFile,
    LOG_LEVEL: 'info',
    ...storage.env,
  };
  const started = await spawnPlatform(platformEnv);
  relay.relay.upstream = started.url;

  // The merchant: onboarded through the operator API; its own key never leaves this process.
  const key = generateSigningKey();
  const partial = { platformUrl: started.url } as World;
  const onboarding = await admin<{
    accessKey: string;
    bodyKey: { keyId: string; publicKey: string };
    webhookKeys: { keyid: string; publicKey: string }[];
  }>(partial, 'POST', '/merchants', { name: 'E2E shop', publicKey: Buffer.from(key.publicKey).toString('base64') });
  assert.match(onboarding.accessKey, /^ak_live_/);
  const shop = new PaygateClient({
    baseUrl: started.url,
    accessKey: onboarding.accessKey,
    privateKey: key.secretKey,
    bodyKey: onboarding.bodyKey,
    retryDelayMs: 50,
  });

  // The merchant's webhook receiver: https, verifying every delivery with the SDK.
  const events: WebhookEvent[] = [];
  const refused: unknown[] = [];
  const verifier = new WebhookVerifier({ webhookKeys: onboarding.webhookKeys });
  const handler = nodeWebhookHandler({
    verifier,
    onEvent: (event) => void events.push(event),
    onError: (error) => void refused.push(error),
  });
  const https = createHttpsServer({ key: RECEIVER_KEY, cert: RECEIVER_CERT }, (req, res) => void handler(req, res));
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  const receiver = {
    url: `https://127.0.0.1:${(https.address() as AddressInfo).port}/webhooks/paygate`,
    events,
    refused,
    close: async () => {
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    },
  };
  const expiring = await shop.payments.create(paymentOf(receiver.url, '12.00'));
  return {
    database,
    dir,
    pspPort,
    pspUrl,
    pspDataDir,
    psp,
    platform: started,
    platformUrl: started.url,
    platformEnv,
    relay,
    receiver,
    shop,
    dropDb: storage.drop,
    expiring,
  };
}

async function stopWorld(world: World | undefined): Promise<void> {
  if (!world) return;
  await stopSpawned(world.platform);
  await stopSpawned(world.psp);
  await world.relay.close();
  await world.receiver.close();
  await world.dropDb?.();
  rmSync(world.dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- merchant and payer side

function paymentOf(webhookUrl: string, amount = '125.50') {
  return {
    merchantOrderNo: `E2E-${randomUUID().slice(0, 18)}`,
    currency: 'BRL',
    amount,
    paymentMethod: { code: 'PIX' },
    webhookUrl,
  } as const;
}

function payoutOf(webhookUrl: string, amount = '100.00') {
  return {
    merchantOrderNo: `E2EW-${randomUUID().slice(0, 18)}`,
    currency: 'BRL',
    amount,
    webhookUrl,
    payee: { name: 'João Souza', accountNumber: '000123456789', bankCode: '341', documentNumber: '01234567890' },
  } as const;
}

/** A test control of the simulator (plain JSON POST). */
async function control(world: World, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${world.pspUrl}/control${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function mustControl(world: World, path: string, body: unknown): Promise<void> {
  const answer = await control(world, path, body);
  assert.equal(answer.status, 200, `control ${path}: ${JSON.stringify(answer.body)}`);
}

/** A signed call to the simulator's own API, as the platform's connector makes it. */
async function pspApi(world: World, method: 'GET' | 'POST', path: string, body?: unknown) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const headers = sign(SECRET, { method, path, body: text }, { now: Date.now(), nonce: randomUUID() });
  const response = await fetch(`${world.pspUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: text }),
  });
  const raw = await response.text();
  let json: unknown = raw;
  try {
    json = JSON.parse(raw);
  } catch {
    // CSV
  }
  return { status: response.status, json: json as Record<string, unknown>, text: raw };
}

/** Webhooks the receiver verified for an order. */
const webhooksOf = (world: World, orderNo: string) => world.receiver.events.filter((e) => e.orderNo === orderNo);

async function webhook(world: World, orderNo: string, status: string, timeoutMs = 20_000): Promise<WebhookEvent> {
  return waitFor(
    () => webhooksOf(world, orderNo).find((e) => e.status === status),
    `the ${status} webhook of ${orderNo}`,
    timeoutMs,
  );
}

async function brl(world: World) {
  const [balance] = await world.shop.balances({ currency: 'BRL' });
  assert.ok(balance);
  return { available: Number(balance.available), reserved: Number(balance.reserved) };
}

async function ledgerOf(world: World, orderNo: string) {
  const entries = [];
  for await (const entry of world.shop.ledger.iterateEntries({ currency: 'BRL' })) {
    if (entry.orderNo === orderNo) entries.push(entry);
  }
  return entries;
}

/** The postings (one per transaction kind) of an order, sorted. */
async function postingKinds(world: World, orderNo: string) {
  return [...new Set((await ledgerOf(world, orderNo)).map((e) => `${e.transactionKind}`))].sort();
}

interface NotificationRecord {
  eventId: string;
  orderNo: string | null;
  outcome: string;
  id: string;
}

async function notifications(world: World): Promise<NotificationRecord[]> {
  return admin<NotificationRecord[]>(world, 'GET', '/channels/sim/notifications');
}

/** A payment paid at the channel (control), its SUCCEEDED webhook received. */
async function paidPayment(world: World, amount: string): Promise<string> {
  const payment = await world.shop.payments.create(paymentOf(world.receiver.url, amount));
  await mustControl(world, '/payments/complete', { reference: payment.orderNo, status: 'SUCCEEDED' });
  await webhook(world, payment.orderNo, 'SUCCEEDED');
  return payment.orderNo;
}

async function apiError(call: Promise<unknown>): Promise<PaygateApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof PaygateApiError) return error;
    throw error;
  }
  assert.fail('the call succeeded');
}

// ---------------------------------------------------------------- the cases

for (const database of databases()) {
  describe(`channels end to end (${database})`, { timeout: 600_000 }, () => {
    let world: World;
    before(async () => {
      world = await startWorld(database);
    });
    after(async () => {
      const errors = world?.platform ? errorLines(world.platform) : [];
      await stopWorld(world);
      assert.deepEqual(errors, [], 'the platform logged no error-level line');
    });

    it('a PIX payment reaches SUCCEEDED with its payer and one webhook', async () => {
      const payment = await world.shop.payments.create(paymentOf(world.receiver.url));
      assert.equal(payment.status, 'PENDING');
      const action = payment.payerAction;
      assert.equal(action?.kind, 'pix');
      assert.ok(action?.kind === 'pix' && action.pixCode.length > 20, 'a PIX copy-and-paste code');
      assert.equal(payment.cashierUrl, action.url);
      assert.match(payment.cashierUrl, new RegExp(`^${world.pspUrl}/pay/ch_[a-f0-9]{24}$`));
      const chargeId = payment.cashierUrl.split('/').pop() as string;

      // The payer opens the channel's hosted page and pays there, giving name and document.
      const page = await fetch(payment.cashierUrl);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /125\.50/);
      const paid = await fetch(`${payment.cashierUrl}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ name: 'Ana Lima', documentNumber: '01234567890' }).toString(),
        redirect: 'manual',
      });
      assert.equal(paid.status, 303);

      const event = await webhook(world, payment.orderNo, 'SUCCEEDED');
      assert.equal(event.orderType, 'PAYMENT');
      assert.ok(event.orderType === 'PAYMENT' && event.status === 'SUCCEEDED');
      assert.deepEqual(event.payer, { name: 'Ana Lima', documentNumber: '01234567890' });
      assert.equal(event.channelTradeNo, chargeId);
      const queried = await world.shop.payments.query({ orderNo: payment.orderNo });
      assert.equal(queried.status, 'SUCCEEDED');
      assert.equal(queried.paidAmount, '125.50');
      assert.deepEqual(queried.payer, { name: 'Ana Lima', documentNumber: '01234567890' });
      assert.equal(queried.channelTradeNo, chargeId);
      // One webhook, one event, one posting.
      await sleep(300);
      assert.equal(webhooksOf(world, payment.orderNo).length, 1);
      const listed = await world.shop.events.list({ orderNo: payment.orderNo });
      assert.equal(listed.items.length, 1);
      assert.equal(listed.items[0]?.deliveryStatus, 'delivered');
      assert.deepEqual(await postingKinds(world, payment.orderNo), ['payment']);
      assert.deepEqual(world.receiver.refused, []);
    });

    it('a declined payment ends FAILED', async () => {
      const payment = await world.shop.payments.create(paymentOf(world.receiver.url, '33.00'));
      await mustControl(world, '/payments/complete', { reference: payment.orderNo, status: 'FAILED' });
      const event = await webhook(world, payment.orderNo, 'FAILED');
      assert.equal(event.orderType, 'PAYMENT');
      const queried = await world.shop.payments.query({ orderNo: payment.orderNo });
      assert.equal(queried.status, 'FAILED');
      assert.equal(queried.payer, undefined);
      assert.deepEqual(await ledgerOf(world, payment.orderNo), []);
      // Final at the channel too: a later completion is refused there.
      assert.equal(
        (await control(world, '/payments/complete', { reference: payment.orderNo, status: 'SUCCEEDED' })).status,
        409,
      );
    });

    it('a create the channel answers too late: 503 with nothing created, the same create again served; the late charge is abandoned', async () => {
      // The channel takes 2.5 s, the connector waits 1.5 s: the charge is made there after the
      // platform removed the order and answered CHANNEL_UNAVAILABLE.
      const input = paymentOf(world.receiver.url, ABANDONED_AMOUNT);
      await mustControl(world, '/slow', { ms: 2_500 });
      let late: PaygateApiError;
      try {
        late = await apiError(world.shop.payments.create(input, { retries: 0 }));
      } finally {
        await mustControl(world, '/slow', { ms: 0 });
      }
      assert.equal(late.status, 503);
      assert.equal(late.msg, 'CHANNEL_UNAVAILABLE');
      // The channel made the charge once its wait was over, with no one left to hear the answer.
      await waitForLine(world.psp, /"url":"\/v1\/charges","callerGone":true,"msg":"slow call served"/, 10_000);
      const none = await apiError(world.shop.payments.query({ merchantOrderNo: input.merchantOrderNo }));
      assert.equal(none.status, 404, 'nothing created');
      const again = await world.shop.payments.create(input);
      assert.equal(again.payerAction?.kind, 'pix');
      await mustControl(world, '/payments/complete', { reference: again.orderNo, status: 'SUCCEEDED' });
      await webhook(world, again.orderNo, 'SUCCEEDED');
      // The late charge now exists at the channel under the removed order's number; the
      // reconciliation below finds it expired there and lists it as abandoned, not as a mismatch.
    });

    it('a canceled payment is withdrawn at its channel; a payer who paid first wins; a channel down refuses the cancel', async () => {
      const payment = await world.shop.payments.create(paymentOf(world.receiver.url, '21.00'));
      const canceled = await world.shop.payments.cancel({ orderNo: payment.orderNo });
      assert.equal(canceled.status, 'CANCELED');
      await webhook(world, payment.orderNo, 'CANCELED');
      const charge = await pspApi(world, 'GET', `/v1/charges?reference=${payment.orderNo}`);
      assert.equal(charge.json.status, 'canceled', 'the channel was told');
      // Nothing can be paid there any more: the hosted page refuses, and so does the control.
      const page = await fetch(`${payment.cashierUrl}/pay`, { method: 'POST', body: '', redirect: 'manual' });
      assert.equal(page.status, 303);
      assert.equal((await pspApi(world, 'GET', `/v1/charges?reference=${payment.orderNo}`)).json.status, 'canceled');
      assert.equal(
        (await control(world, '/payments/complete', { reference: payment.orderNo, status: 'SUCCEEDED' })).status,
        409,
      );

      // The payer paid at the channel, its notification not yet here: the cancel learns it and loses.
      await mustControl(world, '/notifications', { mode: 'drop' });
      const raced = await world.shop.payments.create(paymentOf(world.receiver.url, '22.00'));
      try {
        await mustControl(world, '/payments/complete', {
          reference: raced.orderNo,
          status: 'SUCCEEDED',
          payer: { name: 'Carla Reis' },
        });
      } finally {
        await mustControl(world, '/notifications', { mode: 'normal' });
      }
      const lost = await apiError(world.shop.payments.cancel({ orderNo: raced.orderNo }));
      assert.equal(lost.status, 409);
      assert.equal(lost.msg, 'INVALID_STATE');
      const won = await world.shop.payments.query({ orderNo: raced.orderNo });
      assert.equal(won.status, 'SUCCEEDED');
      assert.deepEqual(won.payer, { name: 'Carla Reis' });
      await webhook(world, raced.orderNo, 'SUCCEEDED');
      assert.deepEqual(await postingKinds(world, raced.orderNo), ['payment']);

      // The channel down: the cancel is refused and nothing changes.
      const kept = await world.shop.payments.create(paymentOf(world.receiver.url, '23.00'));
      await stopSpawned(world.psp, 'SIGKILL');
      try {
        const down = await apiError(world.shop.payments.cancel({ orderNo: kept.orderNo }, { retries: 0 }));
        assert.equal(down.status, 503);
        assert.equal(down.msg, 'CHANNEL_UNAVAILABLE');
      } finally {
        world.psp = await startPsp(world.pspPort, world.pspDataDir);
      }
      assert.equal((await world.shop.payments.query({ orderNo: kept.orderNo })).status, 'PENDING');
      assert.equal((await pspApi(world, 'GET', `/v1/charges?reference=${kept.orderNo}`)).json.status, 'open');
      assert.equal((await world.shop.payments.cancel({ orderNo: kept.orderNo })).status, 'CANCELED');
    });

    it('a payout reaches SUCCEEDED, then is returned to REFUNDED and credited once', async () => {
      await paidPayment(world, '500.00');
      const start = await brl(world);
      const payout = await world.shop.payouts.create(payoutOf(world.receiver.url, '100.00'));
      const total = 100 + Number(payout.fee);
      const confirmed = await world.shop.payouts.confirm({ orderNo: payout.orderNo });
      assert.equal(confirmed.status, 'PROCESSING');
      const transfer = await pspApi(world, 'GET', `/v1/transfers?reference=${payout.orderNo}`);
      assert.equal(transfer.status, 200, 'registered at the channel when the confirm answered');
      assert.equal(transfer.json.status, 'queued');
      assert.equal(confirmed.channelTradeNo, transfer.json.id);

      await mustControl(world, '/payouts/complete', { reference: payout.orderNo, status: 'SUCCEEDED' });
      await webhook(world, payout.orderNo, 'SUCCEEDED');
      const afterSent = await brl(world);
      assert.equal(Math.round((start.available - afterSent.available) * 100), total * 100);

      await mustControl(world, '/payouts/return', { reference: payout.orderNo });
      const refunded = await webhook(world, payout.orderNo, 'REFUNDED');
      assert.ok(refunded.status === 'REFUNDED');
      assert.equal(refunded.refundAmount, '100.00');
      const returned = await pspApi(world, 'GET', `/v1/transfers?reference=${payout.orderNo}`);
      assert.equal(refunded.refundNo, returned.json.returnId);
      // The channel refuses a second return; the principal came back once, the fee stays.
      assert.equal((await control(world, '/payouts/return', { reference: payout.orderNo })).status, 409);
      await sleep(300);
      const end = await brl(world);
      assert.equal(Math.round((end.available - start.available) * 100), -Number(payout.fee) * 100);
      assert.equal(end.reserved, start.reserved);
      assert.deepEqual(await postingKinds(world, payout.orderNo), ['payout_reserve', 'payout_settle', 'refund']);
      assert.equal(webhooksOf(world, payout.orderNo).length, 2);
      const view = await world.shop.payouts.query({ orderNo: payout.orderNo });
      assert.equal(view.status, 'REFUNDED');
    });

    it('duplicate notifications give one event and one posting', async () => {
      await mustControl(world, '/notifications', { mode: 'duplicate' });
      try {
        const payment = await world.shop.payments.create(paymentOf(world.receiver.url, '41.00'));
        await mustControl(world, '/payments/complete', { reference: payment.orderNo, status: 'SUCCEEDED' });
        await webhook(world, payment.orderNo, 'SUCCEEDED');
        const delivered = await waitFor(() => {
          const sent = world.relay.relay.seen.filter((e) => referenceOf(e) === payment.orderNo && e.answer);
          return sent.length >= 2 ? sent : undefined;
        }, 'both copies of the notification');
        assert.equal(new Set(delivered.map(eventIdOf)).size, 1, 'one event id, sent twice');
        assert.deepEqual(
          delivered.map((d) => JSON.parse(d.answer?.text ?? '{}').data?.outcome),
          ['applied', 'duplicate'],
        );
        await sleep(300);
        assert.equal(webhooksOf(world, payment.orderNo).length, 1);
        assert.equal((await world.shop.events.list({ orderNo: payment.orderNo })).items.length, 1);
        assert.equal((await ledgerOf(world, payment.orderNo)).filter((e) => e.account === 'available').length, 1);
        const recorded = (await notifications(world)).filter((n) => n.orderNo === payment.orderNo);
        assert.equal(recorded.length, 1);
      } finally {
        await mustControl(world, '/notifications', { mode: 'normal' });
      }
    });

    it('dropped notifications are recovered by polling (short PAYGATE_CHANNEL_POLL_AFTER)', async () => {
      await paidPayment(world, '300.00');
      await mustControl(world, '/notifications', { mode: 'drop' });
      try {
        const payment = await world.shop.payments.create(paymentOf(world.receiver.url, '52.00'));
        const payout = await world.shop.payouts.create(payoutOf(world.receiver.url, '20.00'));
        await world.shop.payouts.confirm({ orderNo: payout.orderNo });
        const seenBefore = world.relay.relay.seen.length;
        await mustControl(world, '/payments/complete', {
          reference: payment.orderNo,
          status: 'SUCCEEDED',
          payer: { name: 'Bruno Dias' },
        });
        await mustControl(world, '/payouts/complete', { reference: payout.orderNo, status: 'FAILED' });
        const paidEvent = await webhook(world, payment.orderNo, 'SUCCEEDED', 4 * POLL_AFTER_MS + 10_000);
        assert.ok(paidEvent.orderType === 'PAYMENT');
        assert.deepEqual(paidEvent.payer, { name: 'Bruno Dias' });
        await webhook(world, payout.orderNo, 'FAILED', 4 * POLL_AFTER_MS + 10_000);
        assert.equal(world.relay.relay.seen.length, seenBefore, 'no notification was sent');
        assert.equal((await world.shop.payouts.query({ orderNo: payout.orderNo })).status, 'FAILED');
        assert.deepEqual(await postingKinds(world, payout.orderNo), ['payout_release', 'payout_reserve']);
        assert.deepEqual(await postingKinds(world, payment.orderNo), ['payment']);

        // A payout sent, then returned days later (here: once its SUCCEEDED is in): the return's
        // notification is dropped too, and polling still finds it.
        const returned = await world.shop.payouts.create(payoutOf(world.receiver.url, '25.00'));
        await world.shop.payouts.confirm({ orderNo: returned.orderNo });
        await mustControl(world, '/payouts/complete', { reference: returned.orderNo, status: 'SUCCEEDED' });
        await webhook(world, returned.orderNo, 'SUCCEEDED', 4 * POLL_AFTER_MS + 10_000);
        await mustControl(world, '/payouts/return', { reference: returned.orderNo });
        const refund = await webhook(world, returned.orderNo, 'REFUNDED', 8 * POLL_AFTER_MS + 10_000);
        assert.ok(refund.status === 'REFUNDED');
        assert.equal(refund.refundAmount, '25.00');
        assert.deepEqual(await postingKinds(world, returned.orderNo), ['payout_reserve', 'payout_settle', 'refund']);
        assert.equal(world.relay.relay.seen.length, seenBefore, 'still no notification was sent');
      } finally {
        await mustControl(world, '/notifications', { mode: 'normal' });
      }
    });

    it('notifications released in reverse order end in the right final state', async () => {
      await paidPayment(world, '200.00');
      const start = await brl(world);
      const payout = await world.shop.payouts.create(payoutOf(world.receiver.url, '60.00'));
      await world.shop.payouts.confirm({ orderNo: payout.orderNo });
      // Quickly, well inside PAYGATE_CHANNEL_POLL_AFTER, so the notifications (not polling) decide.
      await mustControl(world, '/notifications', { mode: 'reverse' });
      await mustControl(world, '/payouts/complete', { reference: payout.orderNo, status: 'SUCCEEDED' });
      await mustControl(world, '/payouts/return', { reference: payout.orderNo });
      await mustControl(world, '/notifications', { mode: 'normal' });
      await webhook(world, payout.orderNo, 'REFUNDED');
      const arrived = await waitFor(() => {
        const sent = world.relay.relay.seen.filter((e) => referenceOf(e) === payout.orderNo && e.answer);
        return sent.length >= 2 ? sent : undefined;
      }, 'both notifications');
      const statuses = arrived.map(
        (e) => (JSON.parse(e.body.toString()) as { object: { status: string } }).object.status,
      );
      assert.deepEqual(statuses, ['returned', 'sent'], 'the return arrived first');
      // The late "sent" (SUCCEEDED) did not overwrite REFUNDED; the return was credited once.
      await sleep(300);
      const view = await world.shop.payouts.query({ orderNo: payout.orderNo });
      assert.equal(view.status, 'REFUNDED');
      assert.deepEqual(await postingKinds(world, payout.orderNo), ['payout_reserve', 'payout_settle', 'refund']);
      const end = await brl(world);
      assert.equal(Math.round((start.available - end.available) * 100), Math.round(Number(payout.fee) * 100));
      assert.deepEqual(
        webhooksOf(world, payout.orderNo)
          .map((e) => e.status)
          .sort(),
        ['REFUNDED', 'SUCCEEDED'],
      );
    });

    it('forged, tampered and replayed notifications are 401 and change nothing', async () => {
      const paid = await paidPayment(world, '15.00');
      const accepted = world.relay.relay.seen.find((e) => referenceOf(e) === paid && e.answer?.status === 200);
      assert.ok(accepted);
      const target = await world.shop.payments.create(paymentOf(world.receiver.url, '16.00'));
      const before = await notifications(world);
      const path = '/channels/sim/notifications';
      const send = (headers: Record<string, string>, body: string | Buffer) =>
        fetch(`${world.platformUrl}${path}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        });
      const authHeaders = (headers: Record<string, string>) =>
        Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('psp-')));
      const forgedBody = accepted.body
        .toString('utf8')
        .replaceAll(paid, target.orderNo)
        .replace(/"evt_[^"]+"/, '"evt_forged"');

      const attempts: [string, Response][] = [
        // The accepted notification again, byte for byte: its nonce is spent.
        ['replayed', await send(authHeaders(accepted.headers), accepted.body)],
        // Its headers over another body (the paid charge now names the unpaid order).
        ['tampered', await send(authHeaders(accepted.headers), forgedBody)],
        // Signed, but not with the channel's secret.
        [
          'forged',
          await send(
            sign(
              'not-the-secret-0123456789',
              { method: 'POST', path, body: forgedBody },
              {
                now: Date.now(),
                nonce: randomUUID(),
              },
            ),
            forgedBody,
          ),
        ],
        // The right secret, a timestamp ten minutes old.
        [
          'stale',
          await send(
            sign(
              SECRET,
              { method: 'POST', path, body: forgedBody },
              { now: Date.now() - 600_000, nonce: randomUUID() },
            ),
            forgedBody,
          ),
        ],
        ['unsigned', await send({}, forgedBody)],
      ];
      for (const [what, response] of attempts) {
        assert.equal(response.status, 401, what);
        assert.deepEqual(await response.json(), { msg: 'UNAUTHORIZED' }, what);
      }
      assert.equal((await world.shop.payments.query({ orderNo: target.orderNo })).status, 'PENDING');
      assert.equal((await world.shop.payments.query({ orderNo: paid })).status, 'SUCCEEDED');
      // Nothing recorded (other orders' genuine notifications may arrive meanwhile).
      const afterwards = await notifications(world);
      assert.deepEqual(
        afterwards.filter((n) => n.orderNo === target.orderNo || n.orderNo === paid || n.eventId === 'evt_forged'),
        before.filter((n) => n.orderNo === paid),
      );
      assert.equal(webhooksOf(world, target.orderNo).length, 0);
      // Leave nothing open for the later cases (an expiry during the reconciliation would race it).
      await world.shop.payments.cancel({ orderNo: target.orderNo });
    });

    it('production with a channel: routing, refusal of unrouted methods, the sandbox helpers absent', async () => {
      const routed = await world.shop.payments.create(paymentOf(world.receiver.url, '9.90'));
      assert.equal(routed.payerAction?.kind, 'pix');
      assert.equal((await pspApi(world, 'GET', `/v1/charges?reference=${routed.orderNo}`)).status, 200);
      const refusals: [Record<string, unknown>, string][] = [
        [{ paymentMethod: { code: 'BOLETO' } }, 'paymentMethod.code'],
        [{ currency: 'MXN', paymentMethod: { code: 'SPEI' } }, 'currency'],
      ];
      for (const [overrides, field] of refusals) {
        const error = await apiError(
          world.shop.payments.create({ ...paymentOf(world.receiver.url), ...overrides } as never),
        );
        assert.equal(error.status, 400);
        assert.equal(error.msg, 'VALIDATION_FAILED');
        assert.equal(error.fieldErrors[0]?.field, field);
      }
      const payoutRefused = await apiError(
        world.shop.payouts.create({ ...payoutOf(world.receiver.url), currency: 'USD' } as never),
      );
      assert.equal(payoutRefused.status, 400);
      assert.equal(payoutRefused.fieldErrors[0]?.field, 'currency');
      // The sandbox channel's surface does not exist in production.
      const helper = await apiError(
        world.shop.sandbox.simulatePayment({ orderNo: routed.orderNo, status: 'SUCCEEDED' }),
      );
      assert.equal(helper.status, 404);
      const payoutHelper = await apiError(
        world.shop.sandbox.simulatePayout({ orderNo: 'W00000000000000000000', status: 'SUCCEEDED' }),
      );
      assert.equal(payoutHelper.status, 404);
      assert.equal((await fetch(`${world.platformUrl}/cashier/${routed.orderNo}`)).status, 404);
      assert.equal((await world.shop.payments.query({ orderNo: routed.orderNo })).status, 'PENDING');
      await world.shop.payments.cancel({ orderNo: routed.orderNo });
    });

    it('the simulator SIGKILLed mid-notification and restarted: nothing lost, nothing applied twice', async () => {
      const first = await world.shop.payments.create(paymentOf(world.receiver.url, '71.00'));
      const second = await world.shop.payments.create(paymentOf(world.receiver.url, '72.00'));
      // The platform applies the first notification, but its answer never reaches the simulator.
      world.relay.relay.holdReference = first.orderNo;
      await mustControl(world, '/payments/complete', { reference: first.orderNo, status: 'SUCCEEDED' });
      await mustControl(world, '/payments/complete', { reference: second.orderNo, status: 'SUCCEEDED' });
      const held = await waitFor(
        () => world.relay.relay.seen.find((e) => referenceOf(e) === first.orderNo && e.answer),
        'the first notification applied',
      );
      assert.equal(held.answer?.status, 200);
      assert.equal(
        world.relay.relay.seen.filter((e) => referenceOf(e) === second.orderNo).length,
        0,
        'the second waits behind it',
      );
      await stopSpawned(world.psp, 'SIGKILL');
      world.relay.relay.holdReference = undefined;
      assert.equal((await world.shop.payments.query({ orderNo: second.orderNo })).status, 'PENDING');

      world.psp = await startPsp(world.pspPort, world.pspDataDir);
      await webhook(world, second.orderNo, 'SUCCEEDED');
      const firstEvent = eventIdOf(held) as string;
      const again = await waitFor(() => {
        const copies = world.relay.deliveriesOf(firstEvent).filter((e) => e.answer);
        return copies.length >= 2 ? copies : undefined;
      }, 'the first notification delivered again');
      assert.equal(JSON.parse(again[1]?.answer?.text ?? '{}').data?.outcome, 'duplicate');
      await sleep(300);
      for (const orderNo of [first.orderNo, second.orderNo]) {
        assert.equal((await world.shop.payments.query({ orderNo })).status, 'SUCCEEDED');
        assert.equal(webhooksOf(world, orderNo).length, 1, orderNo);
        assert.equal((await world.shop.events.list({ orderNo })).items.length, 1, orderNo);
        assert.deepEqual(await postingKinds(world, orderNo), ['payment']);
        assert.equal((await ledgerOf(world, orderNo)).length, 1, orderNo);
      }
      const recorded = (await notifications(world)).filter((n) => n.eventId === firstEvent);
      assert.equal(recorded.length, 1);
      assert.equal(recorded[0]?.outcome, 'applied');
      // The simulator's own state survived: the charges are paid there.
      assert.equal((await pspApi(world, 'GET', `/v1/charges?reference=${second.orderNo}`)).json.status, 'paid');
    });

    it('a payout confirmed while its channel is down: refused with nothing changed; an answer lost in a timeout is found by polling', async () => {
      await paidPayment(world, '400.00');
      const payout = await world.shop.payouts.create(payoutOf(world.receiver.url, '30.00'));
      const start = await brl(world);
      // Down: connection refused.
      await stopSpawned(world.psp, 'SIGKILL');
      try {
        const refused = await apiError(world.shop.payouts.confirm({ orderNo: payout.orderNo }, { retries: 0 }));
        assert.equal(refused.status, 503);
        assert.equal(refused.msg, 'CHANNEL_UNAVAILABLE');
        const view = await world.shop.payouts.query({ orderNo: payout.orderNo });
        assert.equal(view.status, 'PENDING');
        assert.deepEqual(await brl(world), start, 'the reserve is as it was');
        // A payment create meets the same channel: refused, and no order is left behind.
        const input = paymentOf(world.receiver.url, '8.00');
        const createDown = await apiError(world.shop.payments.create(input, { retries: 0 }));
        assert.equal(createDown.status, 503);
        assert.equal(createDown.msg, 'CHANNEL_UNAVAILABLE');
        const missing = await apiError(world.shop.payments.query({ merchantOrderNo: input.merchantOrderNo }));
        assert.equal(missing.msg, 'ORDER_NOT_FOUND');
      } finally {
        world.psp = await startPsp(world.pspPort, world.pspDataDir);
      }
      // Polling asks the channel, which never got it: the payout stays PENDING, ready for a retry.
      await sleep(POLL_AFTER_MS + 3_000);
      assert.equal((await world.shop.payouts.query({ orderNo: payout.orderNo })).status, 'PENDING');
      assert.equal((await pspApi(world, 'GET', `/v1/transfers?reference=${payout.orderNo}`)).status, 404);
      const retried = await world.shop.payouts.confirm({ orderNo: payout.orderNo });
      assert.equal(retried.status, 'PROCESSING');
      await mustControl(world, '/payouts/complete', { reference: payout.orderNo, status: 'SUCCEEDED' });
      await webhook(world, payout.orderNo, 'SUCCEEDED');

      // Frozen: the request reaches the channel but the answer comes after the connector gave up.
      const lostAnswer = await world.shop.payouts.create(payoutOf(world.receiver.url, '31.00'));
      world.psp.child.kill('SIGSTOP');
      try {
        const timedOut = await apiError(world.shop.payouts.confirm({ orderNo: lostAnswer.orderNo }, { retries: 0 }));
        assert.equal(timedOut.status, 503);
      } finally {
        world.psp.child.kill('SIGCONT');
      }
      const transfer = await waitFor(async () => {
        const found = await pspApi(world, 'GET', `/v1/transfers?reference=${lostAnswer.orderNo}`);
        return found.status === 200 ? found.json : undefined;
      }, 'the channel to take the payout after all');
      assert.equal(transfer.status, 'queued');
      // The channel has it: polling moves the payout on as the channel says, and it is not lost.
      await waitFor(
        async () =>
          (await world.shop.payouts.query({ orderNo: lostAnswer.orderNo })).status === 'PROCESSING' ? true : undefined,
        'polling to find the payout at its channel',
        4 * POLL_AFTER_MS + 10_000,
      );
      assert.equal((await world.shop.payouts.confirm({ orderNo: lostAnswer.orderNo })).status, 'PROCESSING');
      await mustControl(world, '/payouts/complete', { reference: lostAnswer.orderNo, status: 'SUCCEEDED' });
      await webhook(world, lostAnswer.orderNo, 'SUCCEEDED');
      assert.deepEqual(await postingKinds(world, lostAnswer.orderNo), ['payout_reserve', 'payout_settle']);
    });

    it('a payment nobody pays expires, and its channel stops taking payment for it', async () => {
      const event = await webhook(world, world.expiring.orderNo, 'EXPIRED', EXPIRY_MS + 4 * POLL_AFTER_MS + 10_000);
      assert.equal(event.orderType, 'PAYMENT');
      const charge = await pspApi(world, 'GET', `/v1/charges?reference=${world.expiring.orderNo}`);
      assert.ok(['expired', 'canceled'].includes(charge.json.status as string), String(charge.json.status));
      assert.equal(
        (await control(world, '/payments/complete', { reference: world.expiring.orderNo, status: 'SUCCEEDED' })).status,
        409,
      );
      assert.equal((await world.shop.payments.query({ orderNo: world.expiring.orderNo })).status, 'EXPIRED');
    });

    it('notifications applied per second (printed)', async () => {
      const n = 60;
      const orders: string[] = [];
      for (let i = 0; i < n; i += 10) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(10, n - i) }, () =>
            world.shop.payments.create(paymentOf(world.receiver.url, '5.00')),
          ),
        );
        orders.push(...batch.map((p) => p.orderNo));
      }
      const started = performance.now();
      for (const orderNo of orders)
        await mustControl(world, '/payments/complete', { reference: orderNo, status: 'SUCCEEDED' });
      await waitFor(
        () => {
          const applied = new Set(
            world.relay.relay.seen
              .filter((e) => e.answer?.status === 200)
              .map(referenceOf)
              .filter((ref) => ref !== undefined && orders.includes(ref)),
          );
          return applied.size === n ? true : undefined;
        },
        'every notification applied',
        60_000,
      );
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `[channels e2e ${database}] ${n} notifications through paygate-psp applied in ${seconds.toFixed(2)} s: ` +
          `${(n / seconds).toFixed(1)} per second (the simulator delivers one at a time)`,
      );
      for (const orderNo of orders.slice(0, 3)) await webhook(world, orderNo, 'SUCCEEDED');
    });

    it("paygate reconcile on the simulator's settlement file finds each injected mismatch", async () => {
      // Every order above is final on both sides by now: the channel's own file matches the books.
      const date = new Date().toISOString().slice(0, 10);
      const file = join(world.pspDataDir, 'settlements', `${date}.csv`);
      // The charge made after the platform's timeout expires there like any unpaid one.
      const abandonedLine = await waitFor(
        async () => {
          const fetched = await pspApi(world, 'GET', `/v1/settlements/${date}.csv`);
          assert.equal(fetched.status, 200);
          return readFileSync(file, 'utf8')
            .split('\n')
            .find((line) => {
              const [type, , , status, , amount] = line.split(',');
              return type === 'charge' && amount === ABANDONED_AMOUNT && status !== 'paid';
            });
        },
        'the late charge expired at the channel',
        EXPIRY_MS + 10_000,
      );
      assert.equal(abandonedLine.split(',')[3], 'expired');
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      assert.ok(lines.length > 20, 'the day holds the orders of the cases above');

      // A charge the platform never made (paid at the channel), an altered amount, an altered
      // status, and a line missing from the file.
      const stranger = `X${Date.now()}`;
      const created = await pspApi(world, 'POST', '/v1/charges', {
        reference: stranger,
        amount: '7.00',
        currency: 'BRL',
        method: 'PIX',
        notifyUrl: `${world.relay.relay.url}/channels/sim/notifications`,
      });
      assert.equal(created.status, 201);
      await mustControl(world, '/payments/complete', { reference: stranger, status: 'SUCCEEDED' });
      await waitFor(
        () => world.relay.relay.seen.find((e) => referenceOf(e) === stranger && e.answer?.status === 200),
        'the stranger notification answered',
      );
      await pspApi(world, 'GET', `/v1/settlements/${date}.csv`);
      const withStranger = readFileSync(file, 'utf8').trim().split('\n');
      const paidLines = withStranger.filter((line) => line.startsWith('charge,') && line.split(',')[3] === 'paid');
      const [amountLine, statusLine, missingLine] = paidLines.filter((line) => !line.includes(stranger));
      assert.ok(amountLine && statusLine && missingLine);
      const refOf = (line: string) => line.split(',')[2] as string;
      const dirty = withStranger
        .filter((line) => line !== missingLine)
        .map((line) => {
          const cells = line.split(',');
          if (line === amountLine) cells[6] = '0.01';
          if (line === statusLine) cells[3] = 'declined';
          return cells.join(',');
        });
      const dirtyFile = join(world.dir, `dirty-${date}.csv`);
      writeFileSync(dirtyFile, `${dirty.join('\n')}\n`);

      // The real command line while the platform runs: on PostgreSQL it reads the database, on
      // the embedded one (the server process's) it goes through the running server, found by
      // the data directory's server.json.
      const storage: Record<string, string> =
        database === 'pglite'
          ? {
              PAYGATE_DATA_DIR: world.platformEnv.PAYGATE_DATA_DIR as string,
              PAYGATE_ADMIN_TOKEN: world.platformEnv.PAYGATE_ADMIN_TOKEN as string,
            }
          : { DATABASE_URL: world.platformEnv.DATABASE_URL as string };
      const cli = (...args: string[]) => runCli(args, { PAYGATE_MASTER_KEY: MASTER_KEY, ...storage }, 120_000);
      const clean = cli('reconcile', '--channel', 'sim', '--file', file);
      const cleanReport = cli('reconcile', '--channel', 'sim', '--file', file, '--json');
      const report = JSON.parse(cleanReport.stdout) as {
        matched: number;
        mismatches: { kind: string; type: string; reference: string }[];
        abandoned: { reference: string; theirs: string }[];
      };
      assert.deepEqual(
        report.mismatches,
        [{ kind: 'missing_in_books', type: 'charge', reference: stranger, theirs: 'paid' }],
        'only the charge the platform never made',
      );
      // The late charge is abandoned: its create failed and no money moved. (A machine slow
      // enough to time out other creates adds theirs, each as unpaid.)
      const late = abandonedLine.split(',')[2] as string;
      assert.ok(
        report.abandoned.some((a) => a.reference === late && a.theirs === 'expired'),
        JSON.stringify(report.abandoned),
      );
      assert.ok(report.abandoned.every((a) => ['expired', 'canceled', 'declined'].includes(a.theirs)));
      assert.match(clean.stdout, new RegExp(`abandoned +charge +${late} .*theirs=expired \\(not a mismatch\\)`));
      assert.equal(clean.status, 1, clean.stderr);
      assert.equal(report.matched + report.abandoned.length, withStranger.length - 2);

      const table = cli('reconcile', '--channel', 'sim', '--file', dirtyFile);
      assert.equal(table.status, 1, table.stderr);
      const json = cli('reconcile', '--channel', 'sim', '--file', dirtyFile, '--json');
      assert.equal(json.status, 1, json.stderr);
      const found = (JSON.parse(json.stdout) as typeof report).mismatches.map((m) => `${m.kind} ${m.reference}`).sort();
      assert.deepEqual(
        found,
        [
          `amount ${refOf(amountLine)}`,
          `missing_in_books ${stranger}`,
          `missing_in_file ${refOf(missingLine)}`,
          `status ${refOf(statusLine)}`,
        ].sort(),
      );
      for (const kind of ['amount', 'missing_in_books', 'missing_in_file', 'status']) {
        assert.match(table.stdout, new RegExp(`^${kind} `, 'm'));
      }
      assert.match(table.stdout, /4 mismatches/);
    });
  });
}
