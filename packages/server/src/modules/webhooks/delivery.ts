import { checkReceiverRequest, type DeliveryStatus, type ReceiverCheck } from '@paygate/wire';
import { randomUUID } from 'node:crypto';
import { signWebhook } from '@paygate/protocol';
import type { Config } from '../../config.js';
import type { Db } from '../../db/db.js';
import {
  contextOfTraceparent,
  injectTraceContext,
  inSpan,
  SpanKind,
  SpanStatusCode,
} from '../../observability/tracing.js';
import { parseInput, webhookUrl } from '../../validation.js';
import { validationFailed } from '../../errors.js';
import type { PlatformKeys } from '../platform-keys/service.js';
import {
  cachingResolver,
  DestinationRefused,
  type Resolver,
  resolveDestination,
  systemResolver,
} from '../../http/ssrf.js';
import { checkReceiver } from './receiver-check.js';
import { type SendResult, send } from './sender.js';
import { SettleBatcher, type SettleSlot, storable } from './settle.js';

/** How long a claimed event stays with its worker; longer than any attempt can take. */
export const LEASE_MS = 60_000;
const CONNECT_TIMEOUT_MS = 5_000;
const TOTAL_TIMEOUT_MS = 10_000;
/** Lease an attempt must have left beyond its own time bound to start. */
const LEASE_MARGIN_MS = 10_000;
const EXCERPT_BYTES = 1024;
/** Each request of a receiver check waits at most this long: 14 of them answer one API call. */
const CHECK_TIMEOUT_MS = 5_000;

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
export class WebhookDelivery {
  /** DNS answers reused briefly across attempts; the guard still checks them every time. */
  private readonly resolve: Resolver;
  private readonly settlements: SettleBatcher;

  constructor(
    protected readonly db: Db,
    private readonly config: Pick<
      Config,
      'environment' | 'webhookRetrySchedule' | 'webhookAllowPrivate' | 'webhookExtraCa'
    >,
    private readonly platformKeys: PlatformKeys,
    protected readonly now: () => number = Date.now,
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
      extraCa: this.config.webhookExtraCa?.certificates,
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
        extraCa: this.config.webhookExtraCa?.certificates,
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
}
