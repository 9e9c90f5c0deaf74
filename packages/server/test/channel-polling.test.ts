/**
 * Channel polling (issue 13, item 4): channel-routed orders left PENDING or PROCESSING past
 * PAYGATE_CHANNEL_POLL_AFTER are queried at their channel and settled from the answer through
 * the same service methods as the sandbox helpers, with a per-order backoff and bounded work.
 * The channel here is a loopback fake answering the two queries (the connector layer and the
 * simulator are exercised by the end-to-end tests).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type PollableChannel, type PolledState, pollOnce, syncOrder } from '../src/modules/channels/polling.js';
import { sweepOnce } from '../src/worker/sweeper.js';
import { createMerchant, databases, paymentInput, post, startTestPlatform, type TestPlatform } from './harness.js';
import { eventsOf, fund, payoutInput, postingsOf } from './money-harness.js';

const POLL_AFTER = 60_000;

/** A channel whose answers the test sets per order number; counts the queries. */
function fakeChannel() {
  const answers = new Map<string, PolledState | undefined>();
  let queries = 0;
  const channel: PollableChannel = {
    queryPayment: async ({ orderNo }) => {
      queries++;
      return answers.get(orderNo);
    },
    queryPayout: async ({ orderNo }) => {
      queries++;
      return answers.get(orderNo);
    },
  };
  return { channel, answers, queries: () => queries };
}

async function routeTo(
  platform: TestPlatform,
  table: 'payments' | 'payouts',
  orderNo: string,
  channel: string | null = 'fake',
) {
  await platform.services.db.query(`UPDATE ${table} SET channel = $2 WHERE order_no = $1`, [orderNo, channel]);
}

async function statusOf(platform: TestPlatform, table: 'payments' | 'payouts', orderNo: string) {
  const payer = table === 'payments' ? 'payer_name' : 'NULL AS payer_name';
  const result = await platform.services.db.query<{ status: string; payer_name: string | null; poll_attempts: number }>(
    `SELECT status, ${payer}, poll_attempts FROM ${table} WHERE order_no = $1`,
    [orderNo],
  );
  return result.rows[0];
}

