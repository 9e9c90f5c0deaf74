import type { PaymentDetail, PayoutDetail, PortalAttempt, PortalOrderEvent, TimelineEntry } from '@paygate/wire';
import { orderNotFound } from '../../errors.js';
import type { OrderRef } from '../../validation.js';
import type { OrderType } from '../webhooks/outbox.js';
import type { Ledger } from '../ledger/service.js';
import type { Payments, PaymentView } from '../payments/service.js';
import type { Payouts, PayoutView } from '../payouts/service.js';
import type { Webhooks } from '../webhooks/service.js';
import type { ChannelRegistry } from '../channels/registry.js';

/** The order pages' views (the wire schemas of the portal API). */
export type { PaymentDetail, PayoutDetail, TimelineEntry };
export type AttemptView = PortalAttempt;
export type EventView = PortalOrderEvent;

/** The services the order pages read. */
export interface OrderPageServices {
  readonly payments: Payments;
  readonly payouts: Payouts;
  readonly ledger: Ledger;
  readonly webhooks: Webhooks;
  /** The channels, for a payout's bank file (kind sepa-sftp). */
  readonly channels?: Pick<ChannelRegistry, 'get'>;
}

const ORDER_NO = { PAYMENT: /^P[0-9]{18}$/, PAYOUT: /^W[0-9]{18}$/ } as const;

/** An order number typed by a person: a platform number (P…/W…) or the merchant's own. */
export function refFromText(text: string, type: OrderType): OrderRef {
  const trimmed = text.trim();
  return ORDER_NO[type].test(trimmed) ? { orderNo: trimmed } : { merchantOrderNo: trimmed };
}

/** Whether `orderNo` is well-formed for `type` (anything else is simply not found). */
export function assertOrderNo(orderNo: string, type: OrderType): void {
  if (!ORDER_NO[type].test(orderNo)) throw orderNotFound();
}

/** The order's events, oldest first, each with its delivery state and every attempt. */
export async function eventsOf(
  services: OrderPageServices,
  merchantId: bigint,
  orderType: OrderType,
  orderNo: string,
): Promise<EventView[]> {
  const events = await services.webhooks.ofOrder(merchantId, orderType, orderNo);
  return events.map((event) => ({
    eventId: event.eventId,
    status: event.status,
    webhookUrl: event.webhookUrl,
    createdAt: event.createdAt,
    body: event.body,
    delivery: event.deliveryStatus,
    nextAttemptAt: event.nextAttemptAt,
    attempts: event.attemptLog.map((attempt) => ({
      at: attempt.startedAt,
      statusCode: attempt.statusCode,
      latencyMs: attempt.latencyMs,
      responseExcerpt: attempt.responseExcerpt,
      error: attempt.error,
    })),
  }));
}

function byTime(entries: TimelineEntry[]): TimelineEntry[] {
  return entries.sort((a, b) => a.at - b.at);
}

function eventSteps(events: readonly EventView[]): TimelineEntry[] {
  return events.map((event) => ({
    at: event.createdAt,
    status: event.status,
    label: `Webhook event ${event.eventId}`,
  }));
}

export function paymentTimeline(payment: PaymentView, events: readonly EventView[]): TimelineEntry[] {
  const steps: TimelineEntry[] = [{ at: payment.createdAt, status: 'PENDING', label: 'Order created' }];
  if (payment.status === 'PROCESSING') {
    steps.push({ at: payment.updatedAt, status: 'PROCESSING', label: 'The channel is processing the payment' });
  }
  if (payment.finalizedAt !== undefined) {
    steps.push({ at: payment.finalizedAt, status: payment.status, label: finalLabel(payment.status) });
  }
  return byTime([...steps, ...eventSteps(events)]);
}

export function payoutTimeline(payout: PayoutView, events: readonly EventView[]): TimelineEntry[] {
  const steps: TimelineEntry[] = [
    { at: payout.createdAt, status: 'PENDING', label: 'Order created; amount and fee reserved' },
  ];
  if (payout.confirmedAt !== undefined) {
    steps.push({ at: payout.confirmedAt, status: 'PROCESSING', label: 'Confirmed and handed to the channel' });
  }
  if (payout.finalizedAt !== undefined) {
    const status = payout.status === 'REFUNDED' ? 'SUCCEEDED' : payout.status;
    steps.push({ at: payout.finalizedAt, status, label: finalLabel(status) });
  }
  if (payout.refundTime !== undefined) {
    steps.push({
      at: payout.refundTime,
      status: 'REFUNDED',
      label: `Returned upstream; ${payout.refundAmount} ${payout.currency} credited back (refund ${payout.refundNo})`,
    });
  }
  return byTime([...steps, ...eventSteps(events)]);
}

function finalLabel(status: string): string {
  switch (status) {
    case 'SUCCEEDED':
      return 'Succeeded';
    case 'FAILED':
      return 'Failed';
    case 'EXPIRED':
      return 'Expired: the payer did not pay in time';
    case 'CANCELED':
      return 'Canceled by the merchant';
    default:
      return status;
  }
}

/** A payment of the session's merchant, or ORDER_NOT_FOUND (also for other merchants' orders). */
export async function paymentDetail(
  services: OrderPageServices,
  merchantId: bigint,
  orderNo: string,
): Promise<PaymentDetail> {
  assertOrderNo(orderNo, 'PAYMENT');
  const row = await services.payments.row(merchantId, { orderNo });
  const payment = services.payments.view(row);
  const events = await eventsOf(services, merchantId, 'PAYMENT', orderNo);
  return {
    payment,
    charges: await services.ledger.paymentCharges(row),
    failureReason: row.status === 'FAILED' ? row.failure_reason : null,
    timeline: paymentTimeline(payment, events),
    events,
  };
}

export async function payoutDetail(
  services: OrderPageServices,
  merchantId: bigint,
  orderNo: string,
): Promise<PayoutDetail> {
  assertOrderNo(orderNo, 'PAYOUT');
  const row = await services.payouts.row(merchantId, { orderNo });
  const payout = services.payouts.view(row);
  const events = await eventsOf(services, merchantId, 'PAYOUT', orderNo);
  const bankFile = row.channel === null ? undefined : await services.channels?.get(row.channel)?.payoutFile?.(orderNo);
  return {
    payout,
    receipt: services.payouts.receiptOf(row),
    timeline: payoutTimeline(payout, events),
    events,
    ...(bankFile ? { bankFile } : {}),
  };
}
