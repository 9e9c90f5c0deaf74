/**
 * Shapes of the merchant API: request inputs and response data, in one place. They follow
 * `packages/server/openapi.json`; the platform may add members to responses at any time, so
 * treat every object as open (read what you know, ignore the rest).
 *
 * @module
 */

/** Decimal string in major units, e.g. `"125.50"`: no sign, no exponent, never a float. */
export type Decimal = string;

/** Unix time in milliseconds. */
export type UnixMs = number;

/** Sandbox currencies (the platform may add more). */
export type Currency = 'BRL' | 'MXN' | 'USD' | 'EUR' | (string & {});

/** Payment method codes (BRL: PIX, BOLETO; MXN: SPEI; USD: CARD; EUR: SEPA). */
export type PaymentMethodCode = 'PIX' | 'BOLETO' | 'SPEI' | 'CARD' | 'SEPA' | (string & {});

/** States of a payment order. PENDING and PROCESSING are seen only through the query APIs. */
export type PaymentStatus = 'PENDING' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'EXPIRED' | 'CANCELED';

/** States of a payout order. REFUNDED follows SUCCEEDED when the payout was returned upstream. */
export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'REFUNDED';

/** Final payment states: each is announced by a webhook. */
export const FINAL_PAYMENT_STATUSES = ['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'] as const;

/** Final payout states: each is announced by a webhook (REFUNDED may follow SUCCEEDED). */
export const FINAL_PAYOUT_STATUSES = ['SUCCEEDED', 'FAILED', 'REFUNDED'] as const;

/** Which kind of order. */
export type OrderType = 'PAYMENT' | 'PAYOUT';

/**
 * Names one order in a write: exactly one of `orderNo` (the platform's) and `merchantOrderNo`
 * (yours).
 */
export type OrderRef = { orderNo: string; merchantOrderNo?: never } | { merchantOrderNo: string; orderNo?: never };

/** The payer as the channel reported it. Absent members are unknown. */
export interface Payer {
  name?: string;
  /** Kept as a string: leading zeros survive. No document type is returned or inferred. */
  documentNumber?: string;
}

/** What the payer does to pay, as the payment's channel said. */
export type PayerAction =
  | { kind: 'redirect'; url: string }
  | { kind: 'pix'; url: string; pixCode: string }
  | { kind: 'boleto'; url: string; boletoLine: string }
  | { kind: 'bank'; url: string; bankDetails: Record<string, string> };

/** A payment order as the API returns it. */
export interface Payment {
  /** Platform order number, `P` and 18 digits. */
  orderNo: string;
  merchantOrderNo: string;
  status: PaymentStatus;
  currency: Currency;
  amount: Decimal;
  paymentMethod: { code: PaymentMethodCode };
  webhookUrl: string;
  attach?: string;
  /** Where to send the payer to pay: the channel's hosted page (the sandbox cashier page in the sandbox). */
  cashierUrl: string;
  /**
   * What the payer does to pay: `url` (the same as cashierUrl) and, by kind, the PIX copy-and-paste
   * code, the boleto line or the bank account to transfer to.
   */
  payerAction?: PayerAction;
  /** What the payer paid; present once SUCCEEDED. */
  paidAmount?: Decimal;
  channelTradeNo?: string;
  /** Omitted when the channel reported neither name nor document. */
  payer?: Payer;
  createdAt: UnixMs;
  updatedAt: UnixMs;
  /** A PENDING order expires at this time. */
  expiresAt: UnixMs;
  /** When the order reached its final state. */
  finalizedAt?: UnixMs;
}

/** `POST /api/v1/payments`. Creates deduplicate on `merchantOrderNo` alone. */
export interface CreatePaymentInput {
  /** Your order number: 1 to 64 letters, digits and `._:-`, starting with a letter or digit. */
  merchantOrderNo: string;
  currency: Currency;
  amount: Decimal;
  paymentMethod: { code: PaymentMethodCode };
  /** Receives the payment's webhooks: http(s) in the sandbox, https in production. */
  webhookUrl: string;
  /** Your text, echoed in events (at most 1024 characters). */
  attach?: string;
}

/** `POST /api/v1/payments/update` and `/payouts/update`: change attach and/or webhookUrl. */
export type UpdateOrderInput = OrderRef & { attach?: string; webhookUrl?: string };

/** Who receives a payout. Returned only by the payout receipt. */
export interface Payee {
  name: string;
  /** Bank account, CLABE, IBAN or PIX key; no spaces. */
  accountNumber: string;
  bankCode?: string;
  documentNumber?: string;
}

/** A payout order as the API returns it. Carries no payee details (see the receipt). */
export interface Payout {
  /** Platform order number, `W` and 18 digits. */
  orderNo: string;
  merchantOrderNo: string;
  status: PayoutStatus;
  currency: Currency;
  /** What the payee receives. */
  amount: Decimal;
  /** The payout fee, fixed at creation, reserved and charged on top of amount. */
  fee: Decimal;
  webhookUrl: string;
  attach?: string;
  channelTradeNo?: string;
  /** Present only once a refund has posted (REFUNDED). */
  refundNo?: string;
  /** The full returned principal; REFUNDED only. */
  refundAmount?: Decimal;
  /** When the refund posted; REFUNDED only. */
  refundTime?: UnixMs;
  createdAt: UnixMs;
  updatedAt: UnixMs;
  confirmedAt?: UnixMs;
  finalizedAt?: UnixMs;
}

