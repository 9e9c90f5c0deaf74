/**
 * Webhook delivery against real receivers on loopback: what is sent and how it verifies, retries
 * and their records, the REFUNDED window under an injected clock, resend, listing and metrics.
 * Crash recovery and two workers run on PostgreSQL (TEST_DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pino from 'pino';
import { LEASE_MS, retryDelay } from '../src/modules/webhooks/delivery.js';
import { startDispatcher } from '../src/worker/dispatcher.js';
import {
  createMerchant,
  freshPostgres,
  TEST_MASTER_KEY,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { payoutInput, SIMPLE_FEES } from './money-harness.js';
import { headerOf, nonceOf, type Receiver, startReceiver, verifyReceived } from './receiver.js';

const silentLog = pino({ level: 'silent' });
const execFileAsync = promisify(execFile);
/** `npx paygate`: the operator command line (the build when there is one, else the sources). */
const PAYGATE_BIN = fileURLToPath(new URL('../bin/paygate.js', import.meta.url));

interface EventRow {
  event_id: string;
  order_no: string;
  status: string;
  body: Uint8Array;
  created_at: Date;
  deliver_until: Date | null;
  delivery_status: string;
  next_attempt_at: Date | null;
  attempt_count: number;
}

interface AttemptRow {
  attempt: number;
  started_at: Date;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
  nonce: string;
}

async function eventRows(platform: TestPlatform, where = 'true', params: unknown[] = []): Promise<EventRow[]> {
  return (await platform.services.db.query<EventRow>(`SELECT * FROM events WHERE ${where} ORDER BY id`, params)).rows;
}

async function attemptRows(platform: TestPlatform, eventId: string): Promise<AttemptRow[]> {
  return (
    await platform.services.db.query<AttemptRow>(
      'SELECT * FROM delivery_attempts WHERE event_id = $1 ORDER BY attempt',
      [eventId],
    )
  ).rows;
}

/** The webhook keys the platform publishes. */
async function publishedKeys(platform: TestPlatform) {
  const response = await fetch(`${platform.url}/.well-known/paygate/webhook-keys`);
  return (await response.json()) as {
    environment: string;
    keys: { keyid: string; publicKey: string; status: string }[];
  };
}

/** Runs dispatcher steps until nothing is due; returns what each step did. */
async function drain(platform: TestPlatform, worker = 'test-worker'): Promise<string[]> {
  const outcomes: string[] = [];
  for (;;) {
    const outcome = await platform.services.webhooks.deliverNext(worker);
    if (outcome === 'idle') return outcomes;
    outcomes.push(outcome);
  }
}

/** Moves the platform clock to just past the next due attempt; false when nothing is pending. */
async function advanceToNextAttempt(platform: TestPlatform): Promise<boolean> {
  const result = await platform.services.db.query<{ due: Date | null }>(
    `SELECT min(next_attempt_at) AS due FROM events WHERE delivery_status = 'pending'`,
  );
  const due = result.rows[0]?.due;
  if (!due) return false;
  const gap = due.getTime() - platform.services.now();
  if (gap > 0) platform.advance(gap + 1);
  return true;
}

async function createPayment(platform: TestPlatform, merchant: TestMerchant, webhookUrl: string) {
  const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput({ webhookUrl }));
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.data?.orderNo as string;
}

async function succeedPayment(platform: TestPlatform, merchant: TestMerchant, webhookUrl: string, amount = '125.50') {
  const created = await post<{ orderNo: string }>(
    platform,
    merchant,
    '/api/v1/payments',
    paymentInput({ webhookUrl, amount }),
  );
  const orderNo = created.body.data?.orderNo as string;
  const paid = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
    orderNo,
    status: 'SUCCEEDED',
    payer: { name: 'Maria Silva', documentNumber: '00123456789' },
  });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  return orderNo;
}

