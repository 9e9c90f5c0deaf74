/**
 * Channels (issue 13, items 1, 3 and 5): routing by currency and method, refusal of unrouted
 * creates in production, the sandbox helpers refusing channel-routed orders, the psp-sim
 * connector's signed calls, and notifications (authentication, idempotency, reordering, returns,
 * unknown orders). The channel is a small loopback fake PSP speaking the simulator's API and
 * authentication (`@paygate/psp-simulator/auth`); the end-to-end tests run the real simulator.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NonceCache, sign, verify } from '@paygate/psp-simulator/auth';
import { ConfigError, parseConfig } from '../src/config.js';
import {
  count,
  createMerchant,
  databases,
  freshPostgres,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestPlatform,
} from './harness.js';
import { balanceOf, eventsOf, payoutInput, postingsOf } from './money-harness.js';

const SECRET = 'psp-test-secret-0123456789';
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CLI = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const execFileAsync = promisify(execFile);

interface FakeOrder {
  id: string;
  reference: string;
  status: string;
  amount: string;
  currency: string;
  method?: string;
  payUrl?: string;
  pixCode?: string;
  boletoLine?: string;
  returnId?: string;
  /** The payer's way back to the shop, as the platform sent it. */
  returnUrl?: string;
}

const read = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

/** A fake PSP: the simulator's charge and transfer API, refusing unsigned calls; `down` answers 503. */
async function fakePsp() {
  const charges = new Map<string, FakeOrder>();
  const transfers = new Map<string, FakeOrder>();
  const nonces = new NonceCache();
  const state = { down: false, hang: false, refused: 0, calls: [] as string[] };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const body = await read(request);
      const reply = (status: number, json: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(json));
      };
      if (state.down) return reply(503, { error: 'down' });
      if (state.hang) return; // never answers (the connector's timeout decides)
      const path = request.url ?? '';
      const checked = verify(
        SECRET,
        { method: request.method ?? '', path, body, headers: request.headers },
        { now: Date.now(), nonceSeen: nonces.seen },
      );
      if (!checked.ok) {
        state.refused++;
        return reply(401, { error: 'unauthorized' });
      }
      state.calls.push(`${request.method} ${path}`);
      const input = body.length > 0 ? (JSON.parse(body.toString()) as Record<string, string>) : {};
      const url = new URL(path, 'http://psp');
      if (request.method === 'POST' && url.pathname === '/v1/charges') {
        const existing = charges.get(input.reference as string);
        if (existing) return reply(200, existing);
        const id = `ch_${randomUUID().slice(0, 8)}`;
        const charge: FakeOrder = {
          id,
          reference: input.reference as string,
          status: 'open',
          amount: input.amount as string,
          currency: input.currency as string,
          method: input.method as string,
          payUrl: `http://psp.example/pay/${id}`,
          ...(input.method === 'PIX' ? { pixCode: `00020126PIX${id}` } : {}),
          ...(input.method === 'BOLETO' ? { boletoLine: `34191.79001 ${id}` } : {}),
          ...(input.returnUrl !== undefined ? { returnUrl: input.returnUrl } : {}),
        };
        charges.set(charge.reference, charge);
        return reply(201, charge);
      }
      if (request.method === 'POST' && url.pathname === '/v1/transfers') {
        const existing = transfers.get(input.reference as string);
        if (existing) return reply(200, existing);
        const transfer: FakeOrder = {
          id: `tr_${randomUUID().slice(0, 8)}`,
          reference: input.reference as string,
          status: 'queued',
          amount: input.amount as string,
          currency: input.currency as string,
        };
        transfers.set(transfer.reference, transfer);
        return reply(201, transfer);
      }
      const cancel = /^\/v1\/transfers\/([^/]+)\/cancel$/.exec(url.pathname);
      if (request.method === 'POST' && cancel) {
        const transfer = [...transfers.values()].find((t) => t.id === cancel[1]);
        if (!transfer) return reply(404, { error: 'not found' });
        if (transfer.status !== 'queued') return reply(409, { error: 'not queued' });
        transfer.status = 'canceled';
        return reply(200, { status: 'canceled' });
      }
      const byId = /^\/v1\/(charges|transfers)\/([^/]+)$/.exec(url.pathname);
      if (request.method === 'GET' && byId) {
        const found = [...(byId[1] === 'charges' ? charges : transfers).values()].find((o) => o.id === byId[2]);
        return found ? reply(200, found) : reply(404, { error: 'not found' });
      }
      const reference = url.searchParams.get('reference');
      const found =
        url.pathname === '/v1/charges' && reference ? charges.get(reference) : transfers.get(reference ?? '');
      return found ? reply(200, found) : reply(404, { error: 'not found' });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    charges,
    transfers,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Writes a PAYGATE_CHANNELS file with one psp-sim channel `sim`. */
