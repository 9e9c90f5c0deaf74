import type { FastifyBaseLogger } from 'fastify';
import { isUnavailable } from '../../db/db.js';
import type { ClaimedPoll } from '../../db/order-polls.js';
import { DomainError, invalidState, orderNotFound } from '../../errors.js';
import { channelUnavailable } from './errors.js';
import type { ChannelServices } from './apply.js';
import { ChannelUnavailable } from './connector.js';

/**
 * What a channel answers about one order when queried: the platform status it maps to, or
 * undefined while the channel has nothing final or new to say (still open at the channel). A
 * structural subset of the connectors' ChannelUpdate, so any connector can be polled.
 */
export interface PolledState {
  readonly status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'EXPIRED' | 'REFUNDED';
  readonly channelTradeNo?: string | undefined;
  readonly paidAmount?: string | undefined;
  readonly payer?: { name?: string | undefined; documentNumber?: string | undefined } | undefined;
  readonly refundNo?: string | undefined;
}

/** What polling needs from a connector: the two queries, and the withdrawal of an expired payment. */
export interface PollableChannel {
  queryPayment(order: { orderNo: string; channelTradeNo: string | null }): Promise<PolledState | undefined>;
  queryPayout(order: { orderNo: string; channelTradeNo: string | null }): Promise<PolledState | undefined>;
  cancelPayment?(order: {
    orderNo: string;
    channelTradeNo: string | null;
  }): Promise<{ kind: 'canceled' } | { kind: 'final'; state: PolledState }>;
}

export interface PollOptions {
  /** The channel named on an order; undefined when it is no longer configured (the order waits). */
  readonly channel: (name: string) => PollableChannel | undefined;
  /** Orders claimed per table per step (bounded work per tick). */
  readonly limit?: number;
  /** Longest wait between two queries of one order. */
  readonly maxBackoffMs?: number;
  /**
   * How long after it SUCCEEDED a payout is still asked about, for a return whose notification
   * never came (default 7 days; at most one query per maxBackoffMs once backed off).
   */
  readonly returnWindowMs?: number;
}

export interface PollResult {
  /** Orders queried at their channel. */
  readonly queried: number;
  /** Orders the answer moved (or tried to move) to another state. */
  readonly applied: number;
  /** Queries that failed (channel down, bad answer); retried after the backoff. */
  readonly failed: number;
}

/** What settling needs of an order. */
type Settled = Pick<ClaimedPoll, 'merchant_id' | 'order_no' | 'status' | 'channel'>;

/** Settles one order from its channel's answer through the same service methods as the sandbox helpers. */
async function settle(services: ChannelServices, kind: 'payment' | 'payout', order: Settled, state: PolledState) {
  const merchantId = order.merchant_id;
  const orderNo = order.order_no;
  if (state.status === order.status) return false; // nothing new (a payout still held by its channel)
  try {
    if (kind === 'payment') {
      if (state.status === 'REFUNDED') return false;
      await services.payments.applyChannelReport(
        merchantId,
        {
          orderNo,
          status: state.status,
          paidAmount: state.status === 'SUCCEEDED' ? state.paidAmount : undefined,
          channelTradeNo: state.channelTradeNo,
          payer: state.payer,
        },
        order.channel,
      );
      return true;
    }
    if (state.status === 'EXPIRED') return false;
    if (state.status === 'REFUNDED') {
      // A return seen by polling: the payout first reached SUCCEEDED at the channel.
      await services.payouts.applyChannelReport(
        merchantId,
        {
          orderNo,
          status: 'SUCCEEDED',
          channelTradeNo: state.channelTradeNo,
        },
        order.channel,
      );
      await services.payouts.returnPayout(merchantId, { orderNo, refundNo: state.refundNo }, order.channel);
      return true;
    }
    await services.payouts.applyChannelReport(
      merchantId,
      {
        orderNo,
        status: state.status,
        channelTradeNo: state.channelTradeNo,
      },
      order.channel,
    );
    return true;
  } catch (error) {
    // A notification settled it differently in the meantime (INVALID_STATE): the order is final, nothing to do.
    if (error instanceof DomainError && error.code === 'INVALID_STATE') return false;
    throw error;
  }
}

/**
 * One polling step: query the channel for channel-routed orders left PENDING or PROCESSING past
 * PAYGATE_CHANNEL_POLL_AFTER and settle them from the answer. At most `limit` payments and
 * `limit` payouts per step. Tests call it directly; `startPoller` only schedules it.
 */
