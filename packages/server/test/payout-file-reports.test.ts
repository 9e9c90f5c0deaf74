/**
 * `PayoutService.applyChannelReports`, the path a bank file's final reports take (thousands of
 * payouts in one transaction): each report decided as `applyChannelReport` decides one, and a
 * payout another transaction moves meanwhile decided as it is once locked.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createMerchant, databases, post, startTestPlatform, type TestMerchant, type TestPlatform } from './harness.js';
import { eventsOf, fund, payoutInput, postingsOf } from './money-harness.js';

const CHANNEL = 'bank';

/** A payout of `amount`, confirmed (PROCESSING) unless `confirm` is false, routed to `channel`. */
async function payout(
  platform: TestPlatform,
  merchant: TestMerchant,
  { confirm = true, channel = CHANNEL }: { confirm?: boolean; channel?: string } = {},
): Promise<string> {
  const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const orderNo = created.body.data?.orderNo as string;
  if (confirm) assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
  await platform.services.db.query('UPDATE payouts SET channel = $2 WHERE order_no = $1', [orderNo, channel]);
  return orderNo;
}

async function statusOf(platform: TestPlatform, orderNo: string): Promise<string | undefined> {
  const rows = await platform.services.db.query<{ status: string }>('SELECT status FROM payouts WHERE order_no = $1', [
    orderNo,
  ]);
  return rows.rows[0]?.status;
}

async function transitionsOf(platform: TestPlatform, orderNo: string): Promise<string[]> {
  const rows = await platform.services.db.query<{ from_status: string; to_status: string }>(
    'SELECT from_status, to_status FROM order_transitions WHERE order_no = $1 ORDER BY id',
    [orderNo],
  );
  return rows.rows.map((row) => `${row.from_status}→${row.to_status}`);
}

