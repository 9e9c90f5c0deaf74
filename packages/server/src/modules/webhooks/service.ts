import {
  checkReceiverRequest,
  type DeliveryAttempt,
  type DeliveryStatus,
  type OrderType,
  type ReceiverCheck,
  type WebhookEvent,
} from '@paygate/wire';
import { randomUUID } from 'node:crypto';
import { signWebhook } from '@paygate/protocol';
import type { Config } from '../../config.js';
import type { Db } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { countRows, keysetPage } from '../../db/paging.js';
import { checkTimeRange, parseInput, webhookUrl } from '../../validation.js';
import { DomainError, validationFailed } from '../../errors.js';
import { webhookErrors } from './errors.js';
import { EVENT_ID } from '../../ids.js';
import {
  contextOfTraceparent,
  injectTraceContext,
  inSpan,
  SpanKind,
  SpanStatusCode,
} from '../../observability/tracing.js';
import type { PlatformKeys } from '../platform-keys/service.js';
import {
  cachingResolver,
  DestinationRefused,
  type Resolver,
  resolveDestination,
  systemResolver,
} from './destination.js';
import { checkReceiver } from './receiver-check.js';
import { type SendResult, send } from './sender.js';
import { SettleBatcher, type SettleSlot, storable } from './settle.js';

export type { DeliveryStatus };

/** How long a claimed event stays with its worker; longer than any attempt can take. */
export const LEASE_MS = 60_000;
const CONNECT_TIMEOUT_MS = 5_000;
const TOTAL_TIMEOUT_MS = 10_000;
/** Lease an attempt must have left beyond its own time bound to start. */
const LEASE_MARGIN_MS = 10_000;
const EXCERPT_BYTES = 1024;
/** Each request of a receiver check waits at most this long: 14 of them answer one API call. */
const CHECK_TIMEOUT_MS = 5_000;

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

/**
 * Delay before retry number `retry` (1-based): the schedule's step with ±10 % jitter (so that
 * events failed together do not retry together). A receiver's Retry-After is honoured within the
 * schedule: never sooner than it asks, never later than the schedule's longest step.
 */
export function retryDelay(
  schedule: readonly number[],
  retry: number,
  retryAfterMs: number | undefined,
  random: () => number,
): number {
  const base = schedule[Math.min(retry, schedule.length) - 1] ?? schedule.at(-1) ?? 60_000;
  const delay = Math.round(base * (1 + (random() * 0.2 - 0.1)));
  if (retryAfterMs === undefined) return delay;
  return Math.min(Math.max(delay, retryAfterMs), Math.max(...schedule));
}

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
 * An event claimed by a worker, leased to it until it is settled or the lease runs out: what an
 * attempt needs of it, and no more.
 */
export interface ClaimedEvent {
  readonly id: bigint;
  readonly event_id: string;
  readonly order_type: string;
  readonly webhook_url: string;
  /** The body bytes, fixed at creation. */
  readonly body: Buffer;
  readonly deliver_until: Date | null;
  /** This attempt's number (counted by the claim). */
  readonly attempt_count: number;
  readonly attempt_budget: number | null;
  readonly traceparent: string | null;
  readonly lease_expires_at: Date;
}

/** What one attempt came to. */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'lost-lease';

/** What one dispatcher step did. */
export type StepOutcome = 'idle' | AttemptOutcome;

/** Observes attempts (metrics). */
export interface DeliveryObserver {
  attempt(outcome: 'delivered' | 'retry' | 'failed', latencyMs: number): void;
}

/** What tests and operators may tune; production uses the defaults. */
export interface WebhookOptions {
  /** DNS resolution of webhook hosts. */
  readonly resolve?: Resolver;
  readonly observer?: DeliveryObserver;
  /** Jitter source, [0, 1). */
  readonly random?: () => number;
  readonly connectTimeoutMs?: number;
  readonly totalTimeoutMs?: number;
}

/**
 * Webhook delivery: one `deliverNext` step claims a due event (a lease committed before the HTTP
 * call), signs it afresh, sends the fixed body bytes to the SSRF-checked destination, records the
 * attempt and schedules the next one or settles the event.
 */