function channelsFile(baseUrl: string, extra: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-channels-'));
  const file = join(dir, 'channels.json');
  writeFileSync(
    file,
    JSON.stringify({
      channels: [
        {
          name: 'sim',
          kind: 'psp-sim',
          methods: [{ currency: 'BRL', code: 'PIX' }],
          payouts: ['BRL'],
          baseUrl,
          secret: SECRET,
          timeoutMs: 2_000,
          ...extra,
        },
      ],
    }),
  );
  return file;
}

interface NotifyOptions {
  secret?: string;
  now?: number;
  nonce?: string;
  /** Sends these bytes instead of the signed ones. */
  tampered?: string;
}

/** Sends a signed notification to the platform as the channel `sim` would. */
async function notify(platform: TestPlatform, event: unknown, options: NotifyOptions = {}) {
  const path = '/channels/sim/notifications';
  const text = JSON.stringify(event);
  const headers = sign(
    options.secret ?? SECRET,
    { method: 'POST', path, body: text },
    { now: options.now ?? platform.services.now(), nonce: options.nonce ?? randomUUID() },
  );
  const response = await fetch(platform.url + path, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: options.tampered ?? text,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers, text };
}

const chargeEvent = (charge: FakeOrder, changes: Record<string, unknown>, id = `evt_${randomUUID()}`) => ({
  id,
  type: 'charge.updated',
  object: { ...charge, ...changes, updatedAt: Date.now() },
});
const transferEvent = (transfer: FakeOrder, changes: Record<string, unknown>, id = `evt_${randomUUID()}`) => ({
  id,
  type: 'transfer.updated',
  object: { ...transfer, ...changes, updatedAt: Date.now() },
});

/** A payment of `amount` created through the API and routed to the fake PSP, with its charge there. */
async function chargeAt(
  psp: Awaited<ReturnType<typeof fakePsp>>,
  platform: TestPlatform,
  merchant: Awaited<ReturnType<typeof createMerchant>>,
  amount: string,
) {
  const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput({ amount }));
  const orderNo = created.body.data?.orderNo as string;
  return { orderNo, charge: psp.charges.get(orderNo) as FakeOrder };
}

/** What a channel sync answered, in a comparable order. */
const pick = (sync: { channelStatus: string | null; before: string; after: string; applied: boolean } | undefined) => [
  sync?.channelStatus,
  sync?.before,
  sync?.after,
  sync?.applied,
];

async function paymentRow(platform: TestPlatform, orderNo: string) {
  const result = await platform.services.db.query<{
    status: string;
    payer_name: string | null;
    channel: string | null;
  }>('SELECT status, payer_name, channel FROM payments WHERE order_no = $1', [orderNo]);
  return result.rows[0];
}

async function notificationsOf(platform: TestPlatform) {
  const result = await platform.services.db.query<{ event_id: string; outcome: string; order_no: string | null }>(
    'SELECT event_id, outcome, order_no FROM channel_notifications ORDER BY id',
  );
  return result.rows;
}

