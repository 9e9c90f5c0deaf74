import { randomUUID } from 'node:crypto';
import type { PaygateClient } from '../client.js';
import { InboxBusyError, PaygateError } from '../errors.js';
import type { WebhookEvent } from '../events.js';
import type { Payment, Payout } from '../types.js';
import type { InboxStore, OrderStatus, TrackedOrder } from './store.js';

/** A status change the inbox applies to your side. */
export interface OrderUpdate extends TrackedOrder {
  /** The status your side held before; `undefined` when it had none. */
  readonly previousStatus: OrderStatus | undefined;
  /** The new status: always a final one. */
  readonly status: OrderStatus;
  /** `webhook`: the event's status; `query`: the status the query API confirmed after a conflict. */
  readonly source: 'webhook' | 'query';
  /** The event being processed. */
  readonly event: WebhookEvent;
  /** The order as the query API returned it (source `query`). */
  readonly confirmed?: Payment | Payout;
}

/** What processing one event came to. */
export type InboxOutcome =
  /** The eventId was processed before; nothing was done. */
  | { readonly kind: 'duplicate'; readonly eventId: string }
  /** Your side already held the event's status; nothing was done. */
  | { readonly kind: 'unchanged'; readonly eventId: string; readonly status: OrderStatus }
  /** The event's status was applied. */
  | { readonly kind: 'applied'; readonly eventId: string; readonly update: OrderUpdate }
  /** The event conflicted with your side; the query API confirmed another status, which was applied. */
  | { readonly kind: 'confirmed'; readonly eventId: string; readonly update: OrderUpdate }
  /** The event conflicted with your side; the query API confirmed your side's status, which was kept. */
  | { readonly kind: 'kept'; readonly eventId: string; readonly status: OrderStatus };

/** Options of {@link WebhookInbox}. */
export interface WebhookInboxOptions {
  /** Where processed eventIds and order statuses are kept. */
  readonly store: InboxStore;
  /** Confirms conflicts through the query API (`payments.query` / `payouts.query`). */
  readonly client: Pick<PaygateClient, 'payments' | 'payouts'>;
  /**
   * Applies a status change to your system (mark the order paid, ship, refund…). Called before
   * the new status is recorded, so after a crash between the two it is called again with the
   * same order and status: make it idempotent per (orderNo, status).
   */
  readonly onUpdate: (update: OrderUpdate) => unknown;
  /** The clock, milliseconds since the epoch (default `Date.now`). */
  readonly clock?: () => number;
  /**
   * How long one delivery may hold an event before another delivery may take it over
   * (default 60 000 ms). Longer than `onUpdate` ever takes.
   */
  readonly leaseMs?: number;
}

const FINAL: Readonly<Record<'PAYMENT' | 'PAYOUT', ReadonlySet<string>>> = {
  PAYMENT: new Set(['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED']),
  PAYOUT: new Set(['SUCCEEDED', 'FAILED', 'REFUNDED']),
};

/**
 * Whether an order may move from `from` to `to` without asking the platform: anything may
 * follow no status or a non-final one; the one move out of a final state is a payout's
 * SUCCEEDED → REFUNDED (returned upstream).
 */
export function isForwardMove(orderType: 'PAYMENT' | 'PAYOUT', from: OrderStatus | undefined, to: OrderStatus) {
  if (from === undefined || !FINAL[orderType].has(from)) return true;
  return orderType === 'PAYOUT' && from === 'SUCCEEDED' && to === 'REFUNDED';
}

/** Compare-and-set rounds before giving up on an order that keeps changing underneath. */
const MAX_ROUNDS = 5;

/**
 * Processes verified webhook events the way the specification asks of merchants:
 *
 * 1. **Deduplicate by eventId** — a delivery of an event already processed changes nothing;
 *    one that arrives while another delivery of it is processed gets {@link InboxBusyError}
 *    (adapters answer 503, the platform retries).
 * 2. **Apply status updates idempotently per order** — a status your side already holds changes
 *    nothing; a forward move (from no status or a non-final one, or a payout's SUCCEEDED →
 *    REFUNDED) calls `onUpdate` and records the new status with a compare-and-set.
 * 3. **Confirm conflicts through the query API** — when the event contradicts a final status
 *    your side holds (a late SUCCEEDED after REFUNDED, or FAILED against SUCCEEDED), the order
 *    is queried and the confirmed final status wins: applied when it differs from yours, kept
 *    when it is yours.
 *
 * Events of one order are applied one at a time within this inbox (this process), so `onUpdate`
 * calls for one order never overlap.
 *
 * If anything throws, the claim is released and the error propagates (adapters answer 500), so
 * the platform's retry processes the event again.
 */
export class WebhookInbox {
  readonly #store: InboxStore;
  readonly #client: WebhookInboxOptions['client'];
  readonly #onUpdate: WebhookInboxOptions['onUpdate'];
  readonly #clock: () => number;
  readonly #leaseMs: number;
  /** Per order, the tail of the events being applied: `onUpdate` calls for one order never overlap. */
  readonly #applying = new Map<string, Promise<unknown>>();