export class Webhooks {
  /** DNS answers reused briefly across attempts; the guard still checks them every time. */
  private readonly resolve: Resolver;
  private readonly settlements: SettleBatcher;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'environment' | 'webhookRetrySchedule' | 'webhookAllowPrivate'>,
    private readonly platformKeys: PlatformKeys,
    private readonly now: () => number = Date.now,
    private readonly options: WebhookOptions = {},
  ) {
    this.resolve = cachingResolver(options.resolve ?? systemResolver, now);
    this.settlements = new SettleBatcher(db, now);
  }

  /** The longest one attempt may take: connecting and the whole exchange. */
  private get attemptBoundMs(): number {
    return this.options.totalTimeoutMs ?? TOTAL_TIMEOUT_MS;
  }

  /** Attempts an event may make in all: the first and one per scheduled retry. */
  get defaultBudget(): number {
    return this.config.webhookRetrySchedule.length + 1;
  }

  /** Delay before retry number `retry` (1-based) of this platform's schedule. */
  retryDelay(retry: number, retryAfterMs?: number): number {
    return retryDelay(this.config.webhookRetrySchedule, retry, retryAfterMs, this.options.random ?? Math.random);
  }

  /**
   * Claims up to `limit` due events for `worker`, oldest due first, in one statement: each gets a
   * lease (committed before any HTTP call, so a worker that dies mid-attempt only delays its
   * events until the lease runs out) and its attempt counted.
   */
  async claim(worker: string, limit: number): Promise<ClaimedEvent[]> {
    const now = new Date(this.now());
    // SKIP LOCKED: workers racing for the same rows pass over them instead of queueing; the lease
    // keeps them theirs after the statement commits.
    // The body comes back as base64 text, which both drivers turn into bytes natively (their
    // bytea decoding is a JavaScript loop over hex, the larger part of a claim's cost per row).
    const claimed = await this.db.transaction((tx) =>
      // The due events in the order of events_due, walked from its start: the statistics of a
      // backlog that just arrived (or of PGlite, which never analyzes) make the planner expect a
      // handful and fetch every due row to sort them, which costs each claim the whole backlog.
      tx.query('SET LOCAL enable_sort = off').then(() =>
        tx.query<Omit<ClaimedEvent, 'body'> & { body_base64: string }>(
          `UPDATE events SET lease_owner = $2, lease_expires_at = $3, attempt_count = attempt_count + 1,
              attempt_budget = COALESCE(attempt_budget, $4)
        WHERE id IN (SELECT id FROM events
                      WHERE delivery_status = 'pending' AND next_attempt_at <= $1
                        AND (lease_expires_at IS NULL OR lease_expires_at < $1)
                      ORDER BY next_attempt_at, id LIMIT $5 FOR UPDATE SKIP LOCKED)
        RETURNING id, event_id, order_type, webhook_url, encode(body, 'base64') AS body_base64, deliver_until,
                  attempt_count, attempt_budget, traceparent, lease_expires_at`,
          [now, worker, new Date(now.getTime() + LEASE_MS), this.defaultBudget, limit],
        ),
      ),
    );
    return claimed.rows
      .map(({ body_base64, ...row }) => ({ ...row, body: Buffer.from(body_base64, 'base64') }))
      .sort((a, b) => Number(a.id - b.id));
  }

  /**
   * Gives back claimed events this worker will not send after all (it is stopping): their leases
   * end and their claims are not counted as attempts, so another worker takes them at once.
   */
  async release(worker: string, events: readonly ClaimedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.query(
      `UPDATE events SET lease_owner = NULL, lease_expires_at = NULL, attempt_count = attempt_count - 1
        WHERE id IN (SELECT value::bigint FROM json_array_elements_text($1::json)) AND lease_owner = $2`,
      [JSON.stringify(events.map((event) => String(event.id))), worker],
    );
  }

  /** One dispatcher step: claim one due event, send it, record the attempt. */
  async deliverNext(worker: string): Promise<StepOutcome> {
    const [event] = await this.claim(worker, 1);
    return event ? this.deliver(event, worker) : 'idle';
  }

  /**
   * Sends a claimed event once and records the attempt; the event's new state follows from it.
   * `onSent` is called once the HTTP exchange is over (or nothing is sent), before the attempt
   * is recorded: the dispatcher's concurrency bounds requests in flight, not records being written.
   */
  async deliver(event: ClaimedEvent, worker: string, onSent?: () => void): Promise<AttemptOutcome> {
    const slot = this.settlements.expect();
    try {
      return await this.deliverIn(slot, event, worker, onSent);
    } finally {
      slot.cancel();
    }
  }

  private async deliverIn(
    slot: SettleSlot,
    event: ClaimedEvent,
    worker: string,
    onSent: (() => void) | undefined,
  ): Promise<AttemptOutcome> {
    const now = this.now();
    if (event.lease_expires_at.getTime() - now < this.attemptBoundMs + LEASE_MARGIN_MS) {
      // Claimed too long ago (a dispatcher far behind): an attempt might outlive the lease and
      // meet another worker's attempt of the same event. Given back, not sent.
      onSent?.();
      await this.release(worker, [event]);
      return 'lost-lease';
    }
    if (event.deliver_until && now > event.deliver_until.getTime()) {
      onSent?.();
      // Automatic retries of this event stop at deliver_until (REFUNDED: 24 h after creation).
      await this.settle(
        slot,
        event,
        worker,
        'failed',
        undefined,
        { error: 'delivery window closed', latencyMs: 0 },
        undefined,
      );
      return 'failed';
    }
    // A span per attempt, a child of the request that wrote the event (when it was traced):
    // identifiers and outcome only, never the body, the URL or the signature.
    return inSpan(
      'webhook attempt',
      {
        kind: SpanKind.CLIENT,
        parent: contextOfTraceparent(event.traceparent),
        attributes: {
          'paygate.event.id': event.event_id,
          'paygate.order.type': event.order_type,
          'paygate.webhook.attempt': event.attempt_count,
        },
      },
      async (span) => {
        const outcome = await this.attempt(slot, event, worker, now, onSent);
        span.setAttribute('paygate.webhook.outcome', outcome.outcome);
        if (outcome.statusCode !== undefined) span.setAttribute('http.response.status_code', outcome.statusCode);
        if (outcome.outcome !== 'delivered') span.setStatus({ code: SpanStatusCode.ERROR });
        return outcome.outcome;
      },
    );
  }

  /**
   * Sandbox: fires correctly signed and tampered webhooks at a merchant's receiver (see
   * `receiver-check.ts`), signed with the platform's own webhook key for the URL as a delivery
   * would be, under the same URL rule and SSRF guard. A refused URL is VALIDATION_FAILED (field
   * url) and nothing is sent.
   */
  async checkReceiver(input: unknown): Promise<ReceiverCheck> {
    const { url } = parseInput(checkReceiverRequest(webhookUrl(this.config)), input);
    let destination;
    try {
      destination = await resolveDestination(url, {
        allowPrivate: this.config.webhookAllowPrivate,
        httpsOnly: this.config.environment === 'production',
        resolve: this.resolve,
      });
    } catch (error) {
      if (!(error instanceof DestinationRefused)) throw error;
      throw validationFailed([{ field: 'url', message: `destination refused: ${error.message}` }]);
    }
    return checkReceiver(destination, await this.platformKeys.webhookSigner(), {
      connectTimeoutMs: this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      totalTimeoutMs: Math.min(this.options.totalTimeoutMs ?? TOTAL_TIMEOUT_MS, CHECK_TIMEOUT_MS),
      excerptBytes: EXCERPT_BYTES,
      now: this.now,
    });
  }

  /** Signs and sends the claimed event once, then settles it. */
  private async attempt(
    slot: SettleSlot,
    event: ClaimedEvent,
    worker: string,
    now: number,
    onSent: (() => void) | undefined,
  ): Promise<{ outcome: AttemptOutcome; statusCode: number | undefined }> {
    const nonce = randomUUID();
    let result: SendResult;
    try {
      const destination = await resolveDestination(event.webhook_url, {
        allowPrivate: this.config.webhookAllowPrivate,
        httpsOnly: this.config.environment === 'production',
        resolve: this.resolve,
      });
      const signer = await this.platformKeys.webhookSigner();
      const { body } = event;
      // Signed for the very URL the request goes to (the normalized form stored at create).
      const { headers } = signWebhook(
        { url: destination.url.href, body, eventId: event.event_id },
        { keyid: signer.keyid, key: signer.key, created: Math.floor(now / 1000), nonce },
      );
      // traceparent is not a signed component: a verifier ignores it, a traced receiver joins the trace.
      result = await send(destination, injectTraceContext(headers), body, {
        connectTimeoutMs: this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
        totalTimeoutMs: this.options.totalTimeoutMs ?? TOTAL_TIMEOUT_MS,
        excerptBytes: EXCERPT_BYTES,
        now: this.now,
      });
    } catch (error) {
      if (!(error instanceof DestinationRefused)) throw error;
      result = { error: `destination refused: ${error.message}`, latencyMs: 0 };
    } finally {
      onSent?.();
    }

    const ok = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const settled = (outcome: AttemptOutcome) => ({ outcome, statusCode: result.statusCode });
    if (ok) return settled(await this.settle(slot, event, worker, 'delivered', undefined, result, nonce));
    const budget = event.attempt_budget ?? this.defaultBudget;
    const nextAt = this.now() + this.retryDelay(event.attempt_count, result.retryAfterMs);
    const windowClosed = event.deliver_until !== null && nextAt > event.deliver_until.getTime();
    if (event.attempt_count >= budget || windowClosed)
      return settled(await this.settle(slot, event, worker, 'failed', undefined, result, nonce));
    return settled(await this.settle(slot, event, worker, 'pending', new Date(nextAt), result, nonce));
  }

  /**
   * Records the attempt and the event's new state, if this worker still holds the lease. Settles
   * of attempts finishing together are written together (see {@link SettleBatcher}).
   */
  private async settle(
    slot: SettleSlot,
    event: ClaimedEvent,
    worker: string,
    status: DeliveryStatus,
    nextAttemptAt: Date | undefined,
    result: SendResult,
    nonce: string | undefined,
  ): Promise<AttemptOutcome> {
    const held = await slot.settle({
      id: String(event.id),
      worker,
      status,
      next_attempt_at: nextAttemptAt ?? null,
      status_code: result.statusCode ?? null,
      error: storable(result.error),
      // A claim that sent nothing (window closed) was not an attempt.
      uncount: nonce ? 0 : 1,
      event_id: event.event_id,
      attempt: event.attempt_count,
      started_at: new Date(this.now() - result.latencyMs),
      latency_ms: result.latencyMs,
      excerpt: storable(result.excerpt),
      nonce: nonce ?? null,
    });
    if (!held) return 'lost-lease';
    const reported = status === 'pending' ? 'retry' : status;
    this.options.observer?.attempt(reported, result.latencyMs);
    return reported;
  }

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
      return { resent: resent.rowCount ?? 0, remaining: Number(left.rows[0]?.n ?? 0) };
    });
  }

  /**
   * Delivers an event once more: same eventId and body, a fresh signature. A pending event is
   * made due now; a delivered or failed one gets one more attempt. `merchantId` limits it to the
   * merchant's own events (operators pass `undefined`).
   */
  async resend(eventId: string, merchantId?: bigint): Promise<EventView> {
    if (!EVENT_ID.test(eventId)) throw validationFailed([{ field: 'eventId', message: 'an eventId (evt_…)' }]);
    const now = new Date(this.now());
    const result = await this.db.query<EventRow>(
      `UPDATE events SET ${RESEND_SET}
        WHERE event_id = $1 ${merchantId === undefined ? '' : 'AND merchant_id = $3'}
        RETURNING *`,
      merchantId === undefined ? [eventId, now] : [eventId, now, merchantId],
    );
    const row = result.rows[0];
    if (!row) throw new DomainError('EVENT_NOT_FOUND', webhookErrors.EVENT_NOT_FOUND.message);
    return this.view(row);
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