describe('PAYGATE_CHANNELS', () => {
  it('a bad file stops the start with one clear line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'paygate-channels-'));
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.json'), /PAYGATE_CHANNELS: cannot read .*missing\.json \(ENOENT\)/],
      [write('not-json.json', '{'), /PAYGATE_CHANNELS: .*not-json\.json is not JSON/],
      [write('kind.json', JSON.stringify({ channels: [{ name: 'a', kind: 'nope' }] })), /channels\.0\.kind/],
      [
        write(
          'currency.json',
          JSON.stringify({
            channels: [
              {
                name: 'a',
                kind: 'psp-sim',
                baseUrl: 'http://x',
                secret: SECRET,
                methods: [{ currency: 'XXX', code: 'PIX' }],
              },
            ],
          }),
        ),
        /channels\.0\.methods\.0: XXX is not a supported currency/,
      ],
      [
        write(
          'twice.json',
          JSON.stringify({
            channels: ['a', 'b'].map((name) => ({
              name,
              kind: 'psp-sim',
              baseUrl: 'http://x',
              secret: SECRET,
              methods: [{ currency: 'BRL', code: 'PIX' }],
            })),
          }),
        ),
        /BRL\/PIX is already served by a/,
      ],
      // The one URL rule (http/url.ts): an empty host the WHATWG parser would fill from the path.
      ...['http:///x', 'https:///x', 'http:x', 'http://@x/', 'ftp://x/'].map((baseUrl, i): [string, RegExp] => [
        write(`url-${i}.json`, JSON.stringify({ channels: [{ name: 'a', kind: 'psp-sim', baseUrl, secret: SECRET }] })),
        /channels\.0\.baseUrl: /,
      ]),
    ];
    for (const [file, message] of cases) {
      assert.throws(
        () => parseConfig({ PAYGATE_CHANNELS: file }),
        (error: unknown) =>
          error instanceof ConfigError && message.test(error.message) && !error.message.includes('\n'),
        file,
      );
    }
    const good = parseConfig({ PAYGATE_CHANNELS: channelsFile('http://127.0.0.1:9100/') });
    assert.equal(good.channels[0]?.name, 'sim');
  });
});

