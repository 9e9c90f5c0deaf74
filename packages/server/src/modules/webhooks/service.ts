import type { DeliveryAttempt, DeliveryStatus, OrderType, WebhookEvent } from '@paygate/wire';
import type { InTransaction, Queryable } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { countRows, keysetPage } from '../../db/paging.js';
import { checkTimeRange } from '../../validation.js';
import { DomainError, validationFailed } from '../../errors.js';
import { webhookErrors } from './errors.js';
import { EVENT_ID } from '../../ids.js';
import { WebhookDelivery } from './delivery.js';

export type { DeliveryStatus };

interface EventRow {
  id: bigint;
  event_id: string;
  merchant_id: bigint;
  order_type: OrderType;
  order_no: string;
  status: string;
  webhook_url: string;
  body: Uint8Array;
  created_at: Date;
  deliver_until: Date | null;
  delivery_status: DeliveryStatus;
  next_attempt_at: Date | null;
  attempt_count: number;
  attempt_budget: number | null;
  delivered_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  /** The trace of the request that wrote the event (tracing on), which its attempts join. */
  traceparent: string | null;
}

interface AttemptRow {
  attempt: number;
  started_at: Date;
  latency_ms: number;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
}

/** One event and one delivery attempt as merchants and operators see them (the wire schemas). */
export type EventView = WebhookEvent;
export type AttemptView = DeliveryAttempt;
/** Events one `resendFailed` call resends at most. */
export const RESEND_FAILED_MAX = 1_000;

/**
 * What a deliberate resend sets ($2: now): a pending event becomes due now with its budget; a
 * delivered or failed one gets exactly one more attempt.
 */
const RESEND_SET = `attempt_budget = CASE WHEN delivery_status = 'pending' THEN attempt_budget ELSE attempt_count + 1 END,
              delivery_status = 'pending', next_attempt_at = $2, lease_owner = NULL, lease_expires_at = NULL,
              -- A deliberate resend is not an automatic retry: a closed window opens for it.
              deliver_until = CASE WHEN deliver_until IS NOT NULL AND deliver_until < $2 THEN $2 + interval '1 hour' ELSE deliver_until END`;

/** Filters of a merchant's event list. */
export interface EventFilters {
  readonly orderNo?: string | undefined;
  /** Delivery status: pending, delivered or failed. */
  readonly status?: string | undefined;
  /** PAYMENT or PAYOUT. */
  readonly orderType?: string | undefined;
  /** The order status the event announces (SUCCEEDED, FAILED, …). */
  readonly orderStatus?: string | undefined;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly pageSize: number;
  readonly cursor?: string | undefined;
}

function checkEventFilters(filters: Omit<EventFilters, 'pageSize' | 'cursor'>): void {
  const errors = [];
  if (filters.status !== undefined && !['pending', 'delivered', 'failed'].includes(filters.status)) {
    errors.push({ field: 'status', message: 'one of delivered, pending, failed' });
  }
  if (filters.orderType !== undefined && !['PAYMENT', 'PAYOUT'].includes(filters.orderType)) {
    errors.push({ field: 'type', message: 'PAYMENT or PAYOUT' });
  }
  if (filters.orderStatus !== undefined && !/^[A-Z]{1,20}$/.test(filters.orderStatus)) {
    errors.push({ field: 'orderStatus', message: 'an order status (SUCCEEDED, FAILED, …)' });
  }
  if (errors.length > 0) throw validationFailed(errors);
  checkTimeRange(filters);
}

const eventEquals = (merchantId: bigint, filters: Omit<EventFilters, 'pageSize' | 'cursor'>) => ({
  merchant_id: merchantId,
  order_no: filters.orderNo,
  delivery_status: filters.status,
  order_type: filters.orderType,
  status: filters.orderStatus,
});

const timeRange = (filters: { from?: number | undefined; to?: number | undefined }) => ({
  createdFrom: filters.from,
  createdTo: filters.to,
});
/**
 * The outbox as merchants and operators see it: events and their attempts, listed, counted and
 * resent. Delivery itself (claim, send, settle) is {@link WebhookDelivery}'s (delivery.ts).
 */
export class Webhooks extends WebhookDelivery {
  private view(row: EventRow): EventView {
    return {
      eventId: row.event_id,
      orderType: row.order_type,
      orderNo: row.order_no,
      status: row.status,
      deliveryStatus: row.delivery_status,
      attempts: row.attempt_count,
      createdAt: row.created_at.getTime(),
      deliveredAt: row.delivered_at?.getTime() ?? null,
      nextAttemptAt: row.delivery_status === 'pending' ? (row.next_attempt_at?.getTime() ?? null) : null,
      lastStatusCode: row.last_status_code,
      lastError: row.last_error,
    };
  }

