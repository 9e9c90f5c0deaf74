import type { Queryable } from '../../db/db.js';
import { newEventId } from '../../ids.js';
import { afterCommit } from '../../observability/traced-db.js';
import { activeTraceparent } from '../../observability/tracing.js';
import { countFinalOrder } from '../../observability/metrics.js';

export type OrderType = 'PAYMENT' | 'PAYOUT';

/** What a new webhook event says, apart from its eventId (which the outbox assigns). */
export interface NewEvent {
  readonly merchantId: bigint;
  readonly orderType: OrderType;
  readonly orderNo: string;
  readonly status: string;
  readonly webhookUrl: string;
  /** Body members after eventId and orderType, in wire order; undefined members are left out. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Retries stop at this time whatever the schedule (REFUNDED: created + 24 h). */
  readonly deliverUntil?: Date;
}

/**
 * Writes a webhook event into the outbox, inside the caller's transaction, so that a final state
 * can never exist without its event. The body bytes are fixed here and never change; one order
 * has at most one event per status (a repeat returns the existing eventId and writes nothing).
 */
export async function writeEvent(tx: Queryable, event: NewEvent, now: Date): Promise<string> {
  const eventId = newEventId(now.getTime());
  const body = Buffer.from(
    JSON.stringify({ eventId, orderType: event.orderType, orderNo: event.orderNo, ...event.fields }),
    'utf8',
  );
  const inserted = await tx.query<{ event_id: string }>(
    `INSERT INTO events (event_id, merchant_id, order_type, order_no, status, webhook_url, body, created_at, deliver_until,
                         next_attempt_at, traceparent)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $8, $10)
     ON CONFLICT (order_type, order_no, status) DO NOTHING
     RETURNING event_id`,
    [
      eventId,
      event.merchantId,
      event.orderType,
      event.orderNo,
      event.status,
      event.webhookUrl,
      body,
      now,
      event.deliverUntil ?? null,
      // The trace of the request (or job) moving the order: the delivery attempts join it.
      activeTraceparent(),
    ],
  );
  if (inserted.rows[0]) {
    // Every final state (and a payout's REFUNDED) writes exactly one event: count it once durable.
    afterCommit(tx, () => countFinalOrder(event.orderType, event.status));
    return inserted.rows[0].event_id;
  }
  const existing = await tx.query<{ event_id: string }>(
    'SELECT event_id FROM events WHERE order_type = $1 AND order_no = $2 AND status = $3',
    [event.orderType, event.orderNo, event.status],
  );
  return existing.rows[0]?.event_id as string;
}

/**
 * Writes many events at once, inside the caller's transaction (a bank file moving thousands of
 * payouts together): the same rows `writeEvent` writes, one statement for all. An order's event
 * for a status written before stays as it was (nothing new for it). Answers how many were new.
 */
export async function writeEvents(tx: Queryable, events: readonly NewEvent[], now: Date): Promise<number> {
  if (events.length === 0) return 0;
  const ids = events.map(() => newEventId(now.getTime()));
  // The bodies go as text and are stored as their UTF-8 bytes (convert_to): the same bytes writeEvent stores.
  const bodies = events.map((event, i) =>
    JSON.stringify({ eventId: ids[i], orderType: event.orderType, orderNo: event.orderNo, ...event.fields }),
  );
  const inserted = await tx.query<{ order_type: string; status: string }>(
    `INSERT INTO events (event_id, merchant_id, order_type, order_no, status, webhook_url, body, created_at, deliver_until,
                         next_attempt_at, traceparent)
     SELECT t.event_id, t.merchant_id, t.order_type, t.order_no, t.status, t.webhook_url, convert_to(t.body, 'UTF8'), $8,
            t.deliver_until, $8, $9
       FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $10::timestamptz[])
            AS t(event_id, merchant_id, order_type, order_no, status, webhook_url, body, deliver_until)
     ON CONFLICT (order_type, order_no, status) DO NOTHING
     RETURNING order_type, status`,
    [
      ids,
      events.map((event) => event.merchantId.toString()),
      events.map((event) => event.orderType),
      events.map((event) => event.orderNo),
      events.map((event) => event.status),
      events.map((event) => event.webhookUrl),
      bodies,
      now,
      activeTraceparent(),
      events.map((event) => event.deliverUntil ?? null),
    ],
  );
  afterCommit(tx, () => {
    for (const row of inserted.rows) countFinalOrder(row.order_type as OrderType, row.status);
  });
  return inserted.rows.length;
}
