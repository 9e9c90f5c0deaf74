import { z } from 'zod';
import {
  attach,
  channelReference,
  Currency,
  decimal,
  merchantOrderNo,
  orderNoOf,
  orderRefOf,
  unixMs,
  updateOrderOf,
  type WebhookUrlSchema,
  webhookUrlInput,
  webhookUrlOutput,
} from './common.js';
import { component } from './registry.js';

/** States of a payout order. REFUNDED follows SUCCEEDED when the payout was returned upstream. */
export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'REFUNDED'] as const;
export const PayoutStatus = z.enum(PAYOUT_STATUSES);
export type PayoutStatus = z.output<typeof PayoutStatus>;

/** Final payout states: each is announced by a webhook (REFUNDED may follow SUCCEEDED). */
export const FINAL_PAYOUT_STATUSES = ['SUCCEEDED', 'FAILED', 'REFUNDED'] as const;

/** What the sandbox channel may report about a payout. */
export const PAYOUT_CHANNEL_STATUSES = ['PROCESSING', 'SUCCEEDED', 'FAILED'] as const;

/** Who receives a payout. */
export const Payee = component(
  'Payee',
  z
    .strictObject({
      name: z
        .string()
        .trim()
        .min(1, 'required')
        .max(200, 'at most 200 characters')
        .regex(/^\P{Cc}*$/u, 'free of control characters'),
      accountNumber: z
        .string()
        .max(140, 'at most 140 characters')
        .regex(
          /^[A-Za-z0-9@.+_-]+( [A-Za-z0-9@.+_-]+)*$/,
          'up to 140 letters, digits or @.+_-, in groups separated by single spaces',
        )
        .meta({
          description:
            'Bank account, CLABE, IBAN or PIX key. Written as people write it (an IBAN in groups of four, `DE89 3704 0044 0532 0130 00`): the spaces are dropped and the number is kept in its electronic form (a SEPA channel also upper-cases an IBAN)',
        }),
      bankCode: z
        .string()
        .regex(/^[A-Za-z0-9]{1,16}$/, 'up to 16 letters or digits')
        .optional(),
      documentNumber: z
        .string()
        .regex(/^[0-9A-Za-z.\-/]{1,32}$/, 'up to 32 letters, digits or .-/')
        .meta({ description: 'Kept as a string: leading zeros survive' })
        .optional(),
    })
    .meta({
      description: 'Who receives the payout. Returned only by the payout receipt; never in queries, lists or webhooks.',
    }),
);
export type Payee = z.output<typeof Payee>;

const refundFields = {
  refundNo: z.string().meta({ description: 'Present only once the refund has posted (REFUNDED)' }).optional(),
  refundAmount: decimal(
    'The full returned principal (not net of the payout fee, which is not returned); REFUNDED only',
  ).optional(),
  refundTime: unixMs('When the refund posted; never changes on retry; REFUNDED only').optional(),
};

/** A payout order as queries and lists return it. It never carries payee details (see the receipt). */
export const Payout = component(
  'Payout',
  z
    .object({
      orderNo: orderNoOf('W'),
      merchantOrderNo: z.string(),
      status: PayoutStatus,
      currency: Currency,
      amount: decimal('What the payee receives, major units'),
      fee: decimal('The payout fee from the rate table, fixed at creation; reserved and charged on top of amount'),
      webhookUrl: webhookUrlOutput,
      attach: z.string().optional(),
      channelTradeNo: z.string().meta({ description: 'Present once the channel reported a final outcome' }).optional(),
      ...refundFields,
      createdAt: unixMs('Creation time'),
      updatedAt: unixMs('Last change'),
      confirmedAt: unixMs('When the merchant confirmed the payout').optional(),
      finalizedAt: unixMs('When the channel reported SUCCEEDED or FAILED').optional(),
    })
    .meta({ description: 'A payout order. Carries no payee details (see the receipt).' }),
);
export type Payout = z.output<typeof Payout>;

/** The payout receipt: the only read that returns the payee. */
export const PayoutReceipt = component(
  'PayoutReceipt',
  z
    .object({
      orderNo: orderNoOf('W'),
      merchantOrderNo: z.string(),
      status: PayoutStatus,
      currency: Currency,
      amount: decimal('What the payee receives'),
      fee: decimal('The payout fee'),
      total: decimal('amount + fee: what left the available balance'),
      payee: Payee,
      channelTradeNo: z.string().optional(),
      ...refundFields,
      createdAt: unixMs('Creation time'),
      confirmedAt: unixMs('Confirmation time').optional(),
      finalizedAt: unixMs('Time of the final channel outcome').optional(),
    })
    .meta({ description: 'The payout receipt: the only read that returns the payee.' }),
);
export type PayoutReceipt = z.output<typeof PayoutReceipt>;

/** `POST /api/v1/payouts`, with the server's webhookUrl rule in place of the shape. */
export const createPayoutRequest = (webhookUrl: WebhookUrlSchema = webhookUrlInput) =>
  z.strictObject({
    merchantOrderNo: merchantOrderNo.meta({ description: 'Creates deduplicate on this alone' }),
    currency: Currency,
    amount: decimal("Positive, no sign or exponent, at most the currency's minor digits"),
    webhookUrl,
    attach: attach.optional(),
    payee: Payee,
  });
export const CreatePayoutRequest = component('CreatePayoutRequest', createPayoutRequest());
export type CreatePayoutRequest = z.input<typeof CreatePayoutRequest>;

/** `POST /api/v1/payouts/confirm`. */
export const PayoutRef = component('PayoutRef', orderRefOf('W'));

/** `POST /api/v1/payouts/update`. */
export const updatePayoutRequest = (webhookUrl?: WebhookUrlSchema) => updateOrderOf('W', webhookUrl);
export const UpdatePayoutRequest = component('UpdatePayoutRequest', updatePayoutRequest());

/** `POST /api/v1/sandbox/payouts/simulate`: what the channel reports. */
export const SimulatePayoutRequest = component(
  'SimulatePayoutRequest',
  z.strictObject({
    orderNo: orderNoOf('W'),
    status: z.enum(PAYOUT_CHANNEL_STATUSES),
    channelTradeNo: channelReference.optional(),
  }),
);
export type SimulatePayoutRequest = z.input<typeof SimulatePayoutRequest>;

/** `POST /api/v1/sandbox/payouts/return`: the channel returns a SUCCEEDED payout. */
export const ReturnPayoutRequest = component(
  'ReturnPayoutRequest',
  z.strictObject({ orderNo: orderNoOf('W'), refundNo: channelReference.optional() }),
);
export type ReturnPayoutRequest = z.input<typeof ReturnPayoutRequest>;