/** `POST /api/v1/payouts`: amount + fee are reserved from the available balance. */
export interface CreatePayoutInput {
  merchantOrderNo: string;
  currency: Currency;
  amount: Decimal;
  webhookUrl: string;
  attach?: string;
  payee: Payee;
}

/** `GET /api/v1/payouts/receipt`: the only read that returns the payee. */
export interface PayoutReceipt {
  orderNo: string;
  merchantOrderNo: string;
  status: PayoutStatus;
  currency: Currency;
  amount: Decimal;
  fee: Decimal;
  /** amount + fee: what left the available balance. */
  total: Decimal;
  payee: Payee;
  channelTradeNo?: string;
  refundNo?: string;
  refundAmount?: Decimal;
  refundTime?: UnixMs;
  createdAt: UnixMs;
  confirmedAt?: UnixMs;
  finalizedAt?: UnixMs;
}

/** A merchant's money in one currency. */
export interface Balance {
  currency: Currency;
  /** What payouts may use now. */
  available: Decimal;
  /** Held for PENDING and PROCESSING payouts (amount + fee). */
  reserved: Decimal;
}

/** A fee: a percentage (two decimals) plus a fixed part in major units. */
export interface Fee {
  feePercent: Decimal;
  feeFixed: Decimal;
}

/** The rates of one currency: pay-in fee per method and the payout fee. */
export interface CurrencyRates {
  currency: Currency;
  /** Minor-unit digits (ISO 4217). */
  scale: number;
  payments: (Fee & { method: PaymentMethodCode })[];
  payout: Fee;
}

/** One posting on one of the merchant's accounts. */
export interface LedgerEntry {
  entryId: string;
  reference: string;
  transactionKind: 'payment' | 'payout_reserve' | 'payout_settle' | 'payout_release' | 'refund' | (string & {});
  orderNo: string;
  account: 'available' | 'reserved';
  currency: Currency;
  /** Signed: positive credits the account, negative debits it. */
  amount: string;
  side: 'credit' | 'debit';
  createdAt: UnixMs;
}

/** One page of a list, newest first. Pass `nextCursor` as `cursor` for the next page. */
export interface Page<T> {
  items: T[];
  /** `null` on the last page. */
  nextCursor: string | null;
}

/** Filters of the order list endpoints. */
export interface ListOrdersQuery<S extends string = string> {
  status?: S;
  /** Created at or after (Unix ms). */
  from?: UnixMs;
  /** Created at or before (Unix ms). */
  to?: UnixMs;
  /** 1 to 100, default 20. */
  pageSize?: number;
  cursor?: string;
}

/** Filters of `GET /api/v1/ledger/entries`. */
export interface LedgerEntriesQuery {
  currency?: Currency;
  from?: UnixMs;
  to?: UnixMs;
  pageSize?: number;
  cursor?: string;
}

/** Delivery state of a webhook event. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One delivery attempt of a webhook event. */
export interface DeliveryAttempt {
  attempt: number;
  startedAt: UnixMs;
  latencyMs: number;
  /** Your receiver's HTTP status; `null` when no answer came. */
  statusCode: number | null;
  /** The first bytes of your receiver's answer. */
  responseExcerpt: string | null;
  error: string | null;
}

/**
 * A webhook event and its delivery, as `GET /api/v1/events` and `POST /api/v1/events/resend`
 * return it. (Still growing: new members may appear.)
 */
export interface EventDelivery {
  eventId: string;
  orderType: OrderType;
  orderNo: string;
  /** The order status the event announces. */
  status: string;
  deliveryStatus: DeliveryStatus;
  attempts: number;
  createdAt: UnixMs;
  deliveredAt: UnixMs | null;
  nextAttemptAt: UnixMs | null;
  lastStatusCode: number | null;
  lastError: string | null;
  /** Every attempt, oldest first; present when the list was filtered by `orderNo`. */
  attemptLog?: DeliveryAttempt[];
}

/** Filters of `GET /api/v1/events`. */
export interface ListEventsQuery {
  orderNo?: string;
  /** Delivery status. */
  status?: DeliveryStatus;
  from?: UnixMs;
  to?: UnixMs;
  pageSize?: number;
  cursor?: string;
}

/** `POST /api/v1/sandbox/payments/simulate`: act as the payment channel would. */
export interface SimulatePaymentInput {
  orderNo: string;
  status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'EXPIRED';
  /** SUCCEEDED only; defaults to amount. */
  paidAmount?: Decimal;
  channelTradeNo?: string;
  payer?: Payer;
}

/** `POST /api/v1/sandbox/payouts/simulate`: act as the payout channel would. */
export interface SimulatePayoutInput {
  orderNo: string;
  status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED';
  channelTradeNo?: string;
}

/** `POST /api/v1/sandbox/payouts/return`: the channel returns a SUCCEEDED payout. */
export interface ReturnPayoutInput {
  orderNo: string;
  refundNo?: string;
}

/** One problem with one input field, as `VALIDATION_FAILED` reports it. */
export interface FieldError {
  field: string;
  message: string;
}

/** Failure codes the platform answers with (`msg`); others may be added. */
export type ApiErrorCode =
  | 'UNAUTHORIZED'
  | 'VALIDATION_FAILED'
  | 'ORDER_NOT_FOUND'
  | 'EVENT_NOT_FOUND'
  | 'NOT_FOUND'
  | 'DUPLICATE_ORDER'
  | 'INVALID_STATE'
  | 'INSUFFICIENT_BALANCE'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | (string & {});
