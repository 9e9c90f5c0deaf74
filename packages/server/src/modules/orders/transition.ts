import type { Db, Queryable, TransactionOptions } from '../../db/db.js';
import { invalidState } from '../../errors.js';
import { formatAmount } from '../../money.js';
import { scaleOf } from '../../catalog.js';
import { type NewEvent, type OrderType, writeEvent } from '../webhooks/outbox.js';
import type { StateTable } from './states.js';

/**
 * One move of a locked order. The SQL stays with the module that owns the order's table
 * (`update`); the ledger posting with the ledger module (`post`); the event with the outbox.
 */
export interface Move<Row, S extends string> {
  readonly kind: 'move';
  readonly to: S;
  /** Who or what moves the order (recorded with the change, for the order's story). */
  readonly cause: TransitionCause;
  /** How a refused move reads after "a <status> <noun> cannot": by default `become <to>`. */
  readonly refusal?: string;
  /** Writes the move on the locked row; returns the row as updated. */
  readonly update: (tx: Queryable, now: Date) => Promise<Row>;
  /** Posts what the move means for money, inside the same transaction. */
  readonly post?: (tx: Queryable, updated: Row, now: Date) => Promise<unknown>;
  /** The webhook event a move to a final state announces. */
  readonly event?: (updated: Row) => NewEvent;
}

/**
 * Who or what moved an order: the merchant's API, the portal (a merchant's person), the channel
 * (a notification, polling or a sync), a bank file, the sandbox's helpers, an operator, expiry.
 */
export const TRANSITION_CAUSES = [
  'merchant_api',
  'portal',
  'channel',
  'bank_file',
  'sandbox',
  'operator',
  'expiry',
] as const;
export type TransitionCause = (typeof TRANSITION_CAUSES)[number];

/** One recorded state change of an order. */
export interface TransitionRecord {
  readonly orderType: OrderType;
  readonly orderNo: string;
  readonly merchantId: bigint;
  readonly from: string;
  readonly to: string;
  readonly cause: TransitionCause;
}

/** Records state changes inside the transaction that makes them (one statement for many). */
export async function recordTransitions(tx: Queryable, records: readonly TransitionRecord[], at: Date): Promise<void> {
  if (records.length === 0) return;
  await tx.query(
    `INSERT INTO order_transitions (order_type, order_no, merchant_id, from_status, to_status, cause, at)
     SELECT t.order_type, t.order_no, t.merchant_id, t.from_status, t.to_status, t.cause, $7
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])
            AS t(order_type, order_no, merchant_id, from_status, to_status, cause)`,
    [
      records.map((r) => r.orderType),
      records.map((r) => r.orderNo),
      records.map((r) => r.merchantId.toString()),
      records.map((r) => r.from),
      records.map((r) => r.to),
      records.map((r) => r.cause),
      at,
    ],
  );
}

/** An order's recorded state changes, oldest first. */
export async function transitionsOf(
  db: Queryable,
  orderNo: string,
): Promise<{ from: string; to: string; cause: TransitionCause; at: number }[]> {
  const rows = await db.query<{ from_status: string; to_status: string; cause: TransitionCause; at: Date }>(
    'SELECT from_status, to_status, cause, at FROM order_transitions WHERE order_no = $1 ORDER BY id',
    [orderNo],
  );
  return rows.rows.map((r) => ({ from: r.from_status, to: r.to_status, cause: r.cause, at: r.at.getTime() }));
}

/** The columns payment and payout rows share, which every order event starts from. */
export interface OrderColumns {
  readonly merchant_id: bigint;
  readonly order_no: string;
  readonly merchant_order_no: string;
  readonly status: string;
  readonly currency: string;
  readonly amount_minor: bigint;
  readonly webhook_url: string;
}

/**
 * The event of an order's new state: merchantOrderNo, status, currency and amount, then the
 * kind's own `fields` in wire order (undefined ones are left out of the body).
 */
export function orderEvent(
  orderType: OrderType,
  row: OrderColumns,
  fields: Readonly<Record<string, unknown>>,
  deliverUntil?: Date,
): NewEvent {
  return {
    merchantId: row.merchant_id,
    orderType,
    orderNo: row.order_no,
    status: row.status,
    webhookUrl: row.webhook_url,
    fields: {
      merchantOrderNo: row.merchant_order_no,
      status: row.status,
      currency: row.currency,
      amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
      ...fields,
    },
    ...(deliverUntil === undefined ? {} : { deliverUntil }),
  };
}

/** No move: the order answers as it is (a repeat, or a move that already happened). */
export interface Stay<Row> {
  readonly kind: 'stay';
  readonly row: Row;
}

export const stay = <Row>(row: Row): Stay<Row> => ({ kind: 'stay', row });

/** Chooses what happens to a locked order: a move, or none. */
export type Decide<Row, S extends string> = (
  row: Row,
  tx: Queryable,
) => Promise<Move<Row, S> | Stay<Row>> | Move<Row, S> | Stay<Row>;

/**
 * Applies `move` to a row the caller locked, inside the caller's transaction: checks it against
 * the state table (INVALID_STATE when the table has no such move), updates the row, posts to the
 * ledger and, for a final state, writes the order's event. Either all of it commits or none.
 */
export async function applyMove<Row extends OrderIdentity & { status: S }, S extends string>(
  tx: Queryable,
  states: StateTable<S>,
  row: Row,
  move: Move<Row, S>,
  now: Date,
): Promise<Row> {
  if (!states.moves[row.status].includes(move.to)) {
    throw invalidState(`a ${row.status} ${states.noun} cannot ${move.refusal ?? `become ${move.to}`}`);
  }
  const updated = await move.update(tx, now);
  await recordTransitions(
    tx,
    [
      {
        orderType: row.order_no.startsWith('W') ? 'PAYOUT' : 'PAYMENT',
        orderNo: row.order_no,
        merchantId: row.merchant_id,
        from: row.status,
        to: move.to,
        cause: move.cause,
      },
    ],
    now,
  );
  await move.post?.(tx, updated, now);
  if (states.final.has(move.to) && move.event) await writeEvent(tx, move.event(updated), now);
  return updated;
}

/**
 * A state change of one order in one transaction: lock the row (`lock`), let `decide` choose a
 * move or no move, then `applyMove`. Payments and payouts make every state change through here.
 */
/** What every order row has, for recording its moves. */
export interface OrderIdentity {
  readonly order_no: string;
  readonly merchant_id: bigint;
}

export function transition<Row extends OrderIdentity & { status: S }, S extends string>(
  db: Db,
  states: StateTable<S>,
  lock: (tx: Queryable) => Promise<Row>,
  decide: Decide<Row, S>,
  now: () => number,
  /** A signed request's change: its nonce recorded first, in the same transaction (see TransactionOptions). */
  options: TransactionOptions = {},
): Promise<Row> {
  return db.transaction(async (tx) => {
    const row = await lock(tx);
    const step = await decide(row, tx);
    if (step.kind === 'stay') return step.row;
    return applyMove(tx, states, row, step, new Date(now()));
  }, options);
}
