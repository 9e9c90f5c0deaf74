import { z } from 'zod';
import { WebhookVerificationError } from './errors.js';

const decimal = z.string().regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, 'a decimal string');

const common = {
  /** Identifies one notification; retries of the same event reuse it. */
  eventId: z.string().regex(/^evt_[0-9A-Za-z]+$/, 'an eventId (evt_…)'),
  orderNo: z.string().min(1),
  merchantOrderNo: z.string().min(1),
  currency: z.string().min(1),
  amount: decimal,
};

const payer = z.object({ name: z.string().optional(), documentNumber: z.string().optional() });

const paymentFields = {
  ...common,
  orderType: z.literal('PAYMENT'),
  channelTradeNo: z.string().optional(),
  payer: payer.optional(),
  attach: z.string().optional(),
};

const payoutFields = {
  ...common,
  orderType: z.literal('PAYOUT'),
  channelTradeNo: z.string().optional(),
  attach: z.string().optional(),
};

const paymentSucceeded = z.object({ ...paymentFields, status: z.literal('SUCCEEDED'), paidAmount: decimal });
const paymentClosed = z.object({ ...paymentFields, status: z.enum(['FAILED', 'EXPIRED', 'CANCELED']) });
const payoutResult = z.object({ ...payoutFields, status: z.enum(['SUCCEEDED', 'FAILED']) });
const payoutRefunded = z.object({
  ...common,
  orderType: z.literal('PAYOUT'),
  status: z.literal('REFUNDED'),
  refundNo: z.string().min(1),
  refundAmount: decimal,
  refundTime: z.number().int().nonnegative(),
});

/** The body schema of each kind of event, by `orderType` and `status`. */
const SCHEMAS: Readonly<Record<string, z.ZodType<WebhookEvent>>> = {
  'PAYMENT SUCCEEDED': paymentSucceeded,
  'PAYMENT FAILED': paymentClosed,
  'PAYMENT EXPIRED': paymentClosed,
  'PAYMENT CANCELED': paymentClosed,
  'PAYOUT SUCCEEDED': payoutResult,
  'PAYOUT FAILED': payoutResult,
  'PAYOUT REFUNDED': payoutRefunded,
};

/** Schema of any webhook event body (members the SDK does not know are dropped from the typed value). */
export const webhookEventSchema: z.ZodType<WebhookEvent> = z.union([
  paymentSucceeded,
  paymentClosed,
  payoutResult,
  payoutRefunded,
]);

/** Fields every webhook event has. */
export interface EventCommon {
  /** `evt_…`: the delivery idempotency key; retries of one event reuse it and its body. */
  eventId: string;
  orderNo: string;
  merchantOrderNo: string;
  currency: string;
  /** Decimal string in major units. */
  amount: string;
}

/** A payment reached SUCCEEDED. */
export interface PaymentSucceededEvent extends EventCommon {
  orderType: 'PAYMENT';
  status: 'SUCCEEDED';
  /** What the payer paid. */
  paidAmount: string;
  channelTradeNo?: string;
  /** The actual payer as the channel reported it; omitted when unknown. */
  payer?: { name?: string; documentNumber?: string };
  attach?: string;
}

/** A payment reached FAILED, EXPIRED or CANCELED. */
export interface PaymentClosedEvent extends EventCommon {
  orderType: 'PAYMENT';
  status: 'FAILED' | 'EXPIRED' | 'CANCELED';
  channelTradeNo?: string;
  payer?: { name?: string; documentNumber?: string };
  attach?: string;
}

/** A payout reached SUCCEEDED or FAILED. Payout events carry no payee details. */
export interface PayoutResultEvent extends EventCommon {
  orderType: 'PAYOUT';
  status: 'SUCCEEDED' | 'FAILED';
  channelTradeNo?: string;
  attach?: string;
}

/** A SUCCEEDED payout was returned upstream and its principal credited back; its own eventId. */
export interface PayoutRefundedEvent extends EventCommon {
  orderType: 'PAYOUT';
  status: 'REFUNDED';
  refundNo: string;
  /** The full returned principal (not net of fees). */
  refundAmount: string;
  /** When the refund posted, Unix milliseconds. */
  refundTime: number;
}

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
export type WebhookEvent = PaymentEvent | PayoutEvent;

// The interfaces above are the documented types; this keeps them and the schema in step.
type Parsed = z.infer<typeof webhookEventSchema>;
const _sameShape: [Parsed extends WebhookEvent ? true : false, WebhookEvent extends Parsed ? true : false] = [
  true,
  true,
];
void _sameShape;

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
    json = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw payloadError('the body is not JSON');
  }
  const kind = z.object({ orderType: z.string(), status: z.string() }).safeParse(json);
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
