/**
 * The `pix-api` channel end to end (issue 26, items 1, 2 and 4), on PGlite and PostgreSQL:
 * `paygate-pix` (packages/pix-simulator, its sources through tsx) as its own process — HTTPS
 * with client certificates only, OAuth tokens that expire after 2 s, callbacks over plain http
 * to the platform as an edge terminating their mTLS would forward them — and the platform with
 * its workers (poller, webhook dispatcher) serving the simulator's own channels-file entry, the
 * merchant's webhooks verified with the SDK.
 *
 * One simulator and one platform per database; the cases share them, in order (the last moves
 * the platform's clock for expiry, then a production platform takes the simulator's webhook).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nodeWebhookHandler, type WebhookEvent, WebhookVerifier } from '@paygate/merchant';
import { Cob } from '@paygate/pix';
import { parseChannels } from '../src/channel-settings.js';
import { ChannelUnavailable } from '../src/modules/channels/connector.js';
import { pixApiConnector, pixTxid } from '../src/modules/channels/pix-api/pix-api.js';
import { PixApiClient } from '../src/modules/channels/pix-api/client.js';
import { reconcileReceipts } from '../src/modules/reconciliation/service.js';
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
import { eventsOf, postingsOf } from './money-harness.js';
import { control, type Simulator, sleep, startSimulator, stopSimulator, waitFor } from './pix-sim-harness.js';
import { RECEIVER_CERT } from './tls-fixture.js';

const ADMIN = { authorization: 'Bearer test-admin-token-0123456789abcdef', 'content-type': 'application/json' };

interface World {
  readonly sim: Simulator;
  readonly platform: TestPlatform;
  readonly merchant: TestMerchant;
  readonly receiver: { url: string; events: WebhookEvent[]; refused: unknown[]; server: Server };
  /** The provider's view of a charge, asked over mTLS with the simulator's own settings. */
  readonly cob: (txid: string) => Promise<Cob | undefined>;
  readonly client: PixApiClient;
}

interface PaymentData {
  orderNo: string;
  merchantOrderNo: string;
  status: string;
  paidAmount?: string;
  channelTradeNo?: string;
  payer?: { name?: string; documentNumber?: string };
  cashierUrl: string;
  payerAction: { kind: string; url: string; pixCode?: string };
}

async function startWorld(database: 'pglite' | 'postgres'): Promise<World> {
  const sim = await startSimulator();
  const channels = join(sim.dir, 'channels.json');
  writeFileSync(channels, JSON.stringify({ channels: [{ ...sim.channel, name: 'pix', timeoutMs: 1_500 }] }));
  const platform = await startTestPlatform({
    database,
    env: {
      PAYGATE_CHANNELS: channels,
      PAYGATE_WORKERS: 'true',
      PAYGATE_CHANNEL_POLL_AFTER: '1s',
      PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s',
    },
    expectErrorLogs: true,
  });
  const merchant = await createMerchant(platform, 'Loja Pix');
  const events: WebhookEvent[] = [];
  const refused: unknown[] = [];
  const handler = nodeWebhookHandler({
    verifier: new WebhookVerifier({ webhookKeys: merchant.webhookKeys }),
    onEvent: (event) => void events.push(event),
    onError: (error) => void refused.push(error),
  });
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    events,
    refused,
    server,
  };
  const [settings] = parseChannels({ channels: [{ ...sim.channel, name: 'probe' }] });
  if (settings?.kind !== 'pix-api') throw new Error('the simulator printed no pix-api channel');
  const client = new PixApiClient(settings, Date.now, () => {});
  const cob = async (txid: string) => {
    const answer = await client.call('probe', 'GET', `/cob/${txid}`);
    return answer.status === 200 ? Cob.parse(answer.json) : undefined;
  };
  return { sim, platform, merchant, receiver, cob, client };
}

async function create(world: World, overrides: Record<string, unknown> = {}) {
  return post<PaymentData>(
    world.platform,
    world.merchant,
    '/api/v1/payments',
    paymentInput({ webhookUrl: world.receiver.url, ...overrides }),
  );
}