for (const database of databases()) {
  describe(`a bank file's payout reports (${database})`, () => {
    it('each report decided as one would be: applied, repeated, final already, refused, unknown, another channel', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const merchant = await createMerchant(platform);
        await fund(platform, merchant, '2000.00');
        const [paid, rejected, twice, failedBefore, pending] = [
          await payout(platform, merchant),
          await payout(platform, merchant),
          await payout(platform, merchant),
          await payout(platform, merchant),
          await payout(platform, merchant, { confirm: false }),
        ];
        const elsewhere = await payout(platform, merchant, { channel: 'other' });
        const apply = (reports: Parameters<typeof platform.services.payouts.applyChannelReports>[2]) =>
          platform.services.db.transaction((tx) => platform.services.payouts.applyChannelReports(tx, CHANNEL, reports));
        assert.deepEqual(
          [...(await apply([{ orderNo: failedBefore, status: 'FAILED', channelTradeNo: 'MSG-0' }]))],
          [[failedBefore, 'applied']],
        );

        const outcomes = await apply([
          { orderNo: paid, status: 'SUCCEEDED', channelTradeNo: 'MSG-1' },
          { orderNo: rejected, status: 'FAILED', channelTradeNo: 'MSG-1' },
          { orderNo: twice, status: 'SUCCEEDED', channelTradeNo: 'MSG-1' },
          { orderNo: failedBefore, status: 'SUCCEEDED', channelTradeNo: 'MSG-1' },
          { orderNo: pending, status: 'SUCCEEDED' },
          { orderNo: elsewhere, status: 'SUCCEEDED', channelTradeNo: 'MSG-1' },
          { orderNo: 'W202601010000000000', status: 'SUCCEEDED', channelTradeNo: 'MSG-1' },
          // The same payout again later in the file: the first report moved it, this one finds it moved.
          { orderNo: twice, status: 'FAILED', channelTradeNo: 'MSG-1' },
        ]);
        assert.deepEqual(Object.fromEntries(outcomes), {
          [paid]: 'applied',
          [rejected]: 'applied',
          [twice]: 'ignored',
          [failedBefore]: 'ignored',
          [pending]: 'applied',
          [elsewhere]: 'wrong_channel',
          W202601010000000000: 'unknown_order',
        });
        const again = await apply([
          { orderNo: paid, status: 'SUCCEEDED', channelTradeNo: 'MSG-1' },
          { orderNo: rejected, status: 'FAILED', channelTradeNo: 'MSG-1' },
        ]);
        assert.deepEqual(Object.fromEntries(again), { [paid]: 'unchanged', [rejected]: 'unchanged' });

        const statuses = Object.fromEntries(
          await Promise.all(
            [paid, rejected, twice, failedBefore, pending, elsewhere].map(
              async (orderNo) => [orderNo, await statusOf(platform, orderNo)] as const,
            ),
          ),
        );
        assert.deepEqual(statuses, {
          [paid]: 'SUCCEEDED',
          [rejected]: 'FAILED',
          [twice]: 'SUCCEEDED',
          [failedBefore]: 'FAILED',
          [pending]: 'SUCCEEDED',
          [elsewhere]: 'PROCESSING',
        });
        // Each move recorded from the status it left, with one event and one posting.
        assert.deepEqual(await transitionsOf(platform, pending), ['PENDING→SUCCEEDED']);
        assert.deepEqual((await transitionsOf(platform, twice)).slice(-1), ['PROCESSING→SUCCEEDED']);
        for (const orderNo of [paid, rejected, twice, pending]) {
          assert.equal((await eventsOf(platform, orderNo)).length, 1, orderNo);
        }
        const kinds = async (orderNo: string) => (await postingsOf(platform, orderNo)).map((p) => p.kind);
        assert.deepEqual((await kinds(paid)).slice(-1), ['payout_settle']);
        assert.deepEqual((await kinds(rejected)).slice(-1), ['payout_release']);
        // The channel's own reference where the file gave one; the payout kept its own otherwise.
        const tradeNo = await platform.services.db.query<{ order_no: string; channel_trade_no: string | null }>(
          'SELECT order_no, channel_trade_no FROM payouts WHERE order_no = ANY($1::text[])',
          [[paid, pending]],
        );
        const byOrder = Object.fromEntries(tradeNo.rows.map((row) => [row.order_no, row.channel_trade_no]));
        assert.equal(byOrder[paid], 'MSG-1');
        assert.match(byOrder[pending] ?? '', /^CHW/);
      } finally {
        await platform.close();
      }
    });

    if (database === 'postgres') {
      it('a payout moved by another transaction while the file waits for its lock: decided as it is then', async () => {
        const platform = await startTestPlatform({ database, config: { runWorkers: false } });
        try {
          const merchant = await createMerchant(platform);
          await fund(platform, merchant, '500.00');
          const pending = await payout(platform, merchant, { confirm: false });
          const other = await payout(platform, merchant);
          const db = platform.services.db;
          // Another transaction moves the PENDING payout to PROCESSING and holds its lock.
          let release: () => void = () => undefined;
          const held = new Promise<void>((resolve) => (release = resolve));
          let moved: () => void = () => undefined;
          const locked = new Promise<void>((resolve) => (moved = resolve));
          const mover = db.transaction(async (tx) => {
            await tx.query(`UPDATE payouts SET status = 'PROCESSING' WHERE order_no = $1`, [pending]);
            moved();
            await held;
          });
          await locked;
          const file = db.transaction((tx) =>
            platform.services.payouts.applyChannelReports(tx, CHANNEL, [
              { orderNo: pending, status: 'SUCCEEDED', channelTradeNo: 'MSG-2' },
              { orderNo: other, status: 'SUCCEEDED', channelTradeNo: 'MSG-2' },
            ]),
          );
          // The file's statement waits for the row's lock before the mover commits.
          for (let i = 0; i < 200; i++) {
            const waiting = await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE payouts p%'`,
            );
            if ((waiting.rows[0]?.n ?? 0) > 0) break;
            await sleep(25);
          }
          release();
          await mover;
          const outcomes = await file;
          assert.deepEqual(Object.fromEntries(outcomes), { [pending]: 'applied', [other]: 'applied' });
          assert.equal(await statusOf(platform, pending), 'SUCCEEDED');
          // Recorded from the status it had when the file moved it, not the one the file first read.
          assert.deepEqual(await transitionsOf(platform, pending), ['PROCESSING→SUCCEEDED']);
          assert.equal((await eventsOf(platform, pending)).length, 1);
        } finally {
          await platform.close();
        }
      });
    }
  });
}
