import type { Config } from '../../config.js';
import type { Db, InTransaction, Queryable } from '../../db/db.js';
import type { ClaimedPoll, PollClaim, ServedOrder } from '../../db/order-polls.js';
import { DomainError } from '../../errors.js';
import type { ChannelPayoutOrder, ChannelUpdate } from './connector.js';
import type { ChannelRegistry } from './registry.js';

/**
 * What the channels layer asks of an order service; the payments and payouts services fit it.
 * Declared here, in this module's terms, because those services import the connectors: taking
 * their own types would tie the two modules in a loop (as the ledger takes postings, not rows).
 */
export interface ChannelOrders {
  /** The order an order number names, with the channel that serves it (undefined: no such order). */
  servedBy(orderNo: string): Promise<ServedOrder | undefined>;
  /**
   * Moves the order as its channel reports; `locked` is told the status its row lock found.
   * `within`: inside the caller's transaction (a bank file applied as a whole).
   */
  applyChannelReport(
    merchantId: bigint,
    input: unknown,
    channel: string | null,
    locked?: (status: string) => void,
    also?: InTransaction<{ orderNo: string; from: string; to: string }>,
    within?: Queryable,
  ): Promise<{ readonly status: string }>;
  /** Claims the orders due for a status query at their channel. */
  claimDuePolls(claim: PollClaim): Promise<ClaimedPoll[]>;
}

/** What the channels layer asks of the payments service besides ChannelOrders. */
export interface ChannelPayments extends ChannelOrders {
  /** An open payment of `channel` by the channel's id of it. */
  openByChannelTradeNo(channel: string, channelTradeNo: string): Promise<string | undefined>;
  /**
   * The credit transfers received for payments by bank transfer (kind sepa-sftp) of one bank
   * file, in its order, inside `tx` (the file's transaction): each settles the first payment of
   * its `orderNos` it is for, or the answer says why not (a payment an earlier credit settled is
   * final for the later ones); one outcome per credit, in order.
   */
  settleBankCredits(
    tx: Queryable,
    channel: string,
    credits: readonly {
      readonly orderNos: readonly string[];
      readonly amountMinor: bigint;
      readonly currency: string;
      readonly channelTradeNo?: string | undefined;
      readonly payerName?: string | undefined;
    }[],
  ): Promise<
    readonly {
      readonly outcome: 'matched' | 'unknown_reference' | 'other_amount' | 'payment_final' | 'expired';
      readonly orderNo?: string;
    }[]
  >;
}

/** What the channels layer asks of the payouts service besides ChannelOrders. */
export interface ChannelPayouts extends ChannelOrders {
  /** Returns a sent payout as its channel reports. */
  returnPayout(
    merchantId: bigint,
    input: unknown,
    channel: string | null,
    also?: InTransaction<{ orderNo: string; from: string; to: string }>,
    within?: Queryable,
  ): Promise<{ readonly status: string }>;
  /** No more polls of a PENDING payout its channel never got. */
  stopPolling(id: bigint): Promise<void>;
  /**
   * Many final reports of one channel at once, inside `tx` (a bank file): each decided as
   * `applyChannelReport` decides it; answers each order's outcome.
   */
  applyChannelReports(
    tx: Queryable,
    channel: string,
    reports: readonly {
      readonly orderNo: string;
      readonly status: 'SUCCEEDED' | 'FAILED';
      readonly channelTradeNo?: string;
    }[],
  ): Promise<ReadonlyMap<string, ApplyOutcome>>;
  /** Channels that send payouts in files (sepa-sftp): when the oldest unbatched confirmed payout was confirmed. */
  oldestUnbatched(channel: string): Promise<Date | undefined>;
  /** How many confirmed payouts of `channel` wait for a batch, and the oldest one's confirmation. */
  unbatched(channel: string): Promise<{ readonly count: number; readonly oldest: Date } | undefined>;
  /** Assigns the channel's unbatched payouts confirmed by `until` to `batch`, inside `tx`. */
  assignBatch(
    tx: Queryable,
    channel: string,
    until: Date,
    batch: string,
  ): Promise<readonly (ChannelPayoutOrder & { readonly merchantId: bigint; readonly amountMinor: bigint })[]>;
}

