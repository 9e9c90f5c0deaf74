import { z } from 'zod';
import {
  attach,
  channelReference,
  Currency,
  decimal,
  merchantOrderNo,
  orderNoOf,
  orderRefOf,
  PaymentMethodCode,
  unixMs,
  updateOrderOf,
  type WebhookUrlSchema,
  returnUrlInput,
  returnUrlOutput,
  webhookUrlInput,
  webhookUrlOutput,
} from './common.js';
import { component } from './registry.js';

/** States of a payment order. PENDING and PROCESSING are seen only through the query APIs. */
export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'] as const;
export const PaymentStatus = z.enum(PAYMENT_STATUSES);
export type PaymentStatus = z.output<typeof PaymentStatus>;

/** Final payment states: each is announced by a webhook. */
export const FINAL_PAYMENT_STATUSES = ['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'] as const;

/** What the channel (the sandbox helper, the cashier page) may report about a payment. */
export const PAYMENT_CHANNEL_STATUSES = ['PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED'] as const;

/** The payer as the channel reported it; members and the object itself are omitted when unknown. */
export const Payer = component(
  'Payer',
  z
    .object({
      name: z.string().optional(),
      documentNumber: z.string().meta({ description: 'Kept as a string: leading zeros survive' }).optional(),
    })
    .meta({
      description:
        'The actual payer as the channel reported it; absent members are unknown, the whole object is omitted when both are',
    }),
);
export type Payer = z.output<typeof Payer>;

/** What the payer does to pay, as the payment's channel said. */
export const PayerAction = component(
  'PayerAction',
  z
    .discriminatedUnion('kind', [
      z.object({ kind: z.literal('redirect'), url: z.string().meta({ format: 'uri' }) }),
      z.object({
        kind: z.literal('pix'),
        url: z.string().meta({ format: 'uri' }),
        pixCode: z.string().meta({ description: 'The PIX copy-and-paste (BR Code) text' }),
      }),
      z.object({
        kind: z.literal('boleto'),
        url: z.string().meta({ format: 'uri' }),
        boletoLine: z.string().meta({ description: 'The digitable line' }),
      }),
      z.object({
        kind: z.literal('bank'),
        url: z.string().meta({ format: 'uri' }),
        bankDetails: z
          .record(z.string(), z.string())
          .meta({ description: 'The account details the payer transfers to' }),
      }),
    ])
    .meta({
      description:
        "What the payer does to pay, as the payment's channel said: `url` (the same as cashierUrl) is the channel's hosted page (the sandbox cashier page for the built-in sandbox channel); `pix` adds the PIX copy-and-paste code, `boleto` the boleto's digitable line, `bank` the account to transfer to.",
    }),
);
export type PayerAction = z.output<typeof PayerAction>;

/**
 * Where a payer pays a payment by bank transfer (EUR/SEPA on a sepa-sftp channel; decisions.md,
 * "Payments by bank transfer"): a SEPA credit transfer to this account with this reference.
 */
export const BankTransfer = component(
  'BankTransfer',
  z
    .object({
      iban: z.string().meta({ description: "The account to transfer to (the channel's account), electronic form" }),
      bic: z.string().meta({ description: "Its bank's BIC, when the channel's settings give one" }).optional(),
      beneficiary: z.string().meta({ description: 'The account holder the payer names as beneficiary' }),
      reference: z.string().meta({
        description:
          'The ISO 11649 structured creditor reference (RF, two check digits, 18 digits; mod-97 valid), unique to this payment, in electronic form (the payer page shows it in groups of four). The payer gives it as the structured reference of the transfer (or within its text); the bank\u2019s booked credit of exactly `amount` with it settles the payment',
        example: 'RF94202612010000000123',
      }),
    })
    .meta({
      description:
        'A payment by bank transfer: the payer sends a SEPA credit transfer of `amount` to `iban` with `reference`. The payer page (`cashierUrl`) shows them with the EPC QR code (EPC069-12) banking apps scan.',
    }),
);
export type BankTransfer = z.output<typeof BankTransfer>;

