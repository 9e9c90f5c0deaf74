import { FINAL_PAYMENT_STATUSES, FINAL_PAYOUT_STATUSES, type PaymentStatus, type PayoutStatus } from '@paygate/wire';

/**
 * The state tables of payment and payout orders, as data: which status an order may move to
 * from each status. `transition` (transition.ts) checks every move against them. The statuses
 * themselves are wire types (@paygate/wire).
 */

/** An order kind's states: its name in messages, its moves, and which states are final. */
export interface StateTable<S extends string> {
  readonly noun: 'payment' | 'payout';
  readonly moves: Readonly<Record<S, readonly S[]>>;
  /** States an order reaches once (finalized_at is set, the event is written). */
  readonly final: ReadonlySet<S>;
}

/**
 * Payments. The channel moves a payment (the sandbox channel may act on a PENDING one directly);
 * the merchant may cancel a PENDING one; the sweeper expires a PENDING one whose time is up.
 */
export const PAYMENT_STATES: StateTable<PaymentStatus> = {
  noun: 'payment',
  moves: {
    PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'],
    PROCESSING: ['SUCCEEDED', 'FAILED'],
    SUCCEEDED: [],
    FAILED: [],
    EXPIRED: [],
    CANCELED: [],
  },
  final: new Set(FINAL_PAYMENT_STATUSES),
};

/**
 * Payouts. The merchant confirms a PENDING payout (PROCESSING); the channel settles it. Like the
 * payment helper, the sandbox channel may act on a PENDING payout as if it had been confirmed, so
 * a test can drive an order without the confirm step. REFUNDED is reached only by a return of a
 * SUCCEEDED payout.
 */
export const PAYOUT_STATES: StateTable<PayoutStatus> = {
  noun: 'payout',
  moves: {
    PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED'],
    PROCESSING: ['SUCCEEDED', 'FAILED'],
    SUCCEEDED: ['REFUNDED'],
    FAILED: [],
    REFUNDED: [],
  },
  final: new Set(FINAL_PAYOUT_STATUSES),
};