  /** An inbox over a store, with the client that confirms conflicts and your `onUpdate`. */
  constructor(options: WebhookInboxOptions) {
    this.#store = options.store;
    this.#client = options.client;
    this.#onUpdate = options.onUpdate;
    this.#clock = options.clock ?? Date.now;
    this.#leaseMs = options.leaseMs ?? 60_000;
  }

  /**
   * Processes one verified event.
   *
   * @throws {@link InboxBusyError} while another delivery of the same event is processed.
   */
  async process(event: WebhookEvent): Promise<InboxOutcome> {
    const order = { orderType: event.orderType, orderNo: event.orderNo };
    const token = randomUUID();
    const claim = await this.#store.claimEvent(event.eventId, {
      order,
      nowMs: this.#clock(),
      leaseMs: this.#leaseMs,
      token,
    });
    if (claim === 'done') return { kind: 'duplicate', eventId: event.eventId };
    if (claim === 'busy') throw new InboxBusyError(event.eventId, Math.max(1, Math.ceil(this.#leaseMs / 1000)));
    try {
      const outcome = await this.#serialized(`${event.orderType}:${event.orderNo}`, () => this.#apply(event));
      await this.#store.completeEvent(event.eventId, this.#clock());
      return outcome;
    } catch (error) {
      await this.#store.releaseEvent(event.eventId, token).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Records the status your side holds for an order, learned other than by webhook (at
   * creation, PENDING; after your own cancel, CANCELED). Later events are judged against it.
   * Only forward moves are recorded (see {@link isForwardMove}): a PENDING learned late never
   * overwrites the final status a webhook already applied. Resolves whether it was recorded
   * (`true` too when the status was already held).
   */
  async recordStatus(order: TrackedOrder, status: OrderStatus): Promise<boolean> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const current = await this.#store.orderStatus(order);
      if (current === status) return true;
      if (!isForwardMove(order.orderType, current, status)) return false;
      if (await this.#store.setOrderStatus(order, current, status, this.#clock())) return true;
    }
    throw new PaygateError(`order ${order.orderNo} kept changing while its status was recorded`);
  }

  /** The status your side holds for an order, as the inbox recorded it. */
  status(order: { orderType: 'PAYMENT' | 'PAYOUT'; orderNo: string }): Promise<OrderStatus | undefined> {
    return this.#store.orderStatus(order);
  }

  /**
   * Runs `task` after every earlier task of the same order settled. `onUpdate` is called before
   * the compare-and-set, so two events of one order applied at once (a payout's SUCCEEDED retried
   * while its REFUNDED arrives) could otherwise finish their `onUpdate` calls in the wrong order.
   */
  async #serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (this.#applying.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => undefined);
    this.#applying.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.#applying.get(key) === tail) this.#applying.delete(key);
    }
  }

  async #apply(event: WebhookEvent): Promise<InboxOutcome> {
    const order: TrackedOrder = {
      orderType: event.orderType,
      orderNo: event.orderNo,
      merchantOrderNo: event.merchantOrderNo,
    };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const local = await this.#store.orderStatus(order);
      if (local === event.status) return { kind: 'unchanged', eventId: event.eventId, status: local };

      if (isForwardMove(event.orderType, local, event.status)) {
        const update: OrderUpdate = { ...order, previousStatus: local, status: event.status, source: 'webhook', event };
        if (await this.#record(update)) return { kind: 'applied', eventId: event.eventId, update };
        continue;
      }

      // The event contradicts a final status held here: the query API decides.
      const confirmed =
        event.orderType === 'PAYMENT'
          ? await this.#client.payments.query({ orderNo: event.orderNo })
          : await this.#client.payouts.query({ orderNo: event.orderNo });
      if (!FINAL[event.orderType].has(confirmed.status)) {
        throw new PaygateError(
          `event ${event.eventId} says ${event.status}, this side holds ${local}, and the query API says ` +
            `${confirmed.status}, which is not final; the event will be retried`,
        );
      }
      if (confirmed.status === local) return { kind: 'kept', eventId: event.eventId, status: local };
      const update: OrderUpdate = {
        ...order,
        previousStatus: local,
        status: confirmed.status,
        source: 'query',
        event,
        confirmed,
      };
      if (await this.#record(update)) return { kind: 'confirmed', eventId: event.eventId, update };
    }
    throw new PaygateError(`order ${event.orderNo} kept changing while event ${event.eventId} was applied`);
  }

  /** Calls `onUpdate`, then records the status if nothing changed it meanwhile. */
  async #record(update: OrderUpdate): Promise<boolean> {
    await this.#onUpdate(update);
    return this.#store.setOrderStatus(update, update.previousStatus, update.status, this.#clock());
  }
}