for (const database of databases()) {
  describe(`channels (${database})`, () => {
    it('routes by currency and method, registers at the channel, and the sandbox helpers refuse its orders', async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({ database, env: { PAYGATE_CHANNELS: channelsFile(psp.baseUrl) } });
      try {
        const merchant = await createMerchant(platform);
        const routed = await post<Record<string, unknown>>(platform, merchant, '/api/v1/payments', paymentInput());
        assert.equal(routed.status, 200, JSON.stringify(routed.body));
        const payment = routed.body.data as {
          orderNo: string;
          cashierUrl: string;
          payerAction: Record<string, string>;
        };
        const charge = psp.charges.get(payment.orderNo) as FakeOrder;
        assert.ok(charge, 'registered at the channel before the create answered');
        assert.equal(payment.cashierUrl, charge.payUrl);
        assert.deepEqual(payment.payerAction, { kind: 'pix', url: charge.payUrl, pixCode: charge.pixCode });
        assert.equal((await paymentRow(platform, payment.orderNo))?.channel, 'sim');
        assert.equal(charge.returnUrl, undefined, 'no returnUrl given, none sent');
        // The query answers the same payer action.
        const queried = await get<typeof payment>(platform, merchant, '/api/v1/payments', `orderNo=${payment.orderNo}`);
        assert.deepEqual(queried.body.data?.payerAction, payment.payerAction);

        // BOLETO is not served by `sim`: the built-in sandbox channel takes it (its cashier page).
        const boleto = await post<typeof payment>(
          platform,
          merchant,
          '/api/v1/payments',
          paymentInput({ paymentMethod: { code: 'BOLETO' } }),
        );
        assert.equal(boleto.body.data?.cashierUrl, `${platform.url}/cashier/${boleto.body.data?.orderNo}`);
        assert.deepEqual(boleto.body.data?.payerAction, { kind: 'redirect', url: boleto.body.data?.cashierUrl });
        assert.equal(psp.charges.size, 1);

        // The sandbox helpers and the cashier page are the sandbox channel's: they refuse `sim`'s orders.
        const refused = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
          orderNo: payment.orderNo,
          status: 'SUCCEEDED',
        });
        assert.equal(refused.status, 409);
        assert.equal(refused.body.msg, 'INVALID_STATE');
        const cashier = await fetch(`${platform.url}/cashier/${payment.orderNo}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'action=pay&name=Ana&documentNumber=123',
        });
        assert.notEqual(cashier.status, 200);
        assert.equal((await paymentRow(platform, payment.orderNo))?.status, 'PENDING');
        const sandboxOwn = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
          orderNo: boleto.body.data?.orderNo,
          status: 'SUCCEEDED',
        });
        assert.equal(sandboxOwn.status, 200);

        // Every call was signed and counted.
        assert.equal(psp.state.refused, 0);
        const metrics = await platform.services.metrics.registry.getSingleMetricAsString('paygate_channel_calls_total');
        assert.match(metrics, /channel="sim",operation="createPayment",outcome="ok"} 1/);
      } finally {
        await platform.close();
        await psp.close();
      }
    });

    it("a returnUrl reaches the channel with the order's numbers after the shop's own query", async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({ database, env: { PAYGATE_CHANNELS: channelsFile(psp.baseUrl) } });
      try {
        const merchant = await createMerchant(platform);
        type Created = { orderNo: string };
        // With a returnUrl the channel's page sends the payer back with the order's numbers, after
        // the shop's own query parameters (its status the shop reads with the query API).
        const returning = await post<Created>(
          platform,
          merchant,
          '/api/v1/payments',
          paymentInput({ merchantOrderNo: 'ret-1', returnUrl: 'http://shop.example/back?cart=7' }),
        );
        assert.equal(returning.status, 200, JSON.stringify(returning.body));
        const returningNo = returning.body.data?.orderNo as string;
        assert.equal(
          psp.charges.get(returningNo)?.returnUrl,
          `http://shop.example/back?cart=7&orderNo=${returningNo}&merchantOrderNo=ret-1`,
        );
      } finally {
        await platform.close();
        await psp.close();
      }
    });

    it('production refuses a create nothing serves, naming the field, and creates nothing', async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({
        database,
        env: { PAYGATE_ENV: 'production', PAYGATE_CHANNELS: channelsFile(psp.baseUrl) },
      });
      try {
        const merchant = await createMerchant(platform);
        const cases: [Record<string, unknown>, string][] = [
          [{ currency: 'USD', paymentMethod: { code: 'CARD' } }, 'currency'],
          [{ paymentMethod: { code: 'BOLETO' } }, 'paymentMethod.code'],
        ];
        for (const [overrides, field] of cases) {
          const refused = await post(platform, merchant, '/api/v1/payments', paymentInput(overrides));
          assert.equal(refused.status, 400);
          assert.equal(refused.body.msg, 'VALIDATION_FAILED');
          assert.equal(refused.body.errors?.[0]?.field, field);
        }
        const payout = await post(platform, merchant, '/api/v1/payouts', payoutInput({ currency: 'MXN' }));
        assert.equal(payout.status, 400);
        assert.equal(payout.body.errors?.[0]?.field, 'currency');
        assert.equal(await count(platform, 'payments'), 0);
        assert.equal(await count(platform, 'payouts'), 0);
        assert.equal(psp.state.calls.length, 0);
        // The routed method works in production.
        const routed = await post(platform, merchant, '/api/v1/payments', paymentInput());
        assert.equal(routed.status, 200, JSON.stringify(routed.body));
      } finally {
        await platform.close();
        await psp.close();
      }
    });

    it('a channel down at create or confirm: 503 CHANNEL_UNAVAILABLE, no order made, nothing sent; a retry works', async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({
        database,
        env: { PAYGATE_CHANNELS: channelsFile(psp.baseUrl, { timeoutMs: 300 }) },
      });
      try {
        const merchant = await createMerchant(platform);
        psp.state.down = true;
        const input = paymentInput();
        const down = await post(platform, merchant, '/api/v1/payments', input);
        assert.equal(down.status, 503);
        assert.equal(down.body.msg, 'CHANNEL_UNAVAILABLE');
        assert.equal(await count(platform, 'payments'), 0);
        psp.state.down = false;
        psp.state.hang = true;
        const hung = await post(platform, merchant, '/api/v1/payments', input);
        assert.equal(hung.status, 503);
        assert.equal(await count(platform, 'payments'), 0);
        psp.state.hang = false;
        const retried = await post<{ orderNo: string; payerAction: { kind: string } }>(
          platform,
          merchant,
          '/api/v1/payments',
          input,
        );
        assert.equal(retried.status, 200);
        assert.equal(retried.body.data?.payerAction.kind, 'pix');

        // Fund through the channel, then a payout whose confirm meets the channel down.
        const orderNo = retried.body.data?.orderNo as string;
        const charge = psp.charges.get(orderNo) as FakeOrder;
        assert.equal(
          (await notify(platform, chargeEvent(charge, { status: 'paid', paidAmount: '125.50' }))).status,
          200,
        );
        const payout = await post<{ orderNo: string }>(
          platform,
          merchant,
          '/api/v1/payouts',
          payoutInput({ amount: '50.00' }),
        );
        assert.equal(payout.status, 200, JSON.stringify(payout.body));
        const payoutNo = payout.body.data?.orderNo as string;
        psp.state.down = true;
        const confirmDown = await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payoutNo });
        assert.equal(confirmDown.status, 503);
        assert.equal(confirmDown.body.msg, 'CHANNEL_UNAVAILABLE');
        assert.equal(
          (await get<{ status: string }>(platform, merchant, '/api/v1/payouts', `orderNo=${payoutNo}`)).body.data
            ?.status,
          'PENDING',
        );
        psp.state.down = false;
        const confirmed = await post<{ status: string; channelTradeNo: string }>(
          platform,
          merchant,
          '/api/v1/payouts/confirm',
          { orderNo: payoutNo },
        );
        assert.equal(confirmed.body.data?.status, 'PROCESSING');
        assert.equal(confirmed.body.data?.channelTradeNo, psp.transfers.get(payoutNo)?.id);
        const metrics = await platform.services.metrics.registry.getSingleMetricAsString('paygate_channel_calls_total');
        assert.match(metrics, /channel="sim",operation="createPayment",outcome="error"} 1/);
        assert.match(metrics, /channel="sim",operation="createPayment",outcome="timeout"} 1/);
      } finally {
        await platform.close();
        await psp.close();
      }
    });

    it('notifications: forged, tampered, stale or replayed are 401 and change nothing', async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({ database, env: { PAYGATE_CHANNELS: channelsFile(psp.baseUrl) } });
      try {
        const merchant = await createMerchant(platform);
        const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
        const orderNo = created.body.data?.orderNo as string;
        const charge = psp.charges.get(orderNo) as FakeOrder;
        const event = chargeEvent(charge, { status: 'paid', payer: { name: 'Ana Lima' } });
        const text = JSON.stringify(event);
        const attempts = [
          await notify(platform, event, { secret: 'not-the-secret-0123456789' }),
          await notify(platform, event, { tampered: text.replace('Ana Lima', 'Eve Evil') }),
          await notify(platform, event, { now: platform.services.now() - 301_000 }),
          await notify(platform, event, { now: platform.services.now() + 301_000 }),
        ];
        for (const attempt of attempts) {
          assert.equal(attempt.status, 401);
          assert.deepEqual(attempt.body, { msg: 'UNAUTHORIZED' });
        }
        const unsigned = await fetch(`${platform.url}/channels/sim/notifications`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: text,
        });
        assert.equal(unsigned.status, 401);
        assert.equal((await paymentRow(platform, orderNo))?.status, 'PENDING');
        assert.equal(await count(platform, 'channel_notifications'), 0);

        // A replay: the same signed request twice (same nonce) — the second is refused.
        const nonce = randomUUID();
        const first = await notify(platform, event, { nonce });
        assert.equal(first.status, 200);
        const replayed = await notify(platform, chargeEvent(charge, { status: 'declined' }, 'evt_other'), { nonce });
        assert.equal(replayed.status, 401);
        assert.equal(await count(platform, 'channel_notifications'), 1);
        assert.equal((await paymentRow(platform, orderNo))?.status, 'SUCCEEDED');
        // Unknown channel names are 404.
        assert.equal((await fetch(`${platform.url}/channels/nope/notifications`, { method: 'POST' })).status, 404);
      } finally {
        await platform.close();
        await psp.close();
      }
    });

    it('notifications: idempotent per event id, reordering harmless, payer frozen, unknown orders kept and 2xx', async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({ database, env: { PAYGATE_CHANNELS: channelsFile(psp.baseUrl) } });
      try {
        const merchant = await createMerchant(platform);
        const { orderNo, charge } = await chargeAt(psp, platform, merchant, '500.00');
        const paid = chargeEvent(charge, {
          status: 'paid',
          paidAmount: '500.00',
          payer: { name: 'Ana Lima', documentNumber: '01234567890' },
        });
        const [once, concurrent] = await Promise.all([notify(platform, paid), notify(platform, paid)]);
        const twice = await notify(platform, paid);
        assert.deepEqual([once.status, concurrent.status, twice.status], [200, 200, 200]);
        assert.equal((twice.body.data as { outcome: string }).outcome, 'duplicate');
        const outcomeOf = (answer: { body: { data?: unknown } }) => (answer.body.data as { outcome: string }).outcome;
        // One applies it; the other finds it applied (duplicate) or, when it arrived while the first
        // was being applied, applies it again under the row lock and finds nothing to change.
        const [first, other] = [outcomeOf(once), outcomeOf(concurrent)].sort();
        assert.equal(first, 'applied');
        assert.ok(other === 'duplicate' || other === 'unchanged', other);
        // The same news under another event id: recorded, and nothing to change.
        const repeat = await notify(platform, chargeEvent(charge, { status: 'paid', paidAmount: '500.00' }));
        assert.equal(outcomeOf(repeat), 'unchanged');
        // A later, different event (declined, other payer) cannot move the final payment nor change its payer.
        const late = await notify(platform, chargeEvent(charge, { status: 'declined', payer: { name: 'Eve' } }));
        assert.equal(late.status, 200);
        const row = await paymentRow(platform, orderNo);
        assert.deepEqual([row?.status, row?.payer_name], ['SUCCEEDED', 'Ana Lima']);
        assert.equal((await eventsOf(platform, orderNo)).length, 1);
        assert.equal((await postingsOf(platform, orderNo)).length, 1);

        // A payout: the return arrives before the "sent", and the "sent" again after it.
        const payout = await post<{ orderNo: string; fee: string }>(
          platform,
          merchant,
          '/api/v1/payouts',
          payoutInput(),
        );
        const payoutNo = payout.body.data?.orderNo as string;
        const total = 100 + Number(payout.body.data?.fee);
        assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payoutNo })).status, 200);
        const transfer = psp.transfers.get(payoutNo) as FakeOrder;
        const before = await balanceOf(platform, merchant);
        const returned = await notify(platform, transferEvent(transfer, { status: 'returned', returnId: 'ret_1' }));
        assert.equal(returned.status, 200);
        const sent = await notify(platform, transferEvent(transfer, { status: 'sent' }));
        assert.equal(sent.status, 200);
        const returnedAgain = await notify(
          platform,
          transferEvent(transfer, { status: 'returned', returnId: 'ret_1' }),
        );
        assert.equal(returnedAgain.status, 200);
        assert.deepEqual([returned, sent, returnedAgain].map(outcomeOf), ['applied', 'unchanged', 'unchanged']);
        const view = await get<{ status: string; refundNo: string; refundAmount: string }>(
          platform,
          merchant,
          '/api/v1/payouts',
          `orderNo=${payoutNo}`,
        );
        assert.equal(view.body.data?.status, 'REFUNDED');
        assert.equal(view.body.data?.refundNo, 'ret_1');
        const kinds = (await postingsOf(platform, payoutNo)).map((p) => p.kind);
        assert.deepEqual(kinds, ['payout_reserve', 'payout_settle', 'refund']);
        const after = await balanceOf(platform, merchant);
        // The principal came back once; the fee stays with the platform.
        assert.equal(Number(after.available) - Number(before.available), 100);
        assert.equal(Number(before.reserved) - Number(after.reserved), total);

        // An order reference nobody knows: kept for investigation, answered 2xx.
        const stranger = { ...charge, id: 'ch_stranger', reference: 'P202601010000000999' };
        const unknown = await notify(platform, chargeEvent(stranger, { status: 'paid' }));
        assert.equal(unknown.status, 200);
        assert.equal((unknown.body.data as { outcome: string }).outcome, 'unknown_order');
        const kept = (await notificationsOf(platform)).find((n) => n.order_no === 'P202601010000000999');
        assert.equal(kept?.outcome, 'unknown_order');

        // The operator sees them all.
        const listed = await fetch(`${platform.url}/admin/v1/channels/sim/notifications`, { headers: ADMIN });
        assert.equal(listed.status, 200);
        const records = ((await listed.json()) as { data: { eventId: string; outcome: string; body: string }[] }).data;
        assert.equal(records.length, 7);
        assert.equal(records[0]?.outcome, 'unknown_order');
        assert.equal(records.at(-1)?.body, JSON.stringify(paid));
        assert.equal(
          (await fetch(`${platform.url}/admin/v1/channels/nope/notifications`, { headers: ADMIN })).status,
          404,
        );
        // And through the command line.
        const cli = await execFileAsync(
          process.execPath,
          ['--conditions=source', '--import', 'tsx', CLI, 'channels', 'notifications', '--channel', 'sim', '--json'],
          { env: { ...process.env, PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN } },
        );
        const printed = JSON.parse(cli.stdout) as { eventId: string }[];
        assert.deepEqual(
          printed.map((n) => n.eventId),
          records.map((n) => n.eventId),
        );
      } finally {
        await platform.close();
        await psp.close();
      }
    });

    it('paygate channels sync asks the channel about one order now and applies its answer once', async () => {
      const psp = await fakePsp();
      const platform = await startTestPlatform({ database, env: { PAYGATE_CHANNELS: channelsFile(psp.baseUrl) } });
      const sync = async (orderNo: unknown) => {
        const response = await fetch(`${platform.url}/admin/v1/channels/sync`, {
          method: 'POST',
          headers: { ...ADMIN, 'content-type': 'application/json' },
          body: JSON.stringify({ orderNo }),
        });
        return { status: response.status, body: (await response.json()) as { msg: string; data?: SyncView } };
      };
      type SyncView = { channelStatus: string | null; before: string; after: string; applied: boolean };
      try {
        const merchant = await createMerchant(platform);
        const { orderNo: paymentNo, charge } = await chargeAt(psp, platform, merchant, '500.00');
        // Still open at the channel: asked, nothing to apply.
        assert.deepEqual(pick((await sync(paymentNo)).body.data), [null, 'PENDING', 'PENDING', false]);
        Object.assign(charge, { status: 'paid', paidAmount: '500.00', payer: { name: 'Ana Lima' } });
        assert.deepEqual(pick((await sync(paymentNo)).body.data), ['SUCCEEDED', 'PENDING', 'SUCCEEDED', true]);
        assert.equal((await paymentRow(platform, paymentNo))?.payer_name, 'Ana Lima');

        // A payout sent, then returned with no notification (polling stops asking 7 days after it
        // succeeded): the operator's sync credits the return, once.
        const payout = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
        const payoutNo = payout.body.data?.orderNo as string;
        assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payoutNo })).status, 200);
        const transfer = psp.transfers.get(payoutNo) as FakeOrder;
        transfer.status = 'sent';
        assert.deepEqual(pick((await sync(payoutNo)).body.data), ['SUCCEEDED', 'PROCESSING', 'SUCCEEDED', true]);
        const before = await balanceOf(platform, merchant);
        Object.assign(transfer, { status: 'returned', returnId: 'ret_late' });
        const cli = await execFileAsync(
          process.execPath,
          ['--conditions=source', '--import', 'tsx', CLI, 'channels', 'sync', '--order-no', payoutNo, '--json'],
          { env: { ...process.env, PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN } },
        );
        assert.deepEqual(pick(JSON.parse(cli.stdout) as SyncView), ['REFUNDED', 'SUCCEEDED', 'REFUNDED', true]);
        assert.deepEqual(pick((await sync(payoutNo)).body.data), ['REFUNDED', 'REFUNDED', 'REFUNDED', false]);
        const kinds = (await postingsOf(platform, payoutNo)).map((p) => p.kind);
        assert.deepEqual(kinds, ['payout_reserve', 'payout_settle', 'refund']);
        const after = await balanceOf(platform, merchant);
        assert.equal(Number(after.available) - Number(before.available), 100);
        const view = await get<{ refundNo: string }>(platform, merchant, '/api/v1/payouts', `orderNo=${payoutNo}`);
        assert.equal(view.body.data?.refundNo, 'ret_late');

        // Refusals, each changing nothing.
        const boleto = await post<{ orderNo: string }>(
          platform,
          merchant,
          '/api/v1/payments',
          paymentInput({ paymentMethod: { code: 'BOLETO' } }),
        );
        const refusals = [
          [await sync('P202601010000000999'), 404, 'ORDER_NOT_FOUND'],
          [await sync(boleto.body.data?.orderNo), 409, 'INVALID_STATE'],
          [await sync('X1'), 400, 'VALIDATION_FAILED'],
          [await sync(undefined), 400, 'VALIDATION_FAILED'],
        ] as const;
        for (const [answer, status, msg] of refusals) assert.deepEqual([answer.status, answer.body.msg], [status, msg]);
        const open = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
        psp.state.down = true;
        const down = await sync(open.body.data?.orderNo);
        assert.deepEqual([down.status, down.body.msg], [503, 'CHANNEL_UNAVAILABLE']);
        assert.equal((await paymentRow(platform, open.body.data?.orderNo as string))?.status, 'PENDING');
      } finally {
        await platform.close();
        await psp.close();
      }
    });
  });
}