/** The services the channels layer is handed (the assembly hands it all of them). */
export interface ChannelServices {
  readonly config: Config;
  readonly db: Db;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  readonly channels: ChannelRegistry;
  readonly payments: ChannelPayments;
  readonly payouts: ChannelPayouts;
}

/**
 * What applying an update did: `applied` when the order's status changed while it was applied,
 * `unchanged` when the order already had that state (a repeat, or news polling or another
 * notification brought first), `ignored` when the state machine refused the move.
 */
export type ApplyOutcome = 'applied' | 'unchanged' | 'ignored' | 'unknown_order' | 'wrong_channel';

export interface ApplyResult {
  readonly outcome: ApplyOutcome;
  readonly detail?: string | undefined;
}

/** The order an update names, with the channel that serves it (NULL: the built-in sandbox). */
function owner(services: ChannelServices, update: ChannelUpdate) {
  return update.kind === 'payment'
    ? services.payments.servedBy(update.reference)
    : services.payouts.servedBy(update.reference);
}

/**
 * Applies one channel update through the same service methods the sandbox helpers use
 * (applyChannelReport, returnPayout): the state machine decides, so a repeat or a reordered
 * update is harmless — a repeated state changes nothing, a final order never moves again, a late
 * SUCCEEDED after REFUNDED is a no-op, a return is credited once (per order and per refundNo),
 * and payer details come from the channel and freeze with the final state. Notifications and
 * polling both come through here.
 */
export async function applyUpdate(
  services: ChannelServices,
  channel: string,
  update: ChannelUpdate,
  /**
   * Apply inside this transaction, the order already known (kind sepa-sftp: every update of a
   * bank file commits together with the file's record, or none does).
   */
  within?: { readonly tx: Queryable; readonly order: Pick<ServedOrder, 'merchantId' | 'channel'> },
): Promise<ApplyResult> {
  const order = within?.order ?? (await owner(services, update));
  const tx = within?.tx;
  if (!order) return { outcome: 'unknown_order' };
  if (order.channel !== channel) {
    return { outcome: 'wrong_channel', detail: `the order is served by ${order.channel ?? 'the sandbox channel'}` };
  }
  const merchantId = order.merchantId;
  const orderNo = update.reference;
  /** The order's status under its row lock, before this update (the first lock taken, for a return). */
  let before: string | undefined;
  const locked = (status: string) => {
    before ??= status;
  };
  /** Applied or unchanged: whether the update moved the order from the status its lock found. */
  const moved = (view: { status: string }): ApplyResult =>
    view.status !== before
      ? { outcome: 'applied' }
      : { outcome: 'unchanged', detail: `the order was already ${before}` };
  try {
    if (update.kind === 'payment') {
      if (update.status === 'REFUNDED') return { outcome: 'ignored', detail: 'payments are not refunded by channels' };
      const view = await services.payments.applyChannelReport(
        merchantId,
        {
          orderNo,
          status: update.status,
          paidAmount: update.status === 'SUCCEEDED' ? update.paidAmount : undefined,
          channelTradeNo: update.channelTradeNo,
          payer: update.payer,
          failureReason: update.status === 'FAILED' ? update.failureReason : undefined,
        },
        channel,
        locked,
      );
      return moved(view);
    }
    if (update.status === 'EXPIRED') return { outcome: 'ignored', detail: 'payouts do not expire' };
    if (update.status === 'REFUNDED') {
      // A return implies the payout was sent: settle it first if that news has not arrived (reordering).
      await services.payouts.applyChannelReport(
        merchantId,
        {
          orderNo,
          status: 'SUCCEEDED',
          channelTradeNo: update.channelTradeNo,
        },
        channel,
        locked,
        undefined,
        tx,
      );
      return moved(
        await services.payouts.returnPayout(merchantId, { orderNo, refundNo: update.refundNo }, channel, undefined, tx),
      );
    }
    const view = await services.payouts.applyChannelReport(
      merchantId,
      {
        orderNo,
        status: update.status,
        channelTradeNo: update.channelTradeNo,
      },
      channel,
      locked,
      undefined,
      tx,
    );
    return moved(view);
  } catch (error) {
    // The state machine refused the move (the order is final in another state): nothing changes.
    if (error instanceof DomainError && (error.code === 'INVALID_STATE' || error.code === 'VALIDATION_FAILED')) {
      return { outcome: 'ignored', detail: error.message };
    }
    throw error;
  }
}
