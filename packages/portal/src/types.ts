/** What the portal API (/portal/api) returns: the server's views, as JSON. */

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

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Payer {
  name?: string;
  documentNumber?: string;
}

export interface Payment {
  orderNo: string;
  merchantOrderNo: string;
  status: string;
  currency: string;
  amount: string;
  paymentMethod: { code: string };
  webhookUrl: string;
  attach?: string;
  cashierUrl: string;
  paidAmount?: string;
  channelTradeNo?: string;
  payer?: Payer;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  finalizedAt?: number;
}

export interface Payout {
  orderNo: string;
  merchantOrderNo: string;
  status: string;
  currency: string;
  amount: string;
  fee: string;
  webhookUrl: string;
  attach?: string;
  channelTradeNo?: string;
  refundNo?: string;
  refundAmount?: string;
  refundTime?: number;
  createdAt: number;
  updatedAt: number;
  confirmedAt?: number;
  finalizedAt?: number;
}

export interface Receipt {
  orderNo: string;
  merchantOrderNo: string;
  status: string;
  currency: string;
  amount: string;
  fee: string;
  total: string;
  payee: { name: string; accountNumber: string; bankCode?: string; documentNumber?: string };
  channelTradeNo?: string;
  refundNo?: string;
  refundAmount?: string;
  refundTime?: number;
  createdAt: number;
  confirmedAt?: number;
  finalizedAt?: number;
}

export interface TimelineEntry {
  at: number;
  status: string;
  label: string;
}

export interface Attempt {
  at: number;
  statusCode: number | null;
  latencyMs: number | null;
  responseExcerpt: string | null;
  error: string | null;
}

export interface WebhookEvent {
  eventId: string;
  status: string;
  webhookUrl: string;
  createdAt: number;
  body: string;
  delivery: string;
  nextAttemptAt?: number | null;
  attempts: Attempt[];
}

export interface PaymentDetail {
  payment: Payment;
  charges: PaymentCharges;
  failureReason: string | null;
  timeline: TimelineEntry[];
  events: WebhookEvent[];
}

export interface PayoutDetail {
  payout: Payout;
  receipt: Receipt;
  timeline: TimelineEntry[];
  events: WebhookEvent[];
}

export interface Balance {
  currency: string;
  available: string;
  reserved: string;
}

export interface LedgerEntry {
  entryId: string;
  reference: string;
  transactionKind: string;
  orderNo: string;
  account: string;
  currency: string;
  amount: string;
  side: 'credit' | 'debit';
  createdAt: number;
}

export interface RejectedRequest {
  requestId: string;
  method: string;
  path: string;
  step: string;
  reason: string;
  signatureBase: string | null;
  createdAt: number;
}

/** A list page with the number of every match (not only this page's). */
export interface CountedPage<T> extends Page<T> {
  total: number;
}

export interface PaymentCharges {
  fee: string;
  net: string;
  /** Booked in the ledger (SUCCEEDED); otherwise what the rate table would charge. */
  booked: boolean;
}

/** A webhook event in the list across orders. */
export interface EventSummary {
  eventId: string;
  orderType: 'PAYMENT' | 'PAYOUT';
  orderNo: string;
  status: string;
  deliveryStatus: string;
  attempts: number;
  createdAt: number;
  deliveredAt: number | null;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

export interface StatusTotal {
  status: string;
  currency: string;
  count: number;
  amount: string;
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