/** A payout driven to SUCCEEDED (and optionally returned), against a funded balance. */
async function settledPayout(platform: TestPlatform, merchant: TestMerchant, webhookUrl: string, amount = '10.00') {
  const created = await post<{ orderNo: string }>(
    platform,
    merchant,
    '/api/v1/payouts',
    payoutInput({ webhookUrl, amount }),
  );
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const orderNo = created.body.data?.orderNo as string;
  assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
  return orderNo;
}

describe('retry delays', () => {
  const schedule = [10_000, 60_000, 3_600_000];
  it('follow the schedule with ±10 % jitter and repeat its last step', () => {
    assert.equal(
      retryDelay(schedule, 1, undefined, () => 0.5),
      10_000,
    );
    assert.equal(
      retryDelay(schedule, 1, undefined, () => 0),
      9_000,
    );
    assert.equal(
      retryDelay(schedule, 2, undefined, () => 0.999_999),
      66_000,
    );
    assert.equal(
      retryDelay(schedule, 9, undefined, () => 0.5),
      3_600_000,
    );
  });
  it('honour Retry-After within the schedule: never sooner than asked, never past the longest step', () => {
    assert.equal(
      retryDelay(schedule, 1, 30_000, () => 0.5),
      30_000,
    );
    assert.equal(
      retryDelay(schedule, 1, 1_000, () => 0.5),
      10_000,
    );
    assert.equal(
      retryDelay(schedule, 1, 86_400_000, () => 0.5),
      3_600_000,
    );
  });
});