if (databases().includes('postgres')) {
  describe('channel notifications across instances (postgres)', () => {
    it('a notification replayed to another instance is refused: the nonce is kept in the database', async () => {
      const psp = await fakePsp();
      const db = await freshPostgres();
      const env = { PAYGATE_CHANNELS: channelsFile(psp.baseUrl) };
      const first = await startTestPlatform({ databaseUrl: db.url, env });
      const second = await startTestPlatform({ databaseUrl: db.url, env });
      try {
        const merchant = await createMerchant(first);
        const created = await post<{ orderNo: string }>(first, merchant, '/api/v1/payments', paymentInput());
        const orderNo = created.body.data?.orderNo as string;
        const charge = psp.charges.get(orderNo) as FakeOrder;
        const sent = await notify(first, chargeEvent(charge, { status: 'declined' }));
        assert.equal(sent.status, 200);
        // The same bytes and headers, captured and replayed to the other instance.
        const replayed = await fetch(`${second.url}/channels/sim/notifications`, {
          method: 'POST',
          headers: { ...sent.headers, 'content-type': 'application/json' },
          body: sent.text,
        });
        assert.equal(replayed.status, 401);
        assert.equal(await count(second, 'channel_notifications'), 1);
      } finally {
        await first.close();
        await second.close();
        await db.drop();
        await psp.close();
      }
    });
  });
}
