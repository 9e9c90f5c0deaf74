import { z } from 'zod';
import { unixMs } from './common.js';
import { Payment } from './payments.js';
import { Payout, PayoutReceipt } from './payouts.js';
import { DeliveryStatus } from './webhooks.js';

// Views of the merchant portal's API (/portal/api), which the portal web app reads. They are not
// part of the merchant API's OpenAPI document (not registered as components).

/** One step of an order's life, newest last. */
export const TimelineEntry = z.object({ at: z.int(), status: z.string(), label: z.string() });
export type TimelineEntry = z.output<typeof TimelineEntry>;

/** One delivery attempt of a webhook event, as the order pages show it. */
export const PortalAttempt = z.object({
  at: unixMs('When the attempt started'),
  statusCode: z.int().nullable(),
  latencyMs: z.int().nullable(),
  responseExcerpt: z.string().nullable(),
  error: z.string().nullable(),
});
export type PortalAttempt = z.output<typeof PortalAttempt>;

/** A webhook event of an order, with the exact body sent and every delivery attempt. */
export const PortalOrderEvent = z.object({
  eventId: z.string(),
  status: z.string(),
  webhookUrl: z.string(),
  createdAt: unixMs('When the event was created'),
  body: z.string().meta({ description: 'The exact body sent (fixed at creation)' }),
  delivery: DeliveryStatus,
  nextAttemptAt: z.int().nullable(),
  attempts: z.array(PortalAttempt),
});
export type PortalOrderEvent = z.output<typeof PortalOrderEvent>;

/** The fee and net of a payment: booked on SUCCEEDED, else what the rate table would charge on the amount. */
export const PaymentCharges = z.object({ fee: z.string(), net: z.string(), booked: z.boolean() });
export type PaymentCharges = z.output<typeof PaymentCharges>;

/** `GET /portal/api/payments/:orderNo`. */
export const PaymentDetail = z.object({
  payment: Payment,
  charges: PaymentCharges,
  failureReason: z.string().nullable().meta({ description: 'Why a FAILED payment failed, when the channel said' }),
  timeline: z.array(TimelineEntry),
  events: z.array(PortalOrderEvent),
});
export type PaymentDetail = z.output<typeof PaymentDetail>;

/** `GET /portal/api/payouts/:orderNo`. */
export const PayoutDetail = z.object({
  payout: Payout,
  receipt: PayoutReceipt,
  timeline: z.array(TimelineEntry),
  events: z.array(PortalOrderEvent),
});
export type PayoutDetail = z.output<typeof PayoutDetail>;

/** A sandbox authentication failure, as the merchant sees it in the portal. */
export const RejectedRequest = z.object({
  requestId: z.string(),
  method: z.string(),
  path: z.string(),
  step: z.string(),
  reason: z.string(),
  signatureBase: z.string().nullable(),
  createdAt: z.int(),
});
export type RejectedRequest = z.output<typeof RejectedRequest>;

/** Orders of one status and currency in a period: how many, and their amount in major units. */
export const StatusTotal = z.object({ status: z.string(), currency: z.string(), count: z.int(), amount: z.string() });
export type StatusTotal = z.output<typeof StatusTotal>;