  /** Every attempt of each of these events, oldest first, in one query. */
  async attempts(eventIds: readonly string[]): Promise<Map<string, AttemptView[]>> {
    const rows = await this.db.query<AttemptRow & { event_id: string }>(
      `SELECT event_id, attempt, started_at, latency_ms, status_code, response_excerpt, error
         FROM delivery_attempts WHERE event_id = ANY($1::text[]) ORDER BY event_id, attempt`,
      [eventIds],
    );
    const byEvent = new Map<string, AttemptView[]>(eventIds.map((id) => [id, []]));
    for (const a of rows.rows) {
      byEvent.get(a.event_id)?.push({
        attempt: a.attempt,
        startedAt: a.started_at.getTime(),
        latencyMs: a.latency_ms,
        statusCode: a.status_code,
        responseExcerpt: a.response_excerpt,
        error: a.error,
      });
    }
    return byEvent;
  }

  /**
   * All events of one order, oldest first, with their body, destination and every attempt (the
   * portal's order page).
   */
  async ofOrder(
    merchantId: bigint,
    orderType: string,
    orderNo: string,
  ): Promise<(EventView & { webhookUrl: string; body: string; attemptLog: AttemptView[] })[]> {
    const result = await this.db.query<EventRow>(
      'SELECT * FROM events WHERE merchant_id = $1 AND order_type = $2 AND order_no = $3 ORDER BY created_at, id',
      [merchantId, orderType, orderNo],
    );
    const attempts = await this.attempts(result.rows.map((row) => row.event_id));
    return result.rows.map((row) => ({
      ...this.view(row),
      webhookUrl: row.webhook_url,
      body: Buffer.from(row.body).toString('utf8'),
      attemptLog: attempts.get(row.event_id) ?? [],
    }));
  }

  /**
   * A merchant's events, newest first, by order, delivery status, order type, order status
   * (`orderStatus`) and creation time, with a cursor.
   */
  async list(merchantId: bigint, filters: EventFilters): Promise<{ items: EventView[]; nextCursor: string | null }> {
    checkEventFilters(filters);
    const page = await keysetPage<EventRow>(this.db, {
      select: 'SELECT * FROM events',
      equals: eventEquals(merchantId, filters),
      from: filters.from,
      to: filters.to,
      cursor: filters.cursor,
      pageSize: filters.pageSize,
    });
    const items = page.rows.map((row) => this.view(row));
    if (filters.orderNo !== undefined) {
      const attempts = await this.attempts(items.map((item) => item.eventId));
      for (const item of items) item.attemptLog = attempts.get(item.eventId) ?? [];
    }
    return { items, nextCursor: page.nextCursor };
  }

  /** How many of a merchant's events match `filters` (the same filters as `list`). */
  async count(merchantId: bigint, filters: Omit<EventFilters, 'pageSize' | 'cursor'>): Promise<number> {
    checkEventFilters(filters);
    return countRows(this.db, { from: 'events', equals: eventEquals(merchantId, filters), ...timeRange(filters) });
  }

  /**
   * Resends every failed event of the merchant created in [from, to], oldest first, at most
   * `limit` per call (each exactly like `resend`); answers how many were resent and how many
   * failed ones of the range are left for the next call.
   */
  async resendFailed(
    merchantId: bigint,
    range: { from: number; to: number },
    limit = RESEND_FAILED_MAX,
    also?: InTransaction<{ resent: number }>,
  ): Promise<{ resent: number; remaining: number }> {
    checkTimeRange(range);
    const now = new Date(this.now());
    return this.db.transaction(async (tx) => {
      const resent = await tx.query(
        `UPDATE events SET ${RESEND_SET}
          WHERE id IN (SELECT id FROM events
                        WHERE merchant_id = $1 AND delivery_status = 'failed' AND created_at >= $3 AND created_at <= $4
                        ORDER BY created_at, id LIMIT $5 FOR UPDATE)`,
        [merchantId, now, new Date(range.from), new Date(range.to), limit],
      );
      const left = await tx.query<{ n: bigint }>(
        `SELECT count(*)::bigint AS n FROM events
          WHERE merchant_id = $1 AND delivery_status = 'failed' AND created_at >= $2 AND created_at <= $3`,
        [merchantId, new Date(range.from), new Date(range.to)],
      );
      await also?.(tx, { resent: resent.rowCount ?? 0 });
      return { resent: resent.rowCount ?? 0, remaining: Number(left.rows[0]?.n ?? 0) };
    });
  }

  /**
   * Delivers an event once more: same eventId and body, a fresh signature. A pending event is
   * made due now; a delivered or failed one gets one more attempt. `merchantId` limits it to the
   * merchant's own events (operators pass `undefined`).
   */
  async resend(eventId: string, merchantId?: bigint, also?: InTransaction<{ merchantId: bigint }>): Promise<EventView> {
    if (!EVENT_ID.test(eventId)) throw validationFailed([{ field: 'eventId', message: 'an eventId (evt_…)' }]);
    const now = new Date(this.now());
    const update = async (tx: Queryable) => {
      const result = await tx.query<EventRow>(
        `UPDATE events SET ${RESEND_SET}
          WHERE event_id = $1 ${merchantId === undefined ? '' : 'AND merchant_id = $3'}
          RETURNING *`,
        merchantId === undefined ? [eventId, now] : [eventId, now, merchantId],
      );
      const row = result.rows[0];
      if (!row) throw new DomainError('EVENT_NOT_FOUND', webhookErrors.EVENT_NOT_FOUND.message);
      await also?.(tx, { merchantId: row.merchant_id });
      return row;
    };
    // One statement alone; with `also`, a transaction holding both.
    const row = also === undefined ? await update(this.db) : await this.db.transaction(update);
    return this.view(row);
  }

