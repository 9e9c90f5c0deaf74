import { scaleOf } from '../../catalog.js';
import { formatAmount, parseAmount } from '../../money.js';
import type { PaymentView } from '../payments/service.js';
import type { PayoutView } from '../payouts/service.js';

/** The payouts report's columns (CSV, one payout a row, newest first). */
export const PAYOUT_REPORT_HEADER = [
  'orderNo',
  'merchantOrderNo',
  'status',
  'currency',
  'amount',
  'fee',
  'total',
  'refundNo',
  'refundAmount',
  'refundedAt',
  'charged',
  'createdAt',
  'confirmedAt',
  'finalizedAt',
  'channelTradeNo',
] as const;

const iso = (ms: number | undefined) => (ms === undefined ? '' : new Date(ms).toISOString());

/**
 * One payout as a report row. `total` is amount + fee (what was reserved); `charged` is what the
 * payout finally took from the balance: the total once SUCCEEDED, the total less the returned
 * amount once REFUNDED (the fee is kept), nothing while PENDING or PROCESSING (still reserved) or
 * once FAILED (released). Amounts are the API's decimal strings, summed in minor units.
 */
export function payoutReportRow(payout: PayoutView): string[] {
  const scale = scaleOf(payout.currency);
  const minor = (amount: string | undefined) => (amount === undefined ? 0n : (parseAmount(amount, scale) ?? 0n));
  const total = minor(payout.amount) + minor(payout.fee);
  const charged =
    payout.status === 'SUCCEEDED' ? total : payout.status === 'REFUNDED' ? total - minor(payout.refundAmount) : 0n;
  return [
    payout.orderNo,
    payout.merchantOrderNo,
    payout.status,
    payout.currency,
    payout.amount,
    payout.fee,
    formatAmount(total, scale),
    payout.refundNo ?? '',
    payout.refundAmount ?? '',
    iso(payout.refundTime),
    formatAmount(charged, scale),
    iso(payout.createdAt),
    iso(payout.confirmedAt),
    iso(payout.finalizedAt),
    payout.channelTradeNo ?? '',
  ];
}

/** The payments report's columns (CSV, one payment a row, newest first), beside the payouts'. */
export const PAYMENT_REPORT_HEADER = [
  'orderNo',
  'merchantOrderNo',
  'status',
  'currency',
  'amount',
  'paidAmount',
  'method',
  'createdAt',
  'expiresAt',
  'finalizedAt',
  'channelTradeNo',
] as const;

/** One payment as a report row: amounts are the API's decimal strings, times ISO 8601 in UTC. */
export function paymentReportRow(payment: PaymentView): string[] {
  return [
    payment.orderNo,
    payment.merchantOrderNo,
    payment.status,
    payment.currency,
    payment.amount,
    payment.paidAmount ?? '',
    payment.paymentMethod.code,
    iso(payment.createdAt),
    iso(payment.expiresAt),
    iso(payment.finalizedAt),
    payment.channelTradeNo ?? '',
  ];
}