export async function pollOnce(services: ChannelServices, options: PollOptions): Promise<PollResult> {
  const limit = options.limit ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 3_600_000;
  let queried = 0;
  let applied = 0;
  let failed = 0;
  for (const kind of ['payment', 'payout'] as const) {
    // Each order module claims its own rows (the poll columns live on the order).
    const claim = {
      now: new Date(services.now()),
      pollAfterMs: services.config.channelPollAfterMs,
      maxBackoffMs,
      limit,
      returnWindowMs: options.returnWindowMs ?? 7 * 86_400_000,
    };
    const due =
      kind === 'payment' ? await services.payments.claimDuePolls(claim) : await services.payouts.claimDuePolls(claim);
    for (const order of due) {
      const channel = options.channel(order.channel);
      if (!channel) continue;
      queried++;
      try {
        const query = { orderNo: order.order_no, channelTradeNo: order.channel_trade_no };
        let state: PolledState | undefined;
        if (order.expired) {
          // Its time is up: withdraw it at the channel, unless the payer got there first.
          const outcome = channel.cancelPayment ? await channel.cancelPayment(query) : undefined;
          state = outcome?.kind === 'final' ? outcome.state : { status: 'EXPIRED' };
        } else {
          state = kind === 'payment' ? await channel.queryPayment(query) : await channel.queryPayout(query);
        }
        if (state && (await settle(services, kind, order, state))) applied++;
        if (!state && kind === 'payout' && order.status === 'PENDING') {
          // The channel never got this unconfirmed payout: nothing to wait for.
          await services.payouts.stopPolling(order.id);
        }
      } catch (error) {
        if (isUnavailable(error)) throw error;
        failed++;
      }
    }
  }
  return { queried, applied, failed };
}

/** What `syncOrder` asked and did. */
export interface SyncResult {
  readonly orderNo: string;
  readonly channel: string;
  /** What the channel answered; null when it had nothing final or new to say. */
  readonly channelStatus: PolledState['status'] | null;
  /** The order's status before and after. */
  readonly before: string;
  readonly after: string;
  /** Whether the answer moved the order. */
  readonly applied: boolean;
}

/**
 * Asks an order's channel about it now and applies the answer as polling does (operator API,
 * `paygate channels sync`): for an order polling no longer asks about, such as a payout returned
 * after the return window (reconciliation shows it as a `return` line missing in the books), or
 * to settle one without waiting for its backoff. The state machine decides as always: a repeat
 * changes nothing and a return is credited once. Expiry stays polling's: a PENDING payment past
 * its time is only queried here, never withdrawn.
 */
export async function syncOrder(
  services: ChannelServices,
  channelOf: PollOptions['channel'],
  orderNo: string,
): Promise<SyncResult> {
  const kind = orderNo.startsWith('P') ? 'payment' : orderNo.startsWith('W') ? 'payout' : undefined;
  if (!kind) throw orderNotFound();
  const lookup = () => (kind === 'payment' ? services.payments.servedBy(orderNo) : services.payouts.servedBy(orderNo));
  const order = await lookup();
  if (!order) throw orderNotFound();
  if (order.channel === null)
    throw invalidState('the order is served by the sandbox channel, which has nothing to ask');
  const channel = channelOf(order.channel);
  if (!channel) throw channelUnavailable(order.channel);
  const query = { orderNo, channelTradeNo: order.channelTradeNo };
  let state: PolledState | undefined;
  try {
    state = kind === 'payment' ? await channel.queryPayment(query) : await channel.queryPayout(query);
  } catch (error) {
    if (error instanceof ChannelUnavailable) throw channelUnavailable(order.channel);
    throw error;
  }
  const asSettled = { merchant_id: order.merchantId, order_no: orderNo, status: order.status, channel: order.channel };
  if (state) await settle(services, kind, asSettled, state);
  const after = state ? ((await lookup())?.status ?? order.status) : order.status;
  return {
    orderNo,
    channel: order.channel,
    channelStatus: state?.status ?? null,
    before: order.status,
    after,
    applied: after !== order.status,
  };
}

/**
 * Runs `pollOnce` every `intervalMs` (by default every 5 s, or every PAYGATE_CHANNEL_POLL_AFTER
 * when that is shorter); the returned function stops it.
 */
export function startPoller(
  services: ChannelServices,
  log: FastifyBaseLogger,
  options: PollOptions,
  intervalMs = Math.max(250, Math.min(5_000, services.config.channelPollAfterMs)),
): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = pollOnce(services, options)
      .then((result) => {
        if (result.queried > 0) log.info(result, 'channel poll');
      })
      .catch((error: unknown) =>
        isUnavailable(error)
          ? log.warn({ err: { message: (error as Error).message } }, 'channel poll failed: the database is unavailable')
          : log.error({ err: error }, 'channel poll failed'),
      )
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** The configured channels as polling sees them: the connector registry's channel of that name. */
export function configuredChannels(services: ChannelServices): PollOptions['channel'] {
  return (name) => services.channels.get(name);
}
