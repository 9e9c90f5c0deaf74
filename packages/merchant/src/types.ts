/**
 * Shapes of the merchant API: request inputs and response data. Each is the TypeScript type of
 * the platform's own wire schema (`@paygate/wire`), the one the platform validates requests with
 * and generates `packages/server/openapi.json` from; only the list filters below are the SDK's
 * own. The platform may add members to responses at any time, so treat every object as open
 * (read what you know, ignore the rest).
 *
 * @module
 */
import type * as wire from '@paygate/wire';
import type { z } from 'zod';

/** Decimal string in major units, e.g. `"125.50"`: no sign, no exponent, never a float. */
export type Decimal = string;

/** Unix time in milliseconds. */
export type UnixMs = number;

/**
 * Currencies the platform accepts. Inputs and filters take any string too, so that a currency a
 * newer platform accepts needs no newer SDK (the platform answers VALIDATION_FAILED otherwise).
 */
export type Currency = wire.Currency | (string & {});

/** Payment method codes (BRL: PIX, BOLETO; MXN: SPEI; USD: CARD; EUR: SEPA); inputs take any string too. */
export type PaymentMethodCode = wire.PaymentMethodCode | (string & {});

/** States of a payment order. PENDING and PROCESSING are seen only through the query APIs. */
export type PaymentStatus = wire.PaymentStatus;

/** States of a payout order. REFUNDED follows SUCCEEDED when the payout was returned upstream. */
export type PayoutStatus = wire.PayoutStatus;

/** Final payment states: each is announced by a webhook. */
export const FINAL_PAYMENT_STATUSES = [
  'SUCCEEDED',
  'FAILED',
  'EXPIRED',
  'CANCELED',
] as const satisfies readonly PaymentStatus[];

/** Final payout states: each is announced by a webhook (REFUNDED may follow SUCCEEDED). */
export const FINAL_PAYOUT_STATUSES = ['SUCCEEDED', 'FAILED', 'REFUNDED'] as const satisfies readonly PayoutStatus[];

/** Which kind of order. */
export type OrderType = wire.OrderType;

/**
 * Names one order in a write: exactly one of `orderNo` (the platform's) and `merchantOrderNo`
 * (yours).
 */
export type OrderRef = wire.OrderRef;

/** The payer as the channel reported it. Absent members are unknown; `documentNumber` keeps leading zeros. */
export type Payer = wire.Payer;

/**
 * What the payer does to pay, as the payment's channel said: `url` (the same as cashierUrl) and,
 * by kind, the PIX copy-and-paste code, the boleto line or the bank account to transfer to.
 */
export type PayerAction = wire.PayerAction;

/** A payment order as the API returns it. */
export type Payment = wire.Payment;

/** `POST /api/v1/payments`. Creates deduplicate on `merchantOrderNo` alone. */
export type CreatePaymentInput = Omit<wire.CreatePaymentRequest, 'currency'> & { currency: Currency };

/** `POST /api/v1/payments/update` and `/payouts/update`: change attach and/or webhookUrl. */
export type UpdateOrderInput = OrderRef & { attach?: string; webhookUrl?: string };

/** Who receives a payout. Returned only by the payout receipt. */
export type Payee = wire.Payee;

/** A payout order as the API returns it. Carries no payee details (see the receipt). */
export type Payout = wire.Payout;

/** `POST /api/v1/payouts`: amount + fee are reserved from the available balance. */
export type CreatePayoutInput = Omit<wire.CreatePayoutRequest, 'currency'> & { currency: Currency };

/** `GET /api/v1/payouts/receipt`: the only read that returns the payee. */
export type PayoutReceipt = wire.PayoutReceipt;

/** A merchant's money in one currency. */
export type Balance = wire.Balance;

/** A fee: a percentage (two decimals) plus a fixed part in major units. */
export type Fee = wire.Fee;

/** The rates of one currency: pay-in fee per method and the payout fee. */
export type CurrencyRates = wire.CurrencyRates;

/** One posting on one of the merchant's accounts. */
export type LedgerEntry = wire.LedgerEntry;

/** One page of a list, newest first. Pass `nextCursor` as `cursor` for the next page (`null` on the last). */
export type Page<T> = wire.Page<T>;

/** The decoded query parameters of a wire query schema, all optional (the platform's defaults apply). */
export type Filters<Q extends z.ZodObject> = Partial<z.output<Q>>;

/** Filters of the order list endpoints: status, creation time range (Unix ms, inclusive), page size 1 to 100 (default 20), cursor. */
export type ListOrdersQuery<S extends string = string> = Omit<Filters<typeof wire.ListQuery>, 'status'> & {
  status?: S;
};

/** Filters of `GET /api/v1/ledger/entries`: currency, posting time range (Unix ms), page size, cursor. */
export type LedgerEntriesQuery = Omit<Filters<typeof wire.LedgerEntriesQuery>, 'currency'> & { currency?: Currency };

/** Delivery state of a webhook event. */
export type DeliveryStatus = wire.DeliveryStatus;

/** One delivery attempt of a webhook event. */
export type DeliveryAttempt = wire.DeliveryAttempt;

/**
 * A webhook event and its delivery, as `GET /api/v1/events` and `POST /api/v1/events/resend`
 * return it; `attemptLog` is present when the list was filtered by `orderNo`.
 */
export type EventDelivery = wire.WebhookEvent;

/** Filters of `GET /api/v1/events`: orderNo, delivery status, creation time range (Unix ms), page size, cursor. */
export type ListEventsQuery = Omit<Filters<typeof wire.EventListQuery>, 'status'> & { status?: DeliveryStatus };

/** `POST /api/v1/sandbox/payments/simulate`: act as the payment channel would. */
export type SimulatePaymentInput = wire.SimulatePaymentRequest;

/** `POST /api/v1/sandbox/payouts/simulate`: act as the payout channel would. */
export type SimulatePayoutInput = wire.SimulatePayoutRequest;

/** `POST /api/v1/sandbox/payouts/return`: the channel returns a SUCCEEDED payout. */
export type ReturnPayoutInput = wire.ReturnPayoutRequest;

/** `POST /api/v1/sandbox/webhooks/check`: the receiver to check. */
export type CheckReceiverInput = wire.CheckReceiverRequest;

/** What a receiver check came to: each case's expected and observed answers. */
export type ReceiverCheck = wire.ReceiverCheck;

/** One case of a receiver check. */
export type ReceiverCheckCase = wire.ReceiverCheckCase;

/** One problem with one input field, as `VALIDATION_FAILED` reports it. */
export type FieldError = wire.FieldError;

/** Failure codes the platform answers with (`msg`); others may be added. */
export type ApiErrorCode = 'UNAUTHORIZED' | wire.ErrorCode | (string & {});
