/** What the portal API (/portal/api) returns: the server's views, as JSON. */
import type * as wire from '@paygate/wire';

export type Environment = 'sandbox' | 'production';

export interface Session {
  email: string;
  merchant: { name: string; accessKey: string; environment: Environment };
  expiresAt: number;
  csrfToken: string;
}

export interface MerchantKey {
  id: string;
  publicKey: string;
  status: 'active' | 'retired';
  createdAt: number;
  retiredAt: number | null;
}

export interface Credentials {
  merchantName: string;
  accessKey: string;
  environment: Environment;
  maxActiveKeys: number;
  publicKeys: MerchantKey[];
  bodyKey: { keyId: string; publicKey: string };
  webhookKeys: { keyid: string; publicKey: string; status: string; createdAt: number }[];
}

export type Page<T> = wire.Page<T>;

/** The merchant API's views, which the portal API answers too: the wire schemas' types. */
export type Payer = wire.Payer;
export type Payment = wire.Payment;
export type Payout = wire.Payout;
export type Receipt = wire.PayoutReceipt;
export type Balance = wire.Balance;
export type LedgerEntry = wire.LedgerEntry;
/** A webhook event in the list across orders. */
export type EventSummary = wire.WebhookEvent;
/** The order pages' views. */
export type TimelineEntry = wire.TimelineEntry;
export type Attempt = wire.PortalAttempt;
export type WebhookEvent = wire.PortalOrderEvent;
export type PaymentCharges = wire.PaymentCharges;
export type PaymentDetail = wire.PaymentDetail;
export type PayoutDetail = wire.PayoutDetail;
export type RejectedRequest = wire.RejectedRequest;
export type StatusTotal = wire.StatusTotal;

/** A list page with the number of every match (not only this page's). */
export interface CountedPage<T> extends Page<T> {
  total: number;
}

export interface Overview {
  from: number;
  to: number;
  payments: StatusTotal[];
  payouts: StatusTotal[];
  balances: Balance[];
  failedEvents: number;
  recentFailures: EventSummary[];
}

export interface RecoverResult {
  resent: number;
  remaining: number;
  max: number;
}
