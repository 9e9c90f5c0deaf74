import { z } from 'zod';
import {
  Currency,
  decimal,
  eventId,
  orderNoOf,
  OrderType,
  unixMs,
  type WebhookUrlSchema,
  webhookUrlInput,
} from './common.js';
import { Payer } from './payments.js';
import { component } from './registry.js';

const paymentEventFields = {
  /** `evt_…`: the delivery idempotency key; retries of one event reuse it and its body. */
  eventId,
  orderType: z.literal('PAYMENT'),
  orderNo: orderNoOf('P'),
  merchantOrderNo: z.string(),
  currency: Currency,
  amount: decimal('Order amount'),
  channelTradeNo: z.string().optional(),
  /** The actual payer as the channel reported it; omitted when unknown. */
  payer: Payer.optional(),
  attach: z.string().optional(),
};

/** A payment reached SUCCEEDED: `paidAmount` is what the payer paid. */
export const PaymentSucceededEvent = z.object({
  ...paymentEventFields,
  status: z.literal('SUCCEEDED'),
  paidAmount: decimal('What the payer paid'),
});
export type PaymentSucceededEvent = z.output<typeof PaymentSucceededEvent>;

/** A payment reached FAILED, EXPIRED or CANCELED. */
export const PaymentClosedEvent = z.object({
  ...paymentEventFields,
  status: z.enum(['FAILED', 'EXPIRED', 'CANCELED']),
});
export type PaymentClosedEvent = z.output<typeof PaymentClosedEvent>;

/** Body of a payment webhook. */
export const PaymentEvent = component(
  'PaymentEvent',
  z.discriminatedUnion('status', [PaymentSucceededEvent, PaymentClosedEvent]).meta({
    description:
      'Body of a payment webhook (SUCCEEDED with paidAmount; FAILED, EXPIRED, CANCELED). Fixed when the event is created, payer included; every attempt sends the same bytes.',
  }),
);
export type PaymentEvent = z.output<typeof PaymentEvent>;

const payoutEventFields = {
  eventId,
  orderType: z.literal('PAYOUT'),
  orderNo: orderNoOf('W'),
  merchantOrderNo: z.string(),
  currency: Currency,
  amount: decimal('Payout amount'),
};

/** A payout reached SUCCEEDED or FAILED. Payout events carry no payee details. */
export const PayoutResultEvent = z.object({
  ...payoutEventFields,
  status: z.enum(['SUCCEEDED', 'FAILED']),
  channelTradeNo: z.string().optional(),
  attach: z.string().optional(),
});
export type PayoutResultEvent = z.output<typeof PayoutResultEvent>;

/** A SUCCEEDED payout was returned upstream and its principal credited back; its own eventId. */
export const PayoutRefundedEvent = z.object({
  ...payoutEventFields,
  status: z.literal('REFUNDED'),
  refundNo: z.string().min(1),
  refundAmount: decimal('The full returned principal (not net of the payout fee, which is not returned)'),
  refundTime: unixMs('When the refund posted; never changes on retry'),
});
export type PayoutRefundedEvent = z.output<typeof PayoutRefundedEvent>;

/** Body of a payout webhook. */
export const PayoutEvent = component(
  'PayoutEvent',
  z.discriminatedUnion('status', [PayoutResultEvent, PayoutRefundedEvent]).meta({
    description:
      'Body of a payout webhook (SUCCEEDED, FAILED, REFUNDED). No payee or sender identity. SUCCEEDED and FAILED carry channelTradeNo and attach; REFUNDED carries refundNo, refundAmount and refundTime instead and has its own eventId.',
  }),
);
export type PayoutEvent = z.output<typeof PayoutEvent>;

/** Any webhook body: narrow it on `orderType` and `status`. */
export const WebhookBody = z.union([PaymentSucceededEvent, PaymentClosedEvent, PayoutResultEvent, PayoutRefundedEvent]);
export type WebhookBody = z.output<typeof WebhookBody>;

/** Delivery state of a webhook event. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES);
export type DeliveryStatus = z.output<typeof DeliveryStatus>;

/** One delivery attempt of a webhook event. */
export const DeliveryAttempt = z.object({
  attempt: z.int().min(1),
  startedAt: unixMs('When the attempt started'),
  latencyMs: z.int(),
  statusCode: z.int().nullable().meta({ description: 'The receiver’s HTTP status; null when none came' }),
  responseExcerpt: z.string().nullable().meta({ description: 'At most 1 KiB of the receiver’s answer' }),
  error: z
    .string()
    .nullable()
    .meta({ description: 'Connection error, timeout, or why the destination was refused (SSRF guard)' }),
});
export type DeliveryAttempt = z.output<typeof DeliveryAttempt>;

