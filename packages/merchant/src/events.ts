import {
  PaymentClosedEvent as paymentClosed,
  PaymentSucceededEvent as paymentSucceeded,
  PayoutRefundedEvent as payoutRefunded,
  PayoutResultEvent as payoutResult,
  type WebhookBody,
} from '@paygate/wire';
import { z } from 'zod';
import { WebhookVerificationError } from './errors.js';

// The event bodies are the platform's own wire schemas (@paygate/wire), the ones its OpenAPI
// document's PaymentEvent and PayoutEvent are generated from: the SDK parses with them at run time,
// reading identifiers tolerantly (their format is the platform's business, and the shared test
// vectors use shorter order numbers than the platform issues).
const identifiers = {
  eventId: z.string().regex(/^evt_[0-9A-Za-z]+$/, 'an eventId (evt_…)'),
  orderNo: z.string().min(1),
  merchantOrderNo: z.string().min(1),
};

const succeeded = paymentSucceeded.extend(identifiers);
const closed = paymentClosed.extend(identifiers);
const result = payoutResult.extend(identifiers);
const refunded = payoutRefunded.extend(identifiers);

/** The body schema of each kind of event, by `orderType` and `status`. */
const SCHEMAS: Readonly<Record<string, z.ZodType<WebhookEvent>>> = {
  'PAYMENT SUCCEEDED': succeeded,
  'PAYMENT FAILED': closed,
  'PAYMENT EXPIRED': closed,
  'PAYMENT CANCELED': closed,
  'PAYOUT SUCCEEDED': result,
  'PAYOUT FAILED': result,
  'PAYOUT REFUNDED': refunded,
};

/** What picks an event's schema; built once (a zod schema compiles its parser on first use). */
const eventKind = z.object({ orderType: z.string(), status: z.string() });

/** Schema of any webhook event body (members the SDK does not know are dropped from the typed value). */
export const webhookEventSchema: z.ZodType<WebhookEvent> = z.union([succeeded, closed, result, refunded]);

/** A payment reached SUCCEEDED: `paidAmount` is what the payer paid. */
export type PaymentSucceededEvent = z.output<typeof paymentSucceeded>;

/** A payment reached FAILED, EXPIRED or CANCELED. */
export type PaymentClosedEvent = z.output<typeof paymentClosed>;

/** A payout reached SUCCEEDED or FAILED. Payout events carry no payee details. */
export type PayoutResultEvent = z.output<typeof payoutResult>;

/** A SUCCEEDED payout was returned upstream and its principal credited back; its own eventId. */
export type PayoutRefundedEvent = z.output<typeof payoutRefunded>;

/** Fields every webhook event has. */
export type EventCommon = Pick<WebhookBody, 'eventId' | 'orderNo' | 'merchantOrderNo' | 'currency' | 'amount'>;

/** Any payment event. */
export type PaymentEvent = PaymentSucceededEvent | PaymentClosedEvent;

/** Any payout event. */
export type PayoutEvent = PayoutResultEvent | PayoutRefundedEvent;

/**
 * A verified webhook event: narrow it on `orderType` and `status`.
 *
 * @example
 * ```ts
 * if (event.orderType === 'PAYMENT' && event.status === 'SUCCEEDED') ship(event.merchantOrderNo, event.paidAmount);
 * ```
 */
export type WebhookEvent = WebhookBody;

// Like Buffer's toString: a byte order mark stays in the text, where JSON.parse refuses it.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Parses verified webhook body bytes into a typed event. Call it only on bytes that
 * {@link WebhookVerifier.verifyBytes} returned: parsing is the step after verification.
 *
 * @throws {@link WebhookVerificationError} with check `payload` when the body is not an event
 * this SDK knows (for instance a status added after this version).
 */
export function parseWebhookEvent(body: Uint8Array): WebhookEvent {
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(body));
  } catch {
    throw payloadError('the body is not JSON');
  }
  const kind = eventKind.safeParse(json);
  if (!kind.success) throw payloadError('the body has no orderType and status strings');
  const schema = SCHEMAS[`${kind.data.orderType} ${kind.data.status}`];
  if (!schema) throw payloadError(`unknown event ${kind.data.orderType} ${kind.data.status}`);
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`);
    throw payloadError(`a ${kind.data.orderType} ${kind.data.status} event with bad fields (${issues.join('; ')})`);
  }
  return parsed.data;
}

function payloadError(reason: string): WebhookVerificationError {
  return new WebhookVerificationError({
    check: 'payload',
    reason,
    hint: 'The webhook is authentic but this SDK does not understand its body; upgrade @paygate/merchant. The platform retries non-2xx answers, so nothing is lost meanwhile.',
  });
}
