import type { OrderType, PaymentStatus, PayoutStatus } from '../types.js';

/** A payment or payout status. */
export type OrderStatus = PaymentStatus | PayoutStatus;

/** Names one order: its type and the platform's order number. */
export interface OrderKey {
  readonly orderType: OrderType;
  readonly orderNo: string;
}

/** An order with your own order number, as the inbox records it. */
export interface TrackedOrder extends OrderKey {
  readonly merchantOrderNo: string;
}

/**
 * What claiming an event found: `claimed` (process it now), `done` (processed before: a
 * duplicate delivery), or `busy` (another delivery holds a live claim on it).
 */
export type ClaimResult = 'claimed' | 'done' | 'busy';

/** A claim on an event: for which order, when, for how long, and who holds it. */
export interface EventClaim {
  readonly order: OrderKey;
  readonly nowMs: number;
  readonly leaseMs: number;
  /** Unique per processing attempt: only its holder may release the claim. */
  readonly token: string;
}

/**
 * Storage behind {@link WebhookInbox}: which events were processed (deduplication by eventId),
 * and which status your side holds for each order. Every method must be atomic on its own; the
 * SDK ships {@link MemoryInboxStore} (one process, tests) and {@link SqlInboxStore} (PostgreSQL,
 * PGlite). Implement it over your own tables to keep order status next to your orders.
 */
export interface InboxStore {
  /**
   * Claims an event for processing. `claimed` when the eventId is new, or when an earlier claim
   * was neither completed nor released and its lease ran out (its process died); `done` when it
   * was completed; `busy` while another claim's lease runs.
   */
  claimEvent(eventId: string, claim: EventClaim): Promise<ClaimResult>;
  /** Marks a claimed event processed: later claims of it answer `done`. */
  completeEvent(eventId: string, nowMs: number): Promise<void>;
  /**
   * Drops the claim `token` made, after its processing failed, so that the next delivery
   * processes the event. A claim taken over since (the lease ran out) is left alone.
   */
  releaseEvent(eventId: string, token: string): Promise<void>;
  /** The status your side holds for an order; `undefined` when it has none. */
  orderStatus(order: OrderKey): Promise<OrderStatus | undefined>;
  /**
   * Compare-and-set of an order's status: sets `next` only if the stored status is still
   * `expected` (`undefined`: no status stored). Resolves whether it did.
   */
  setOrderStatus(
    order: TrackedOrder,
    expected: OrderStatus | undefined,
    next: OrderStatus,
    nowMs: number,
  ): Promise<boolean>;
}

/**
 * An {@link InboxStore} in memory: for tests and single-process demos. Everything is lost when the
 * process exits, so deduplication does not survive a restart.
 */
export class MemoryInboxStore implements InboxStore {
  readonly #events = new Map<string, { done: boolean; leaseUntil: number; token?: string }>();
  readonly #orders = new Map<string, OrderStatus>();

  async claimEvent(eventId: string, claim: EventClaim): Promise<ClaimResult> {
    const existing = this.#events.get(eventId);
    if (existing?.done) return 'done';
    if (existing && existing.leaseUntil >= claim.nowMs) return 'busy';
    this.#events.set(eventId, { done: false, leaseUntil: claim.nowMs + claim.leaseMs, token: claim.token });
    return 'claimed';
  }

  async completeEvent(eventId: string): Promise<void> {
    this.#events.set(eventId, { done: true, leaseUntil: 0 });
  }

  async releaseEvent(eventId: string, token: string): Promise<void> {
    const existing = this.#events.get(eventId);
    if (existing?.done === false && existing.token === token) this.#events.delete(eventId);
  }

  async orderStatus(order: OrderKey): Promise<OrderStatus | undefined> {
    return this.#orders.get(`${order.orderType}:${order.orderNo}`);
  }

  async setOrderStatus(order: TrackedOrder, expected: OrderStatus | undefined, next: OrderStatus): Promise<boolean> {
    const key = `${order.orderType}:${order.orderNo}`;
    if (this.#orders.get(key) !== expected) return false;
    this.#orders.set(key, next);
    return true;
  }
}