for (const database of databases()) {
  describe(`channel polling (${database})`, () => {
    it('settles a stale payment from the channel answer, once, and leaves fresh ones alone', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        const fake = fakeChannel();
        const options = { channel: (name: string) => (name === 'fake' ? fake.channel : undefined) };
        const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
        const orderNo = created.body.data?.orderNo as string;
        await routeTo(platform, 'payments', orderNo);
        fake.answers.set(orderNo, { status: 'SUCCEEDED', payer: { name: 'Ana Lima', documentNumber: '123' } });

        assert.deepEqual(await pollOnce(platform.services, options), { queried: 0, applied: 0, failed: 0 });
        platform.advance(POLL_AFTER + 1_000);
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 1, failed: 0 });
        const row = await statusOf(platform, 'payments', orderNo);
        assert.equal(row?.status, 'SUCCEEDED');
        assert.equal(row?.payer_name, 'Ana Lima');
        platform.advance(10 * POLL_AFTER);
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 0, applied: 0, failed: 0 });
        assert.equal((await eventsOf(platform, orderNo)).length, 1);
        assert.equal((await postingsOf(platform, orderNo)).length, 1);
      } finally {
        await platform.close();
      }
    });

    it('backs off per order while the channel has nothing to say or is down', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        let down = false;
        const fake = fakeChannel();
        const channel: PollableChannel = {
          queryPayment: async (order) => {
            if (down) throw new Error('connection refused');
            return fake.channel.queryPayment(order);
          },
          queryPayout: fake.channel.queryPayout,
        };
        const options = { channel: () => channel, maxBackoffMs: 4 * POLL_AFTER };
        const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
        const orderNo = created.body.data?.orderNo as string;
        await routeTo(platform, 'payments', orderNo);
        platform.advance(POLL_AFTER + 1);
        assert.equal((await pollOnce(platform.services, options)).queried, 1); // open: next in 60 s
        assert.equal((await pollOnce(platform.services, options)).queried, 0);
        platform.advance(POLL_AFTER + 1);
        down = true;
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 0, failed: 1 }); // next in 120 s
        platform.advance(POLL_AFTER + 1);
        assert.equal((await pollOnce(platform.services, options)).queried, 0);
        platform.advance(POLL_AFTER + 1);
        assert.equal((await pollOnce(platform.services, options)).queried, 1); // next in 240 s (the cap)
        platform.advance(4 * POLL_AFTER + 1);
        down = false;
        fake.answers.set(orderNo, { status: 'FAILED' });
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 1, failed: 0 });
        assert.equal((await statusOf(platform, 'payments', orderNo))?.status, 'FAILED');
        assert.equal((await statusOf(platform, 'payments', orderNo))?.poll_attempts, 4);
      } finally {
        await platform.close();
      }
    });

    it('settles a confirmed payout and then its return, crediting it once', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        await fund(platform, merchant, '500.00');
        const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
        const orderNo = created.body.data?.orderNo as string;
        const fake = fakeChannel();
        const options = { channel: () => fake.channel };
        platform.advance(POLL_AFTER + 1);
        assert.equal(
          (await pollOnce(platform.services, options)).queried,
          0,
          'an unconfirmed payout is not at its channel',
        );
        assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
        // Routed after the confirm: 'fake' is no configured channel, so a confirm would not reach it (503).
        await routeTo(platform, 'payouts', orderNo);
        platform.advance(POLL_AFTER + 1);
        fake.answers.set(orderNo, { status: 'REFUNDED', refundNo: 'RT-1' });
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 1, failed: 0 });
        assert.equal((await statusOf(platform, 'payouts', orderNo))?.status, 'REFUNDED');
        const kinds = (await postingsOf(platform, orderNo)).map((p) => (p as { kind: string }).kind).sort();
        assert.deepEqual(kinds, ['payout_reserve', 'payout_settle', 'refund']);
      } finally {
        await platform.close();
      }
    });

    it('a PENDING payment past its expiry is withdrawn at its channel: EXPIRED, or what the payer did there first', async () => {
      const expiry = 10 * POLL_AFTER;
      const platform = await startTestPlatform({ database, config: { runWorkers: false, paymentExpiryMs: expiry } });
      try {
        const merchant = await createMerchant(platform);
        const orders: string[] = [];
        for (let i = 0; i < 3; i++) {
          const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
          orders.push(created.body.data?.orderNo as string);
          await routeTo(platform, 'payments', orders[i] as string);
        }
        const [unpaid, paid, sandbox] = orders as [string, string, string];
        await routeTo(platform, 'payments', sandbox, null);
        const calls: string[] = [];
        const channel: PollableChannel = {
          queryPayment: async ({ orderNo }) => {
            calls.push(`query ${orderNo}`);
            return undefined;
          },
          queryPayout: async () => undefined,
          cancelPayment: async ({ orderNo }) => {
            calls.push(`cancel ${orderNo}`);
            return orderNo === paid
              ? { kind: 'final', state: { status: 'SUCCEEDED', payer: { name: 'Ana Lima' } } }
              : { kind: 'canceled' };
          },
        };
        // Queried while open, with a backoff that never carries the next poll past the expiry.
        platform.advance(POLL_AFTER + 1);
        assert.equal((await pollOnce(platform.services, { channel: () => channel })).queried, 2);
        platform.advance(expiry);
        // The sweeper expires only the built-in sandbox channel's payments; the channel's wait for polling.
        assert.equal((await sweepOnce(platform.services)).expired, 1);
        assert.equal((await statusOf(platform, 'payments', unpaid))?.status, 'PENDING');
        calls.length = 0;
        assert.deepEqual(await pollOnce(platform.services, { channel: () => channel }), {
          queried: 2,
          applied: 2,
          failed: 0,
        });
        assert.deepEqual(calls.sort(), [`cancel ${paid}`, `cancel ${unpaid}`].sort());
        assert.equal((await statusOf(platform, 'payments', unpaid))?.status, 'EXPIRED');
        const won = await statusOf(platform, 'payments', paid);
        assert.deepEqual([won?.status, won?.payer_name], ['SUCCEEDED', 'Ana Lima']);
        assert.equal((await postingsOf(platform, paid)).length, 1);
        assert.equal((await eventsOf(platform, unpaid)).length, 1);
      } finally {
        await platform.close();
      }
    });

    it('a PENDING payout a confirm could not place is settled from its channel, or left alone when the channel never got it', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        await fund(platform, merchant, '500.00');
        const orders: string[] = [];
        for (let i = 0; i < 2; i++) {
          const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
          orders.push(created.body.data?.orderNo as string);
          await routeTo(platform, 'payouts', orders[i] as string);
          // As a confirm that met its channel down leaves it: PENDING, marked for a poll.
          await platform.services.db.query('UPDATE payouts SET next_poll_at = $2 WHERE order_no = $1', [
            orders[i],
            new Date(platform.services.now() + POLL_AFTER),
          ]);
        }
        const [taken, never] = orders as [string, string];
        const fake = fakeChannel();
        fake.answers.set(taken, { status: 'PROCESSING', channelTradeNo: 'tr_taken' });
        const options = { channel: () => fake.channel };
        assert.equal((await pollOnce(platform.services, options)).queried, 0);
        platform.advance(POLL_AFTER + 1);
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 2, applied: 1, failed: 0 });
        assert.equal((await statusOf(platform, 'payouts', taken))?.status, 'PROCESSING');
        assert.equal((await statusOf(platform, 'payouts', never))?.status, 'PENDING');
        // The one the channel never got is not asked about again; the other is polled on as PROCESSING.
        platform.advance(10 * POLL_AFTER);
        fake.answers.set(taken, { status: 'SUCCEEDED' });
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 1, failed: 0 });
        assert.equal((await statusOf(platform, 'payouts', taken))?.status, 'SUCCEEDED');
        assert.equal((await statusOf(platform, 'payouts', never))?.status, 'PENDING');
      } finally {
        await platform.close();
      }
    });

    it('a SUCCEEDED payout is still asked about for returns within the return window', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        await fund(platform, merchant, '500.00');
        const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
        const orderNo = created.body.data?.orderNo as string;
        assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
        await routeTo(platform, 'payouts', orderNo);
        const fake = fakeChannel();
        const options = { channel: () => fake.channel, returnWindowMs: 3 * 86_400_000 };
        platform.advance(POLL_AFTER + 1);
        fake.answers.set(orderNo, { status: 'SUCCEEDED' });
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 1, failed: 0 });
        // Sent, and its return notification never came: a later poll finds the return.
        platform.advance(2 * POLL_AFTER + 1);
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 0, failed: 0 });
        fake.answers.set(orderNo, { status: 'REFUNDED', refundNo: 'RT-late' });
        platform.advance(4 * POLL_AFTER + 1);
        assert.deepEqual(await pollOnce(platform.services, options), { queried: 1, applied: 1, failed: 0 });
        assert.equal((await statusOf(platform, 'payouts', orderNo))?.status, 'REFUNDED');
        const kinds = (await postingsOf(platform, orderNo)).map((p) => (p as { kind: string }).kind).sort();
        assert.deepEqual(kinds, ['payout_reserve', 'payout_settle', 'refund']);

        // Another SUCCEEDED payout, past the window: no longer asked about.
        const old = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
        const oldNo = old.body.data?.orderNo as string;
        await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: oldNo });
        await routeTo(platform, 'payouts', oldNo);
        platform.advance(POLL_AFTER + 1);
        fake.answers.set(oldNo, { status: 'SUCCEEDED' });
        assert.equal((await pollOnce(platform.services, options)).applied, 1);
        platform.advance(3 * 86_400_000 + 1);
        fake.answers.set(oldNo, { status: 'REFUNDED', refundNo: 'RT-too-late' });
        assert.equal((await pollOnce(platform.services, options)).queried, 0);
        // The operator's sync still asks, and credits the return once.
        const synced = await syncOrder(platform.services, options.channel, oldNo);
        assert.deepEqual(synced, {
          orderNo: oldNo,
          channel: 'fake',
          channelStatus: 'REFUNDED',
          before: 'SUCCEEDED',
          after: 'REFUNDED',
          applied: true,
        });
        assert.equal((await syncOrder(platform.services, options.channel, oldNo)).applied, false);
        const oldKinds = (await postingsOf(platform, oldNo)).map((p) => (p as { kind: string }).kind).sort();
        assert.deepEqual(oldKinds, ['payout_reserve', 'payout_settle', 'refund']);
      } finally {
        await platform.close();
      }
    });

    it('two workers polling at once query each due order once', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        const orders: string[] = [];
        for (let i = 0; i < 6; i++) {
          const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
          orders.push(created.body.data?.orderNo as string);
          await routeTo(platform, 'payments', orders[i] as string);
        }
        const seen = new Map<string, number>();
        const channel: PollableChannel = {
          queryPayment: async ({ orderNo }) => {
            seen.set(orderNo, (seen.get(orderNo) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, 20));
            return undefined;
          },
          queryPayout: async () => undefined,
        };
        platform.advance(POLL_AFTER + 1);
        const [a, b] = await Promise.all([
          pollOnce(platform.services, { channel: () => channel, limit: 4 }),
          pollOnce(platform.services, { channel: () => channel, limit: 4 }),
        ]);
        assert.equal(a.queried + b.queried, 6);
        assert.deepEqual([...seen.values()], [1, 1, 1, 1, 1, 1]);
      } finally {
        await platform.close();
      }
    });

    it('polling cost: one full pass over stale orders (printed, not asserted)', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        const n = 1_000;
        const merchantId = (
          await platform.services.db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [
            merchant.accessKey,
          ])
        ).rows[0]?.id;
        await platform.services.db.query(
          `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url,
                                 status, expires_at, created_at, updated_at, channel)
           SELECT 'P20260101' || lpad(g::text, 10, '0'), $1, 'bench-' || g, 'BRL', 1000, 'PIX',
                  'https://merchant.example/webhook', 'PENDING', now() + interval '1 day', now(), now(), 'fake'
             FROM generate_series(1, $2::int) g`,
          [merchantId, n],
        );
        const fake = fakeChannel();
        const options = { channel: () => fake.channel };
        platform.advance(POLL_AFTER + 1_000);
        // Half the channel's answers settle the order; half say "still open".
        for (let i = 1; i <= n; i += 2)
          fake.answers.set(`P20260101${String(i).padStart(10, '0')}`, { status: 'SUCCEEDED' });
        const started = performance.now();
        let queried = 0;
        let steps = 0;
        for (;;) {
          const step = await pollOnce(platform.services, options);
          steps++;
          queried += step.queried;
          if (step.queried === 0) break;
        }
        const ms = performance.now() - started;
        assert.equal(queried, n);
        console.log(
          `[polling cost ${database}] ${n} stale payments (half settled): ${ms.toFixed(0)} ms in ${steps} steps; ` +
            `≈ ${((ms * 10_000) / n / 1000).toFixed(1)} s per 10,000`,
        );
      } finally {
        await platform.close();
      }
    });
  });
}