/** A payment order as the API returns it. */
export const Payment = component(
  'Payment',
  z.object({
    orderNo: orderNoOf('P'),
    merchantOrderNo: z.string(),
    status: PaymentStatus,
    currency: Currency,
    amount: decimal("Amount in major units, with the currency's minor digits"),
    paymentMethod: z.object({ code: PaymentMethodCode }),
    webhookUrl: webhookUrlOutput,
    attach: z.string().optional(),
    returnUrl: returnUrlOutput.optional(),
    cashierUrl: z.string().meta({
      format: 'uri',
      description:
        "Where the payer pays: the channel's hosted page (payerAction.url), or the sandbox cashier page for the built-in sandbox channel",
    }),
    payerAction: PayerAction,
    bankTransfer: BankTransfer.optional(),
    paidAmount: decimal('Amount the payer paid; present once SUCCEEDED').optional(),
    channelTradeNo: z.string().optional(),
    payer: Payer.optional(),
    createdAt: unixMs('Creation time'),
    updatedAt: unixMs('Last change'),
    expiresAt: unixMs('A PENDING order expires at this time'),
    finalizedAt: unixMs('Time the order reached its final state').optional(),
  }),
);
export type Payment = z.output<typeof Payment>;

/** `POST /api/v1/payments`, with the server's webhookUrl and returnUrl rules in place of the shapes. */
export const createPaymentRequest = (
  webhookUrl: WebhookUrlSchema = webhookUrlInput,
  returnUrl: WebhookUrlSchema = returnUrlInput,
) =>
  z
    .strictObject({
      merchantOrderNo: merchantOrderNo.meta({ description: 'Creates deduplicate on this alone' }),
      currency: Currency,
      amount: decimal(
        "Positive, no sign or exponent, at most the currency's minor digits (2 for all sandbox currencies)",
      ),
      paymentMethod: z.strictObject({
        code: z.string().meta({ description: 'BRL: PIX, BOLETO; MXN: SPEI; USD: CARD; EUR: SEPA' }),
      }),
      webhookUrl,
      attach: attach.optional(),
      returnUrl: returnUrl.optional(),
    })
    .meta({
      description:
        'Unknown members are refused: 400 VALIDATION_FAILED names each (payer details in particular are never taken from here).',
    });
export const CreatePaymentRequest = component('CreatePaymentRequest', createPaymentRequest());
export type CreatePaymentRequest = z.input<typeof CreatePaymentRequest>;

/** `POST /api/v1/payments/cancel`. */
export const PaymentRef = component('PaymentRef', orderRefOf('P'));

/** `POST /api/v1/payments/update`. */
export const updatePaymentRequest = (webhookUrl?: WebhookUrlSchema) => updateOrderOf('P', webhookUrl);
export const UpdatePaymentRequest = component('UpdatePaymentRequest', updatePaymentRequest());

/** `POST /api/v1/sandbox/payments/simulate` (and the cashier page): what the channel reports. */
export const SimulatePaymentRequest = component(
  'SimulatePaymentRequest',
  z.strictObject({
    orderNo: orderNoOf('P'),
    status: z.enum(PAYMENT_CHANNEL_STATUSES),
    paidAmount: decimal('SUCCEEDED only; defaults to amount').optional(),
    channelTradeNo: channelReference.optional(),
    payer: z
      .strictObject({
        name: z.string().min(1).max(200).optional(),
        // A string, so leading zeros survive; no document type is inferred.
        documentNumber: z
          .string()
          .regex(/^[0-9A-Za-z.\-/]{1,32}$/, 'up to 32 letters, digits or .-/')
          .optional(),
      })
      .optional(),
    failureReason: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .meta({ description: 'FAILED only: why (shown in the portal)' })
      .optional(),
  }),
);
export type SimulatePaymentRequest = z.input<typeof SimulatePaymentRequest>;