async function query(world: World, orderNo: string): Promise<PaymentData> {
  const answer = await get<PaymentData>(world.platform, world.merchant, '/api/v1/payments', `orderNo=${orderNo}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data as PaymentData;
}

const waitStatus = (world: World, orderNo: string, status: string) =>
  waitFor(async () => {
    const payment = await query(world, orderNo);
    return payment.status === status ? payment : undefined;
  }, `${orderNo} ${status}`);

/** The order's charge id (its txid while open) as the platform keeps it. */
async function txidOf(world: World, orderNo: string): Promise<string> {
  const result = await world.platform.services.db.query<{ channel_trade_no: string }>(
    'SELECT channel_trade_no FROM payments WHERE order_no = $1',
    [orderNo],
  );
  return result.rows[0]?.channel_trade_no as string;
}

async function hintsAbout(world: World, orderNo: string) {
  const result = await world.platform.services.db.query<{ outcome: string; detail: string | null }>(
    'SELECT outcome, detail FROM channel_notifications WHERE order_no = $1 ORDER BY id',
    [orderNo],
  );
  return result.rows;
}

for (const database of databases()) {
  describe(`pix-api through paygate-pix (${database})`, () => {
    let world: World;
    before(async () => {
      world = await startWorld(database);
    });
    after(async () => {
      world.receiver.server.close();
      await world.client.close();
      await world.platform.close();
      await stopSimulator(world.sim);
      rmSync(world.sim.dir, { recursive: true, force: true });
    });

    it('create → PUT /cob before the answer; the payer pays; callback → GET /cob → SUCCEEDED with the payer; one verified webhook', async () => {
      const created = await create(world, { amount: '125.50' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const payment = created.body.data as PaymentData;
      const txid = await txidOf(world, payment.orderNo);
      assert.match(txid, /^[a-zA-Z0-9]{26,35}$/);
      // The charge exists at the provider, with the order's amount and expiry; its code is the payer's.
      const cob = await world.cob(txid);
      assert.equal(cob?.status, 'ATIVA');
      assert.equal(cob?.valor.original, '125.50');
      assert.deepEqual(payment.payerAction, {
        kind: 'pix',
        url: `${world.platform.config.publicUrl}/cashier/${payment.orderNo}`,
        pixCode: cob?.pixCopiaECola,
      });
      assert.equal(payment.cashierUrl, payment.payerAction.url);

      // The payer page: the copy-and-paste code, a copy button (its script allowed by hash) and a QR code.
      const page = await fetch(payment.cashierUrl);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.ok(html.includes(`>${cob?.pixCopiaECola?.replaceAll('&', '&amp;')}</textarea>`), 'the code as text');
      assert.match(html, /data-testid="pix-qr"[^>]*><svg [^>]*viewBox/);
      assert.match(
        html,
        /<button class="copy" type="button" data-copy="pix-code" data-copied="Copied">Copy the code<\/button>/,
      );
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'sha256-[A-Za-z0-9+/=]+'/);
      assert.doesNotMatch(html, /name="action" value="pay"/, 'no sandbox pay button: the payer pays at the bank');

      await control(world.sim, 'pay', { txid, payer: { name: 'Maria Silva', cpf: '01234567890' } });
      const paid = await waitStatus(world, payment.orderNo, 'SUCCEEDED');
      assert.equal(paid.paidAmount, '125.50');
      assert.match(paid.channelTradeNo ?? '', /^E[a-zA-Z0-9]{31}$/, 'the endToEndId');
      assert.deepEqual(paid.payer, { name: 'Maria Silva', documentNumber: '01234567890' });
      // Anyone holding the link sees the payer's name and a masked CPF only, in the payer's language.
      const paidPage = await fetch(payment.cashierUrl, { headers: { 'accept-language': 'pt-BR' } });
      const paidHtml = await paidPage.text();
      assert.match(paidHtml, /<dd data-testid="payer">Maria Silva · \*\*\*\.345\.678-\*\*<\/dd>/);
      assert.ok(!paidHtml.includes('01234567890'), 'the whole CPF is not on the payer page');
      assert.match(paidHtml, /Pagamento recebido/);
      // The callback was recorded raw and settled from GET /cob.
      const hints = await waitFor(async () => {
        const rows = await hintsAbout(world, payment.orderNo);
        return rows.length > 0 && rows.every((r) => r.outcome !== 'received') ? rows : undefined;
      }, 'the callback settled');
      assert.ok(
        hints.some((h) => h.outcome === 'applied' || h.outcome === 'unchanged'),
        JSON.stringify(hints),
      );
      const webhook = await waitFor(
        () => world.receiver.events.find((e) => e.orderNo === payment.orderNo),
        'the merchant webhook',
      );
      assert.equal(webhook.status, 'SUCCEEDED');
      assert.deepEqual(world.receiver.refused, []);
      assert.equal((await eventsOf(world.platform, payment.orderNo)).length, 1);
      assert.equal((await postingsOf(world.platform, payment.orderNo)).length, 1);
    });

    it('a repeated create is the same order and charge; a cnpj payer and no payer map as the provider says', async () => {
      const input = paymentInput({ webhookUrl: world.receiver.url, amount: '10.00' });
      const first = await post<PaymentData>(world.platform, world.merchant, '/api/v1/payments', input);
      const again = await post<PaymentData>(world.platform, world.merchant, '/api/v1/payments', input);
      assert.equal(again.status, 200);
      assert.equal(again.body.data?.orderNo, first.body.data?.orderNo);
      assert.deepEqual(again.body.data?.payerAction, first.body.data?.payerAction);
      const orderNo = first.body.data?.orderNo as string;
      await control(world.sim, 'pay', { txid: await txidOf(world, orderNo), payer: { cnpj: '00012345000190' } });
      assert.deepEqual((await waitStatus(world, orderNo, 'SUCCEEDED')).payer, { documentNumber: '00012345000190' });

      const anonymous = (await create(world, { amount: '11.00' })).body.data as PaymentData;
      await control(world.sim, 'pay', { txid: await txidOf(world, anonymous.orderNo) });
      assert.equal((await waitStatus(world, anonymous.orderNo, 'SUCCEEDED')).payer, undefined);
    });

    it('a forged callback for an unpaid charge changes nothing, and ids of no open charge are not asked about', async () => {
      const payment = (await create(world, { amount: '12.00' })).body.data as PaymentData;
      const txid = await txidOf(world, payment.orderNo);
      const forged = (txids: string[]) =>
        fetch(`${world.platform.url}/channels/pix/notifications/pix`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            pix: txids.map((t) => ({
              endToEndId: `E${randomUUID().replaceAll('-', '').slice(0, 31)}`,
              txid: t,
              valor: '12.00',
              horario: new Date().toISOString(),
              pagador: { nome: 'Forger', cpf: '99999999999' },
            })),
          }),
        });
      const answers = await Promise.all(Array.from({ length: 20 }, () => forged([txid])));
      for (const answer of answers) assert.equal(answer.status, 200);
      await waitFor(async () => {
        const rows = await hintsAbout(world, payment.orderNo);
        return rows.length > 0 && rows.every((r) => r.outcome !== 'received');
      }, 'the forged hints settled');
      const after = await query(world, payment.orderNo);
      assert.equal(after.status, 'PENDING');
      assert.equal(after.payer, undefined);
      // An id no open payment has: recorded, nothing asked, nothing changed.
      const unknown = 'A'.repeat(32);
      assert.equal((await forged([unknown])).status, 200);
      const unasked = await waitFor(async () => {
        const rows = await world.platform.services.db.query<{ outcome: string; detail: string | null }>(
          `SELECT outcome, detail FROM channel_notifications WHERE channel = 'pix' AND position($1 in convert_from(body, 'UTF8')) > 0`,
          [unknown],
        );
        const row = rows.rows[0];
        return row && row.outcome !== 'received' ? row : undefined;
      }, 'the unknown hint settled');
      assert.deepEqual(unasked, { outcome: 'ignored', detail: 'no open charge of this platform named' });
      const notJson = await fetch(`${world.platform.url}/channels/pix/notifications/pix`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"pix": "nope"}',
      });
      assert.equal(notJson.status, 400);
      const cancel = await post(world.platform, world.merchant, '/api/v1/payments/cancel', {
        orderNo: payment.orderNo,
      });
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    });

    it('a dropped callback is recovered by polling; duplicates give one webhook and one posting', async () => {
      await control(world.sim, 'notifications', { mode: 'drop' });
      const dropped = (await create(world, { amount: '13.00' })).body.data as PaymentData;
      await control(world.sim, 'pay', { txid: await txidOf(world, dropped.orderNo), payer: { name: 'Ana' } });
      const settled = await waitStatus(world, dropped.orderNo, 'SUCCEEDED');
      assert.deepEqual(settled.payer, { name: 'Ana' });
      assert.deepEqual(await hintsAbout(world, dropped.orderNo), [], 'no callback came: polling found it');

      await control(world.sim, 'notifications', { mode: 'duplicate' });
      const twice = (await create(world, { amount: '14.00' })).body.data as PaymentData;
      await control(world.sim, 'pay', { txid: await txidOf(world, twice.orderNo) });
      await waitStatus(world, twice.orderNo, 'SUCCEEDED');
      await waitFor(async () => {
        const state = (await (await fetch(`${world.sim.controlUrl}/control/state`)).json()) as {
          pendingCallbacks: number;
        };
        return state.pendingCallbacks === 0;
      }, 'both callbacks delivered');
      await waitFor(() => world.receiver.events.find((e) => e.orderNo === twice.orderNo), 'the webhook');
      assert.equal((await eventsOf(world.platform, twice.orderNo)).length, 1);
      assert.equal((await postingsOf(world.platform, twice.orderNo)).length, 1);
      await control(world.sim, 'notifications', { mode: 'normal' });
    });

    it('a merchant cancel removes the charge first; a payer who paid first wins', async () => {
      const canceled = (await create(world, { amount: '15.00' })).body.data as PaymentData;
      const txid = await txidOf(world, canceled.orderNo);
      const answer = await post<PaymentData>(world.platform, world.merchant, '/api/v1/payments/cancel', {
        orderNo: canceled.orderNo,
      });
      assert.equal(answer.body.data?.status, 'CANCELED');
      assert.equal((await world.cob(txid))?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');

      await control(world.sim, 'notifications', { mode: 'drop' });
      const raced = (await create(world, { amount: '16.00' })).body.data as PaymentData;
      await control(world.sim, 'pay', { txid: await txidOf(world, raced.orderNo), payer: { name: 'Rui' } });
      const late = await post(world.platform, world.merchant, '/api/v1/payments/cancel', { orderNo: raced.orderNo });
      assert.equal(late.status, 409);
      assert.equal(late.body.msg, 'INVALID_STATE');
      const won = await query(world, raced.orderNo);
      assert.equal(won.status, 'SUCCEEDED');
      assert.deepEqual(won.payer, { name: 'Rui' });
      await control(world.sim, 'notifications', { mode: 'normal' });
    });

    it('REMOVIDA_PELO_PSP → FAILED through `paygate channels sync`', async () => {
      const payment = (await create(world, { amount: '17.00' })).body.data as PaymentData;
      await control(world.sim, 'remove', { txid: await txidOf(world, payment.orderNo) });
      const sync = await fetch(`${world.platform.url}/admin/v1/channels/sync`, {
        method: 'POST',
        headers: ADMIN,
        body: JSON.stringify({ orderNo: payment.orderNo }),
      });
      const body = (await sync.json()) as { data: { channelStatus: string; after: string } };
      assert.equal(sync.status, 200, JSON.stringify(body));
      assert.equal(body.data.channelStatus, 'FAILED');
      assert.equal(body.data.after, 'FAILED');
    });

    it('the provider down or slow: 503 CHANNEL_UNAVAILABLE, nothing created; the charge made before a timeout is found again', async () => {
      const before = await count(world.platform, 'payments');
      await control(world.sim, 'availability', { mode: 'unavailable' });
      const down = await create(world, { amount: '18.00' });
      assert.equal(down.status, 503);
      assert.equal(down.body.msg, 'CHANNEL_UNAVAILABLE');
      await control(world.sim, 'availability', { mode: 'refuse' });
      const refusing = await create(world, { amount: '18.00' });
      assert.equal(refusing.status, 503);
      await control(world.sim, 'availability', { mode: 'up' });
      assert.equal(await count(world.platform, 'payments'), before);

      await control(world.sim, 'slow', { ms: 2_500 });
      const input = paymentInput({ webhookUrl: world.receiver.url, amount: '19.00' });
      const slow = await post(world.platform, world.merchant, '/api/v1/payments', input);
      assert.equal(slow.status, 503);
      assert.equal(await count(world.platform, 'payments'), before);
      await control(world.sim, 'slow', { ms: 0 });
      const retried = await post<PaymentData>(world.platform, world.merchant, '/api/v1/payments', input);
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      const txid = await txidOf(world, retried.body.data?.orderNo as string);
      // Hashed from the merchant's identity of the order, not from the (new) orderNo: the same txid.
      const owner = await world.platform.services.db.query<{ merchant_id: bigint }>(
        'SELECT merchant_id FROM payments WHERE order_no = $1',
        [retried.body.data?.orderNo],
      );
      const merchantRef = `${owner.rows[0]?.merchant_id}/${input.merchantOrderNo}`;
      assert.equal(txid, pixTxid(world.platform.config.publicUrl, 'pix', merchantRef));
      const cob = await world.cob(txid);
      assert.equal(cob?.status, 'ATIVA');
      assert.equal(retried.body.data?.payerAction.pixCode, cob?.pixCopiaECola);
    });

    it('a token that expires or is revoked is replaced without a failed request; concurrent callers share one fetch', async () => {
      const [settings] = parseChannels({ channels: [{ ...world.sim.channel, name: 'pix' }] });
      if (settings?.kind !== 'pix-api') throw new Error('no pix-api settings');
      const calls: string[] = [];
      const connector = pixApiConnector(settings, {
        publicUrl: world.platform.config.publicUrl,
        metrics: { channelCall: (_channel, operation, outcome) => void calls.push(`${operation}:${outcome}`) },
        now: Date.now,
      });
      try {
        const order = {
          orderNo: 'P202611250000000001',
          channelTradeNo: await txidOf(world, (await create(world)).body.data?.orderNo as string),
        };
        await Promise.all(Array.from({ length: 8 }, () => connector.queryPayment(order)));
        assert.equal(calls.filter((c) => c === 'token:ok').length, 1, calls.join());
        await control(world.sim, 'tokens/revoke', {});
        await Promise.all(Array.from({ length: 8 }, () => connector.queryPayment(order)));
        assert.equal(calls.filter((c) => c === 'token:ok').length, 2, calls.join());
        // Past its 2 s life the token is replaced before it is refused.
        await sleep(2_100);
        await connector.queryPayment(order);
        assert.equal(calls.filter((c) => c === 'token:ok').length, 3, calls.join());
        assert.deepEqual(
          calls.filter((c) => !c.endsWith(':ok')),
          [],
          'no call failed',
        );
      } finally {
        await connector.close?.();
      }
    });

    it('a provider certificate not signed by caFile is refused', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'paygate-pix-ca-'));
      const caFile = join(dir, 'other-ca.pem');
      writeFileSync(caFile, RECEIVER_CERT);
      const [settings] = parseChannels({ channels: [{ ...world.sim.channel, name: 'pix', caFile }] });
      if (settings?.kind !== 'pix-api') throw new Error('no pix-api settings');
      const connector = pixApiConnector(settings, {
        publicUrl: 'http://127.0.0.1:1',
        metrics: undefined,
        now: Date.now,
      });
      try {
        await assert.rejects(connector.prepare?.() ?? Promise.resolve(), (error: unknown) => {
          assert.ok(error instanceof ChannelUnavailable);
          const code = (error.cause as { code?: string } | undefined)?.code ?? '';
          assert.match(code, /CERT|SIGNATURE|ISSUER/, code);
          return true;
        });
      } finally {
        await connector.close?.();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a provider answering nonsense is a channel error, never a wrong state', async () => {
      // A provider on the simulator's certificate (so caFile trusts it) whose answers are not the API Pix's.
      const read = (name: string) => readFileSync(join(world.sim.tlsDir, name), 'utf8');
      const answers: Record<string, [number, unknown]> = {
        'POST /oauth/token': [200, { access_token: 't', token_type: 'Bearer', expires_in: 600 }],
        'PUT /cob': [201, { txid: 'x', status: 'PAGA', valor: 10 }],
        'GET /cob': [200, { status: 'CONCLUIDA', txid: 'not-this-one' }],
        'PATCH /cob': [200, '<html>'],
      };
      const server = createHttpsServer({ cert: read('server.pem'), key: read('server-key.pem') }, (req, res) => {
        const route = `${req.method} ${(req.url ?? '').replace(/^\/api\/v2/, '').replace(/\/[^/]*$/, '') || '/'}`;
        const [status, body] = answers[route] ?? answers[`${req.method} ${req.url}`] ?? [404, {}];
        req.resume();
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const [settings] = parseChannels({
        channels: [{ ...world.sim.channel, name: 'pix', baseUrl: `${base}/api/v2`, tokenUrl: `${base}/oauth/token` }],
      });
      if (settings?.kind !== 'pix-api') throw new Error('no pix-api settings');
      const connector = pixApiConnector(settings, {
        publicUrl: 'http://127.0.0.1:1',
        metrics: undefined,
        now: Date.now,
      });
      const order = { orderNo: 'P202611250000000009', channelTradeNo: 'B'.repeat(32) };
      try {
        const unavailable = (error: unknown) => error instanceof ChannelUnavailable;
        await assert.rejects(
          connector.createPayment({
            orderNo: order.orderNo,
            merchantRef: '1/M-nonsense',
            currency: 'BRL',
            amount: '10.00',
            method: 'PIX',
            expiresAt: Date.now() + 60_000,
          }),
          unavailable,
        );
        await assert.rejects(connector.queryPayment(order), unavailable);
        await assert.rejects(connector.cancelPayment?.(order) ?? Promise.resolve(), unavailable);
      } finally {
        await connector.close?.();
        server.close();
      }
    });

    it('`paygate reconcile` for the kind: the day’s received Pix from GET /pix match the books', async () => {
      const connector = world.platform.services.channels.get('pix');
      const day = new Date().toISOString().slice(0, 10);
      const from = Date.parse(`${day}T00:00:00.000Z`);
      const receipts = await connector?.receivedBetween?.(from, from + 86_400_000);
      assert.ok(receipts && receipts.length >= 6, `received ${receipts?.length}`);
      const report = await reconcileReceipts(world.platform.services.db, 'pix', day, receipts);
      assert.deepEqual(report.mismatches, []);
      assert.equal(report.matched, receipts.length);
    });

    it('ATIVA past its expiry: removed at the provider first, then EXPIRED', async () => {
      const payment = (await create(world, { amount: '20.00' })).body.data as PaymentData;
      const txid = await txidOf(world, payment.orderNo);
      world.platform.advance(25 * 3_600_000);
      await waitStatus(world, payment.orderNo, 'EXPIRED');
      assert.equal((await world.cob(txid))?.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    });

    it('production mode routes BRL/PIX to the channel and serves its payer page only', async () => {
      const channels = join(world.sim.dir, 'channels.json');
      const production = await startTestPlatform({
        database,
        env: { PAYGATE_ENV: 'production', PAYGATE_CHANNELS: channels, PAYGATE_WORKERS: 'false' },
      });
      try {
        const merchant = await createMerchant(production, 'Loja');
        const created = await post<PaymentData>(
          production,
          merchant,
          '/api/v1/payments',
          paymentInput({ webhookUrl: 'https://merchant.example/webhook' }),
        );
        assert.equal(created.status, 200, JSON.stringify(created.body));
        assert.equal(created.body.data?.payerAction.kind, 'pix');
        const row = await production.services.db.query<{ channel: string }>(
          'SELECT channel FROM payments WHERE order_no = $1',
          [created.body.data?.orderNo],
        );
        assert.equal(row.rows[0]?.channel, 'pix');
        const page = await fetch(created.body.data?.cashierUrl as string, { headers: { 'accept-language': 'pt-BR' } });
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.match(html, /data-testid="pix-code"/);
        assert.match(html, /<html lang="pt-BR">/);
        assert.match(html, /Código Pix copia e cola/);
        assert.match(html, /R\$\u00a0125,50/);
        const posted = await fetch(created.body.data?.cashierUrl as string, { method: 'POST' });
        assert.equal(posted.status, 404);

        // Paid at the provider with a CPF, settled by the operator's sync: the production payer page
        // shows the name and the masked CPF; the authenticated API keeps the whole number.
        const orderNo = created.body.data?.orderNo as string;
        const txid = (
          await production.services.db.query<{ channel_trade_no: string }>(
            'SELECT channel_trade_no FROM payments WHERE order_no = $1',
            [orderNo],
          )
        ).rows[0]?.channel_trade_no as string;
        await control(world.sim, 'pay', { txid, payer: { name: 'João Souza', cpf: '98765432100' } });
        const synced = await fetch(`${production.url}/admin/v1/channels/sync`, {
          method: 'POST',
          headers: ADMIN,
          body: JSON.stringify({ orderNo }),
        });
        assert.equal(synced.status, 200, await synced.clone().text());
        const read = await get<PaymentData>(production, merchant, '/api/v1/payments', `orderNo=${orderNo}`);
        assert.deepEqual(read.body.data?.payer, { name: 'João Souza', documentNumber: '98765432100' });
        const paidPage = await (
          await fetch(created.body.data?.cashierUrl as string, { headers: { 'accept-language': 'es-MX,es;q=0.9' } })
        ).text();
        assert.match(paidPage, /<dd data-testid="payer">João Souza · \*\*\*\.654\.321-\*\*<\/dd>/);
        assert.ok(!paidPage.includes('98765432100'), 'the whole CPF is not on the production payer page');
        assert.match(paidPage, /Pago recibido/);
        const boleto = await post(
          production,
          merchant,
          '/api/v1/payments',
          paymentInput({ webhookUrl: 'https://merchant.example/webhook', paymentMethod: { code: 'BOLETO' } }),
        );
        assert.equal(boleto.status, 400);
      } finally {
        await production.close();
      }
    });
  });
}
