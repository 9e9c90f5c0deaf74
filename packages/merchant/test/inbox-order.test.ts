/**
 * Two different events of one order processed at the same time (a payout's SUCCEEDED still being
 * retried when its REFUNDED arrives): `onUpdate` must never leave your side on the stale status.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  MemoryInboxStore,
  type OrderStatus,
  type OrderUpdate,
  type Payout,
  type WebhookEvent,
  WebhookInbox,
  type WebhookInboxOptions,
} from '@paygate/merchant';

it('concurrent SUCCEEDED and REFUNDED events of one payout leave onUpdate on REFUNDED', async () => {
  const common = {
    orderNo: 'W202601010000000001',
    merchantOrderNo: 'M-race',
    currency: 'BRL' as const,
    amount: '5.00',
  };
  const succeeded: WebhookEvent = { ...common, eventId: 'evt_RACE01', orderType: 'PAYOUT', status: 'SUCCEEDED' };
  const refunded: WebhookEvent = {
    ...common,
    eventId: 'evt_RACE02',
    orderType: 'PAYOUT',
    status: 'REFUNDED',
    refundNo: 'RF1',
    refundAmount: '5.00',
    refundTime: 1_767_225_600_000,
  };
  // The query API: the payout is REFUNDED.
  const payout = { ...common, status: 'REFUNDED' } as Payout;
  const client = {
    payouts: { query: async () => payout },
    payments: {},
  } as unknown as WebhookInboxOptions['client'];

  // Your side: the last status onUpdate wrote. The SUCCEEDED update is slow.
  let yourSide: OrderStatus | undefined;
  let releaseSlow!: () => void;
  const slow = new Promise<void>((resolve) => (releaseSlow = resolve));
  let slowStarted!: () => void;
  const started = new Promise<void>((resolve) => (slowStarted = resolve));
  const inbox = new WebhookInbox({
    store: new MemoryInboxStore(),
    client,
    onUpdate: async (update: OrderUpdate) => {
      if (update.status === 'SUCCEEDED') {
        slowStarted();
        await slow;
      }
      yourSide = update.status;
    },
  });

  const first = inbox.process(succeeded);
  await started;
  const second = inbox.process(refunded);
  // Give the REFUNDED delivery every chance to run while SUCCEEDED is inside onUpdate.
  await new Promise((resolve) => setTimeout(resolve, 20));
  releaseSlow();
  await Promise.all([first, second]);

  assert.equal(await inbox.status(succeeded), 'REFUNDED');
  assert.equal(yourSide, 'REFUNDED', 'the stale SUCCEEDED was written over the later REFUNDED');
});