for (const database of databases()) {
  describe(`webhook delivery (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let receiver: Receiver;

    before(async () => {
      platform = await startTestPlatform({
        database,
        env: { PAYGATE_FEES: SIMPLE_FEES, PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s' },
        webhooks: { totalTimeoutMs: 500, connectTimeoutMs: 500 },
      });
      merchant = await createMerchant(platform);
      receiver = await startReceiver();
    });
    afterEach(async () => {
      // Each test starts with an empty queue and a receiver that answers 200.
      await platform.services.db.query(
        `UPDATE events SET delivery_status = 'delivered' WHERE delivery_status = 'pending'`,
      );
      receiver.received.length = 0;
      receiver.fallback = { status: 200, body: 'ok' };
    });
    after(async () => {
      await receiver.close();
      await platform.close();
    });

    it('every final state of payments and payouts is delivered once, signed so that the protocol verifier accepts it', async () => {
      // A query with an empty value: @query is signed exactly as the URL has it.
      const hook = `${receiver.url}/webhook/payment?shop=aurora&empty=`;
      const expected = new Set<string>();
      const funded = await succeedPayment(platform, merchant, hook, '500.00');
      expected.add(`${funded} SUCCEEDED`);
      const failed = await createPayment(platform, merchant, hook);
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo: failed, status: 'FAILED' });
      expected.add(`${failed} FAILED`);
      const expired = await createPayment(platform, merchant, hook);
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo: expired, status: 'EXPIRED' });
      expected.add(`${expired} EXPIRED`);
      const canceled = await createPayment(platform, merchant, hook);
      assert.equal((await post(platform, merchant, '/api/v1/payments/cancel', { orderNo: canceled })).status, 200);
      expected.add(`${canceled} CANCELED`);

      const payoutHook = `${receiver.url}/webhook/payout`;
      const paid = await settledPayout(platform, merchant, payoutHook);
      await post(platform, merchant, '/api/v1/sandbox/payouts/simulate', { orderNo: paid, status: 'SUCCEEDED' });
      expected.add(`${paid} SUCCEEDED`);
      const bounced = await settledPayout(platform, merchant, payoutHook);
      await post(platform, merchant, '/api/v1/sandbox/payouts/simulate', { orderNo: bounced, status: 'FAILED' });
      expected.add(`${bounced} FAILED`);
      const returned = await settledPayout(platform, merchant, payoutHook);
      await post(platform, merchant, '/api/v1/sandbox/payouts/simulate', { orderNo: returned, status: 'SUCCEEDED' });
      await post(platform, merchant, '/api/v1/sandbox/payouts/return', { orderNo: returned });
      expected.add(`${returned} SUCCEEDED`).add(`${returned} REFUNDED`);

      const outcomes = await drain(platform);
      assert.deepEqual(outcomes, Array(expected.size).fill('delivered'));
      assert.equal(receiver.received.length, expected.size);

      const published = await publishedKeys(platform);
      const events = new Map((await eventRows(platform)).map((row) => [row.event_id, row]));
      const seen = new Set<string>();
      for (const request of receiver.received) {
        const byOnboardingKeys = await verifyReceived(request, merchant.webhookKeys, platform.services.now());
        assert.ok(byOnboardingKeys.ok, JSON.stringify(!byOnboardingKeys.ok && byOnboardingKeys.error));
        const byPublishedKeys = await verifyReceived(request, published.keys, platform.services.now());
        assert.ok(byPublishedKeys.ok, JSON.stringify(!byPublishedKeys.ok && byPublishedKeys.error));

        const event = events.get(headerOf(request, 'webhook-event-id') as string);
        assert.ok(event, 'the webhook is an outbox event');
        assert.deepEqual(request.body, Buffer.from(event.body), 'the body bytes are the ones fixed in the outbox');
        assert.equal(event.delivery_status, 'delivered');
        assert.equal(headerOf(request, 'content-type'), 'application/json');
        const expectedPath = event.order_no.startsWith('P') ? '/webhook/payment' : '/webhook/payout';
        assert.equal(request.path, expectedPath);
        assert.equal(request.query, expectedPath === '/webhook/payment' ? 'shop=aurora&empty=' : undefined);
        seen.add(`${event.order_no} ${event.status}`);
      }
      assert.deepEqual(seen, expected, 'exactly one event per final state');
      const refunded = JSON.parse(receiver.received.at(-1)?.body.toString() as string);
      assert.equal(refunded.status, 'REFUNDED');
      assert.equal(refunded.refundAmount, '10.00');
    });

    it('a receiver answering 500, 500, 200 gets three attempts: same eventId and body, fresh nonce and signature each', async () => {
      receiver.script({ status: 500, body: 'boom' }, { status: 500, body: 'boom again' });
      const orderNo = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      assert.deepEqual(await drain(platform), ['retry']);
      assert.ok(await advanceToNextAttempt(platform));
      assert.deepEqual(await drain(platform), ['retry']);
      assert.ok(await advanceToNextAttempt(platform));
      assert.deepEqual(await drain(platform), ['delivered']);

      const [event] = await eventRows(platform, 'order_no = $1', [orderNo]);
      assert.ok(event);
      assert.equal(event.delivery_status, 'delivered');
      const requests = receiver.received;
      assert.equal(requests.length, 3);
      assert.deepEqual(new Set(requests.map((r) => headerOf(r, 'webhook-event-id'))), new Set([event.event_id]));
      for (const request of requests) assert.deepEqual(request.body, Buffer.from(event.body));
      assert.equal(new Set(requests.map(nonceOf)).size, 3, 'three different nonces');
      assert.equal(new Set(requests.map((r) => headerOf(r, 'signature'))).size, 3, 'three different signatures');
      for (const request of requests) {
        assert.ok((await verifyReceived(request, merchant.webhookKeys, platform.services.now())).ok);
      }
      const attempts = await attemptRows(platform, event.event_id);
      assert.deepEqual(
        attempts.map((a) => [a.attempt, a.status_code, a.response_excerpt]),
        [
          [1, 500, 'boom'],
          [2, 500, 'boom again'],
          [3, 200, 'ok'],
        ],
      );
      assert.deepEqual(
        attempts.map((a) => a.nonce),
        requests.map(nonceOf),
      );
    });

    it('a receiver that never answers 2xx ends in a failed event, kept with every attempt recorded', async () => {
      receiver.fallback = { status: 503, body: 'x'.repeat(5000), headers: { 'retry-after': '1' } };
      const orderNo = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      const outcomes = [...(await drain(platform))];
      while (await advanceToNextAttempt(platform)) outcomes.push(...(await drain(platform)));
      // 1 + the three scheduled retries.
      assert.deepEqual(outcomes, ['retry', 'retry', 'retry', 'failed']);
      const [event] = await eventRows(platform, 'order_no = $1', [orderNo]);
      assert.equal(event?.delivery_status, 'failed');
      assert.equal(event?.attempt_count, 4);
      const attempts = await attemptRows(platform, event?.event_id as string);
      assert.equal(attempts.length, 4);
      for (const attempt of attempts) {
        assert.equal(attempt.status_code, 503);
        assert.equal(attempt.response_excerpt?.length, 1024, 'the answer is kept truncated');
      }
      assert.equal(receiver.received.length, 4);
    });

    it('an answer with a NUL byte is recorded (U+FFFD in its excerpt), with the attempts settled beside it', async () => {
      receiver.fallback = { status: 200, body: 'ok\u0000done' };
      const first = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      receiver.script({ status: 200, body: 'plain' });
      const second = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      // Both claimed at once and sent together: their settlements go out in one statement.
      const claimed = await platform.services.webhooks.claim('w', 10);
      assert.equal(claimed.length, 2);
      const outcomes = await Promise.all(claimed.map((event) => platform.services.webhooks.deliver(event, 'w')));
      assert.deepEqual(outcomes, ['delivered', 'delivered']);
      const excerpts = [];
      for (const orderNo of [first, second]) {
        const [event] = await eventRows(platform, 'order_no = $1', [orderNo]);
        assert.equal(event?.delivery_status, 'delivered');
        excerpts.push(...(await attemptRows(platform, event?.event_id as string)).map((a) => a.response_excerpt));
      }
      assert.deepEqual(excerpts.sort(), ['ok\uFFFDdone', 'plain']);
    });

    it('an event claimed so long ago that its lease could run out mid-attempt is given back, not sent', async () => {
      const orderNo = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      const [event] = await platform.services.webhooks.claim('slow-worker', 1);
      assert.ok(event);
      platform.advance(LEASE_MS - 5_000);
      assert.equal(await platform.services.webhooks.deliver(event, 'slow-worker'), 'lost-lease');
      assert.equal(receiver.received.length, 0, 'nothing sent');
      const [row] = await platform.services.db
        .query<{ lease_owner: string | null; attempt_count: number }>(
          'SELECT lease_owner, attempt_count FROM events WHERE order_no = $1',
          [orderNo],
        )
        .then((r) => r.rows);
      assert.deepEqual(row, { lease_owner: null, attempt_count: 0 }, 'lease ended, the claim not counted');
      assert.deepEqual(await drain(platform), ['delivered']);
      assert.equal(receiver.received.length, 1);
    });

    it('a stopping dispatcher gives back the events it claimed ahead and did not send', async () => {
      receiver.fallback = { status: 200, body: 'ok', delayMs: 300 };
      const orderNos: string[] = [];
      for (let i = 0; i < 6; i++) orderNos.push(await succeedPayment(platform, merchant, `${receiver.url}/hooks`));
      // One request in flight at a time; the claim takes the whole lease window ahead of it.
      const stop = startDispatcher(platform.services.webhooks, silentLog, {
        concurrency: 1,
        worker: 'stopping',
        pollMs: 20,
      });
      await receiver.waitFor(1);
      await stop();
      const rows = await eventRows(platform, 'order_no = ANY($1)', [orderNos]);
      const sent = rows.filter((row) => row.delivery_status === 'delivered');
      const unsent = rows.filter((row) => row.delivery_status === 'pending');
      assert.equal(sent.length, receiver.received.length);
      assert.ok(unsent.length >= 4, `${unsent.length} left`);
      const leases = await platform.services.db.query(
        `SELECT 1 FROM events WHERE order_no = ANY($1) AND (lease_owner IS NOT NULL OR (delivery_status = 'pending' AND attempt_count > 0))`,
        [orderNos],
      );
      assert.equal(leases.rows.length, 0, 'no lease left behind, no claim counted as an attempt');
      assert.equal((await drain(platform)).length, unsent.length, 'another worker takes them at once');
    });

    it('connection errors, timeouts and redirects are failures; a redirect is never followed', async () => {
      const target = await startReceiver();
      try {
        receiver.script(
          { status: 302, headers: { location: `${target.url}/internal` } },
          { status: 200, hang: true },
          { status: 301, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
        );
        const orderNo = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
        const deadPort = await startReceiver();
        const deadUrl = deadPort.url;
        await deadPort.close();
        const refused = await succeedPayment(platform, merchant, `${deadUrl}/hooks`);
        const [event] = await eventRows(platform, 'order_no = $1', [orderNo]);
        await drain(platform);
        while ((await attemptRows(platform, event?.event_id as string)).length < 3) {
          await advanceToNextAttempt(platform);
          await drain(platform);
        }
        const attempts = await attemptRows(platform, event?.event_id as string);
        assert.equal(attempts[0]?.status_code, 302);
        assert.equal(attempts[1]?.status_code, null);
        assert.match(attempts[1]?.error ?? '', /no answer within 500 ms/);
        assert.equal(attempts[2]?.status_code, 301);
        assert.equal(target.received.length, 0, 'the redirect target got nothing');

        const [refusedEvent] = await eventRows(platform, 'order_no = $1', [refused]);
        const refusedAttempts = await attemptRows(platform, refusedEvent?.event_id as string);
        assert.ok(refusedAttempts.length >= 1);
        assert.match(refusedAttempts[0]?.error ?? '', /ECONNREFUSED/);
        assert.equal(refusedEvent?.delivery_status, 'pending');
      } finally {
        await target.close();
      }
    });

    it('a REFUNDED event stops 24 h after it was created; the payout success event goes on (injected clock)', async () => {
      const longPlatform = await startTestPlatform({ database, env: { PAYGATE_FEES: SIMPLE_FEES } });
      try {
        const shop = await createMerchant(longPlatform);
        receiver.fallback = { status: 500, body: 'down' };
        const hook = `${receiver.url}/webhook/payout`;
        await succeedPayment(longPlatform, shop, hook, '100.00');
        const orderNo = await settledPayout(longPlatform, shop, hook);
        await post(longPlatform, shop, '/api/v1/sandbox/payouts/simulate', { orderNo, status: 'SUCCEEDED' });
        // The payout is already hours old when it is returned.
        longPlatform.advance(20 * 3_600_000);
        await post(longPlatform, shop, '/api/v1/sandbox/payouts/return', { orderNo });

        await drain(longPlatform);
        while (await advanceToNextAttempt(longPlatform)) await drain(longPlatform);

        const rows = await eventRows(longPlatform, 'order_no = $1', [orderNo]);
        const success = rows.find((row) => row.status === 'SUCCEEDED') as EventRow;
        const refunded = rows.find((row) => row.status === 'REFUNDED') as EventRow;
        assert.equal(refunded.deliver_until?.getTime(), refunded.created_at.getTime() + 24 * 3_600_000);
        assert.equal(refunded.delivery_status, 'failed');
        const refundAttempts = await attemptRows(longPlatform, refunded.event_id);
        assert.ok(refundAttempts.length >= 5, `${refundAttempts.length} attempts in the window`);
        for (const attempt of refundAttempts) {
          assert.ok(attempt.started_at.getTime() <= (refunded.deliver_until as Date).getTime());
        }
        // The success event follows the whole default schedule (about three days, 16 attempts).
        const successAttempts = await attemptRows(longPlatform, success.event_id);
        assert.equal(successAttempts.length, 16);
        const first = (successAttempts[0] as AttemptRow).started_at.getTime();
        const span = (successAttempts.at(-1) as AttemptRow).started_at.getTime() - first;
        assert.ok(span > 60 * 3_600_000 && span < 90 * 3_600_000, `success retries span ${span / 3_600_000} h`);
        assert.equal(success.delivery_status, 'failed');
      } finally {
        await longPlatform.close();
      }
    });

    it('resend delivers the same eventId and body with a fresh signature, for the merchant and the operator', async () => {
      const orderNo = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      await drain(platform);
      const [event] = await eventRows(platform, 'order_no = $1', [orderNo]);
      assert.equal(event?.delivery_status, 'delivered');

      const resent = await post<{ eventId: string; deliveryStatus: string }>(
        platform,
        merchant,
        '/api/v1/events/resend',
        { eventId: event?.event_id },
      );
      assert.equal(resent.status, 200, JSON.stringify(resent.body));
      assert.equal(resent.body.data?.deliveryStatus, 'pending');
      assert.deepEqual(await drain(platform), ['delivered']);

      // The operator command line, against this running server.
      const cli = await execFileAsync(
        process.execPath,
        [PAYGATE_BIN, 'events', 'resend', '--event-id', event?.event_id as string, '--json'],
        { env: { ...process.env, PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: platform.config.adminToken } },
      );
      assert.equal(JSON.parse(cli.stdout).eventId, event?.event_id);
      assert.deepEqual(await drain(platform), ['delivered']);

      assert.equal(receiver.received.length, 3);
      for (const request of receiver.received) {
        assert.equal(headerOf(request, 'webhook-event-id'), event?.event_id);
        assert.deepEqual(request.body, Buffer.from(event?.body as Uint8Array));
        assert.ok((await verifyReceived(request, merchant.webhookKeys, platform.services.now())).ok);
      }
      assert.equal(new Set(receiver.received.map(nonceOf)).size, 3);

      // Another merchant cannot resend it, and an unknown event is not found.
      const other = await createMerchant(platform, 'Other shop');
      const foreign = await post(platform, other, '/api/v1/events/resend', { eventId: event?.event_id });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.msg, 'EVENT_NOT_FOUND');
    });

    it('lists events by order, delivery status and time range, with paging', async () => {
      const shop = await createMerchant(platform, 'Listing shop');
      receiver.fallback = { status: 500 };
      const failing = await succeedPayment(platform, shop, `${receiver.url}/hooks`);
      await drain(platform);
      receiver.fallback = { status: 200 };
      const orders = [await succeedPayment(platform, shop, `${receiver.url}/hooks`)];
      orders.push(await succeedPayment(platform, shop, `${receiver.url}/hooks`));
      await drain(platform);

      type Page = {
        items: { eventId: string; orderNo: string; deliveryStatus: string; attemptLog?: unknown[] }[];
        nextCursor: string | null;
      };
      const all = await get<Page>(platform, shop, '/api/v1/events', 'pageSize=2');
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.equal(all.body.data?.items.length, 2);
      assert.ok(all.body.data?.nextCursor);
      const rest = await get<Page>(platform, shop, '/api/v1/events', `pageSize=2&cursor=${all.body.data?.nextCursor}`);
      assert.equal(rest.body.data?.items.length, 1);
      assert.equal(rest.body.data?.nextCursor, null);
      const listed = [...(all.body.data?.items ?? []), ...(rest.body.data?.items ?? [])].map((i) => i.orderNo);
      assert.deepEqual(listed, [...orders].reverse().concat(failing), 'newest first');

      const pending = await get<Page>(platform, shop, '/api/v1/events', 'status=pending');
      assert.deepEqual(
        pending.body.data?.items.map((i) => i.orderNo),
        [failing],
      );
      const byOrder = await get<Page>(platform, shop, '/api/v1/events', `orderNo=${failing}`);
      assert.equal(byOrder.body.data?.items.length, 1);
      assert.equal(byOrder.body.data?.items[0]?.attemptLog?.length, 1, 'by order, each event carries its attempts');

      const future = platform.services.now() + 60_000;
      const none = await get<Page>(platform, shop, '/api/v1/events', `from=${future}`);
      assert.deepEqual(none.body.data?.items, []);
      const bad = await get(platform, shop, '/api/v1/events', 'status=lost');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.msg, 'VALIDATION_FAILED');
    });

    it('publishes the webhook keys a merchant may see, and keeps verifying across a key rotation', async () => {
      const before = await publishedKeys(platform);
      await platform.services.platformKeys.rotate('webhook');
      platform.advance(5_000); // past the signer cache
      const rotated = await publishedKeys(platform);
      assert.equal(rotated.keys.length, before.keys.length + 1);
      const orderNo = await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      await drain(platform);
      const [event] = await eventRows(platform, 'order_no = $1', [orderNo]);
      const request = receiver.received.find((r) => headerOf(r, 'webhook-event-id') === event?.event_id);
      assert.ok(request);
      const activeKey = rotated.keys.find((k) => k.status === 'active');
      const signedWith = /keyid="([^"]+)"/.exec(headerOf(request, 'signature-input') ?? '')?.[1];
      assert.equal(signedWith, activeKey?.keyid, 'new deliveries are signed with the active key');
      assert.ok((await verifyReceived(request, rotated.keys, platform.services.now())).ok);
      assert.equal((await verifyReceived(request, before.keys, platform.services.now())).ok, false);
    });

    it('serves Prometheus metrics: deliveries by outcome, attempt latency, queue depth, oldest pending age', async () => {
      receiver.fallback = { status: 500 };
      await succeedPayment(platform, merchant, `${receiver.url}/hooks`);
      await drain(platform);
      platform.advance(30_000);
      const text = await (await fetch(`${platform.url}/metrics`)).text();
      assert.match(text, /paygate_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
      assert.match(text, /paygate_webhook_deliveries_total\{outcome="retry"\} [1-9]/);
      assert.match(text, /paygate_webhook_attempt_duration_seconds_count [1-9]/);
      assert.match(text, /paygate_webhook_queue_depth 1\n/);
      const age = Number(/^paygate_webhook_oldest_pending_age_seconds (\S+)$/m.exec(text)?.[1]);
      assert.ok(age >= 30, `oldest pending age ${age}`);
    });
  });
}

describe(
  'webhook workers on one PostgreSQL',
  { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL' },
  () => {
    let database: { url: string; drop: () => Promise<void> };
    before(async () => {
      database = await freshPostgres();
    });
    after(() => database?.drop());

    /** A platform on the shared database with no dispatcher of its own. */
    const instance = (options: Parameters<typeof startTestPlatform>[0] = {}) =>
      startTestPlatform({ databaseUrl: database.url, ...options });

    it('two workers deliver 200 events with no attempt sent twice', async () => {
      const receiver = await startReceiver({ status: 200, body: 'ok', delayMs: 5 });
      const a = await instance();
      const b = await instance();
      try {
        const shop = await createMerchant(a, 'Two workers');
        for (let i = 0; i < 200; i++) {
          const orderNo = await createPayment(a, shop, `${receiver.url}/hooks`);
          await post(a, shop, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'FAILED' });
        }
        const stops = [
          startDispatcher(a.services.webhooks, silentLog, { concurrency: 4, worker: 'worker-a', pollMs: 20 }),
          startDispatcher(b.services.webhooks, silentLog, { concurrency: 4, worker: 'worker-b', pollMs: 20 }),
        ];
        await receiver.waitFor(200, 60_000);
        // Anything sent twice would arrive within a few more polls.
        await new Promise((resolve) => setTimeout(resolve, 300));
        for (const stop of stops) await stop();

        const ids = receiver.received.map((r) => headerOf(r, 'webhook-event-id'));
        assert.equal(ids.length, 200);
        assert.equal(new Set(ids).size, 200, 'no event was sent twice');
        const workers = await a.services.db.query<{ worker: string; n: bigint }>(
          'SELECT worker, count(*)::bigint AS n FROM delivery_attempts GROUP BY worker',
        );
        assert.equal(workers.rows.length, 2, 'both workers took a share');
        const attempts = workers.rows.reduce((sum, row) => sum + Number(row.n), 0);
        assert.equal(attempts, 200);
        const pending = await a.services.db.query(`SELECT 1 FROM events WHERE delivery_status <> 'delivered'`);
        assert.equal(pending.rows.length, 0);
      } finally {
        await a.close();
        await b.close();
        await receiver.close();
      }
    });

    it('two workers claiming batches at once get disjoint events, every due one claimed once', async () => {
      const receiver = await startReceiver();
      const a = await instance();
      const b = await instance();
      try {
        await a.services.db.query(`UPDATE events SET delivery_status = 'delivered' WHERE delivery_status = 'pending'`);
        const shop = await createMerchant(a, 'Batch claims');
        for (let i = 0; i < 50; i++) {
          const orderNo = await createPayment(a, shop, `${receiver.url}/hooks`);
          await post(a, shop, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'FAILED' });
        }
        const rounds = await Promise.all([
          a.services.webhooks.claim('worker-a', 30),
          b.services.webhooks.claim('worker-b', 30),
          a.services.webhooks.claim('worker-c', 30),
        ]);
        const ids = rounds.flat().map((event) => event.event_id);
        assert.equal(ids.length, 50, `claimed ${rounds.map((r) => r.length).join(' + ')}`);
        assert.equal(new Set(ids).size, 50, 'no event claimed twice');
        assert.deepEqual(await a.services.webhooks.claim('worker-d', 30), [], 'nothing left while leased');
        const owners = await a.services.db.query<{ lease_owner: string; n: bigint }>(
          `SELECT lease_owner, count(*)::bigint AS n FROM events WHERE delivery_status = 'pending' GROUP BY lease_owner`,
        );
        assert.deepEqual(
          Object.fromEntries(owners.rows.map((row) => [row.lease_owner, Number(row.n)])),
          Object.fromEntries(
            ['worker-a', 'worker-b', 'worker-c']
              .map((worker, i) => [worker, rounds[i]?.length ?? 0])
              .filter(([, n]) => n !== 0),
          ),
        );
      } finally {
        await a.close();
        await b.close();
        await receiver.close();
      }
    });

    it('kill -9 of a worker process mid-delivery loses no event: a restarted worker delivers the rest', async () => {
      const receiver = await startReceiver({ status: 200, body: 'ok', delayMs: 150 });
      const platform = await instance();
      const dataDir = mkdtempSync(join(tmpdir(), 'paygate-worker-'));
      try {
        await platform.services.db.query(`UPDATE events SET delivery_status = 'delivered'`);
        const shop = await createMerchant(platform, 'Crash shop');
        const orderNos: string[] = [];
        for (let i = 0; i < 40; i++) orderNos.push(await succeedPayment(platform, shop, `${receiver.url}/hooks`));

        const worker = spawn(process.execPath, [PAYGATE_BIN, 'worker'], {
          env: {
            ...process.env,
            DATABASE_URL: database.url,
            PAYGATE_MASTER_KEY: TEST_MASTER_KEY.toString('base64'),
            PAYGATE_DATA_DIR: dataDir,
            PAYGATE_WEBHOOK_CONCURRENCY: '4',
            LOG_LEVEL: 'silent',
          },
          stdio: 'ignore',
        });
        await receiver.waitFor(8, 30_000);
        worker.kill('SIGKILL');
        await new Promise((resolve) => worker.once('exit', resolve));
        const sentBeforeCrash = receiver.received.length;
        assert.ok(sentBeforeCrash < 40, 'the worker died mid-way');
        const leased = await platform.services.db.query(`SELECT 1 FROM events WHERE lease_owner IS NOT NULL`);
        assert.ok(leased.rows.length > 0, 'it died holding leases');

        // The restarted worker finds the dead worker's leases once they run out (clock moved past them).
        platform.advance(LEASE_MS + 1_000);
        const outcomes = await drain(platform, 'restarted');
        assert.ok(outcomes.length > 0);

        const events = await eventRows(platform, 'order_no = ANY($1)', [orderNos]);
        assert.equal(events.length, 40);
        assert.deepEqual(new Set(events.map((e) => e.delivery_status)), new Set(['delivered']));
        const received = new Set(receiver.received.map((r) => headerOf(r, 'webhook-event-id')));
        for (const event of events) assert.ok(received.has(event.event_id), `${event.event_id} reached the receiver`);
      } finally {
        await platform.close();
        await receiver.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  },
);