/** A webhook event and its delivery, as `GET /api/v1/events` and `POST /api/v1/events/resend` return it. */
export const WebhookEvent = component(
  'WebhookEvent',
  z
    .object({
      eventId,
      orderType: OrderType,
      orderNo: z.string(),
      status: z.string().meta({ description: 'The order state the event reports' }),
      deliveryStatus: DeliveryStatus.meta({
        description:
          'pending: waiting for its next attempt; delivered: a 2xx came back; failed: out of attempts (or, for REFUNDED, past 24 h), kept with every attempt',
      }),
      attempts: z.int().meta({ description: 'Attempts made so far' }),
      createdAt: unixMs('When the event was created'),
      deliveredAt: z.int().nullable().meta({ description: 'When a 2xx came back (Unix ms)' }),
      nextAttemptAt: z.int().nullable().meta({ description: 'When a pending event is next attempted (Unix ms)' }),
      lastStatusCode: z.int().nullable(),
      lastError: z.string().nullable(),
      attemptLog: z
        .array(DeliveryAttempt)
        .meta({ description: 'Every attempt, oldest first (listing by orderNo only)' })
        .optional(),
    })
    .meta({ description: 'A webhook event and its delivery state.' }),
);
export type WebhookEvent = z.output<typeof WebhookEvent>;

/** `POST /api/v1/events/resend`. */
export const ResendEventRequest = component('ResendEventRequest', z.strictObject({ eventId }));
export type ResendEventRequest = z.input<typeof ResendEventRequest>;

/** `POST /api/v1/sandbox/webhooks/check`, with the server's webhook URL rule in place of the shape. */
export const checkReceiverRequest = (url: WebhookUrlSchema = webhookUrlInput) =>
  z.strictObject({
    url: url.meta({
      description:
        'Your webhook receiver: the same URL rule and SSRF guard as an order’s webhookUrl; the checks are signed for this URL as a delivery to it would be.',
    }),
  });
export const CheckReceiverRequest = component('CheckReceiverRequest', checkReceiverRequest());
export type CheckReceiverRequest = z.input<typeof CheckReceiverRequest>;

/** What one receiver check came to. */
export const ReceiverCheckCase = z.object({
  name: z.string().meta({ description: 'The case, e.g. valid, bad-content-digest, replayed-nonce' }),
  description: z.string().meta({ description: 'What was sent' }),
  expected: z.enum(['accept', 'refuse']).meta({ description: 'accept: a 2xx answer; refuse: any other status' }),
  observed: z.array(z.string()).meta({
    description:
      'What came back for each request of the case, in order: the HTTP status, `no answer: …`, or `not sent` (after the valid case got no answer). replayed-nonce sends the same request twice: the first must be accepted.',
  }),
  answer: z
    .string()
    .nullable()
    .meta({ description: 'The first 200 bytes of the last answer, as text; null when none came' }),
  pass: z.boolean(),
});
export type ReceiverCheckCase = z.output<typeof ReceiverCheckCase>;

/** The answer of `POST /api/v1/sandbox/webhooks/check`. */
export const ReceiverCheck = component(
  'ReceiverCheck',
  z
    .object({
      url: z.string().meta({ description: 'The normalized URL the checks were sent to' }),
      keyid: z.string().meta({ description: 'The platform webhook key the valid case was signed with' }),
      passed: z.boolean().meta({ description: 'Every case passed' }),
      cases: z.array(ReceiverCheckCase),
    })
    .meta({ description: 'Correctly signed and tampered webhooks fired at a receiver, case by case.' }),
);
export type ReceiverCheck = z.output<typeof ReceiverCheck>;

/** `GET /.well-known/paygate/webhook-keys` (not wrapped in msg/data). */
export const WebhookKeys = component(
  'WebhookKeys',
  z.object({
    environment: z.enum(['sandbox', 'production']),
    keys: z.array(
      z.object({
        keyid: z.string(),
        publicKey: z.string().meta({ description: 'Base64 of the raw 32-byte Ed25519 public key' }),
        status: z.enum(['active', 'enabled']),
      }),
    ),
  }),
);
export type WebhookKeys = z.output<typeof WebhookKeys>;

/** A psp-sim notification: the charge or transfer as the channel's GET returns it. */
export const ChannelNotification = component(
  'ChannelNotification',
  z
    .object({
      id: z.string().meta({ description: 'The channel’s event id: applied once per channel' }),
      type: z.enum(['charge.updated', 'transfer.updated']),
      object: z
        .record(z.string(), z.unknown())
        .meta({ description: 'The charge or transfer; `reference` is the platform orderNo' }),
    })
    .meta({ description: 'A psp-sim notification: the charge or transfer as the channel’s GET returns it.' }),
);

/** What the platform did with a channel notification. */
export const NOTIFICATION_OUTCOMES = [
  'applied',
  'unchanged',
  'ignored',
  'duplicate',
  'unknown_order',
  'wrong_channel',
  'received',
] as const;
export const NotificationOutcome = component(
  'NotificationOutcome',
  z.object({
    outcome: z.enum(NOTIFICATION_OUTCOMES).meta({
      description:
        'applied: the order moved to the state reported; unchanged: it already had that state (a repeat under another event id, or news polling brought first); ignored: the state machine refused the move (the order is final in another state) or there was nothing to apply; duplicate: this event id was applied before; unknown_order: no such order (kept for investigation); wrong_channel: another channel serves the order; received: a callback that is only a hint (kind pix-api) was recorded, and the charges it names are asked about at the channel next',
    }),
  }),
);
export type NotificationOutcome = z.output<typeof NotificationOutcome>;