  /**
   * Every merchant's events (or one merchant's), newest first, by delivery status, order type and
   * creation time, with a cursor: the back office's view of deliveries failing across merchants.
   * Each item carries its merchant's id and its attempts.
   */
  async listAll(
    filters: Omit<EventFilters, 'orderNo'> & { readonly merchantId?: bigint | undefined },
  ): Promise<{ items: (EventView & { merchantId: bigint })[]; nextCursor: string | null }> {
    checkEventFilters(filters);
    const page = await keysetPage<EventRow>(this.db, {
      select: 'SELECT * FROM events',
      equals: {
        merchant_id: filters.merchantId,
        delivery_status: filters.status,
        order_type: filters.orderType,
        status: filters.orderStatus,
      },
      from: filters.from,
      to: filters.to,
      cursor: filters.cursor,
      pageSize: filters.pageSize,
    });
    const attempts = await this.attempts(page.rows.map((row) => row.event_id));
    return {
      items: page.rows.map((row) => ({
        ...this.view(row),
        attemptLog: attempts.get(row.event_id) ?? [],
        merchantId: row.merchant_id,
      })),
      nextCursor: page.nextCursor,
    };
  }

  /**
   * The replay of a merchant's failed deliveries (decisions.md, `POST /backoffice/api/events/replay`):
   * every event of the merchant created in [from, to) whose delivery ended without a 2xx, made due
   * again with one more attempt each (same eventId and body; each attempt is signed afresh).
   * Answers how many, written with `also` in one transaction.
   */
  async replayFailed(
    merchantId: bigint,
    range: { from: number; to: number },
    also?: InTransaction<{ count: number }>,
  ): Promise<{ count: number }> {
    checkTimeRange(range);
    const now = new Date(this.now());
    return this.db.transaction(async (tx) => {
      const replayed = await tx.query(
        `UPDATE events SET ${RESEND_SET}
          WHERE merchant_id = $1 AND delivery_status = 'failed' AND created_at >= $3 AND created_at < $4`,
        [merchantId, now, new Date(range.from), new Date(range.to)],
      );
      const count = replayed.rowCount ?? 0;
      await also?.(tx, { count });
      return { count };
    });
  }

  /**
   * A merchant's webhook delivery health: of the events created since `since`, how many were
   * delivered and how many failed for good (the failure rate is failed over both), how many wait,
   * and its oldest event not delivered yet (pending or failed, at any time).
   */
  async health(merchantId: bigint, since: number) {
    const counts = await this.db.query<{ delivered: bigint; failed: bigint; pending: bigint }>(
      `SELECT count(*) FILTER (WHERE delivery_status = 'delivered')::bigint AS delivered,
              count(*) FILTER (WHERE delivery_status = 'failed')::bigint AS failed,
              count(*) FILTER (WHERE delivery_status = 'pending')::bigint AS pending
         FROM events WHERE merchant_id = $1 AND created_at >= $2`,
      [merchantId, new Date(since)],
    );
    const oldest = await this.db.query<EventRow>(
      `SELECT * FROM events WHERE merchant_id = $1 AND delivery_status IN ('pending', 'failed')
        ORDER BY created_at, id LIMIT 1`,
      [merchantId],
    );
    const row = counts.rows[0];
    const delivered = Number(row?.delivered ?? 0);
    const failed = Number(row?.failed ?? 0);
    const first = oldest.rows[0];
    return {
      since,
      delivered,
      failed,
      pending: Number(row?.pending ?? 0),
      failureRate: delivered + failed === 0 ? 0 : failed / (delivered + failed),
      oldestUndelivered: first === undefined ? null : this.view(first),
    };
  }

  /** Pending events and the age of the oldest due one, for metrics. */
  async queueStats(): Promise<{ pending: number; oldestPendingAgeSeconds: number }> {
    const result = await this.db.query<{ pending: bigint; oldest: Date | null }>(
      `SELECT count(*)::bigint AS pending, min(created_at) AS oldest FROM events WHERE delivery_status = 'pending'`,
    );
    const row = result.rows[0];
    const oldest = row?.oldest ? Math.max(0, (this.now() - row.oldest.getTime()) / 1000) : 0;
    return { pending: Number(row?.pending ?? 0), oldestPendingAgeSeconds: oldest };
  }

  /** The embedded database only: vacuums events (every delivery attempt updates its event) when it has dead rows (see vacuumTable). */
  vacuum(): Promise<Vacuumed[]> {
    return vacuumTables(this.db, ['events']);
  }
}
