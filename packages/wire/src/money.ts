import { z } from 'zod';
import { Currency, decimal, PaymentMethodCode, unixMs } from './common.js';
import { component } from './registry.js';

/** A merchant's money in one currency. */
export const Balance = component(
  'Balance',
  z.object({
    currency: Currency,
    available: decimal('What payouts may use now, major units'),
    reserved: decimal('Held for PENDING and PROCESSING payouts (amount + fee), major units'),
  }),
);
export type Balance = z.output<typeof Balance>;

const feeFields = {
  feePercent: decimal('Percentage of the amount (two decimals); the charge is rounded half up to the minor unit'),
  feeFixed: decimal('Fixed part, major units'),
};

/** A fee: a percentage (two decimals) plus a fixed part in major units. */
export const Fee = z.object(feeFields);
export type Fee = z.output<typeof Fee>;

/** The rates of one currency: pay-in fee per method and the payout fee. */
export const CurrencyRates = component(
  'CurrencyRates',
  z.object({
    currency: Currency,
    scale: z.int().meta({ description: 'Minor-unit digits (ISO 4217)' }),
    payments: z
      .array(z.object({ ...feeFields, method: PaymentMethodCode }).meta({ description: 'A pay-in fee' }))
      .meta({
        description:
          'Pay-in fee per payment method: deducted from paidAmount when the payment succeeds (never more than paidAmount)',
      }),
    payout: Fee.meta({
      description: 'The payout fee: charged on top of the payout amount, reserved with it, not returned on a return',
    }),
  }),
);
export type CurrencyRates = z.output<typeof CurrencyRates>;

export const TRANSACTION_KINDS = [
  'payment',
  'payout_reserve',
  'payout_settle',
  'payout_release',
  'refund',
  'adjustment',
] as const;
export const LEDGER_ACCOUNTS = ['available', 'reserved'] as const;

/** One posting on one of the merchant's accounts (the platform's own accounts are not shown). */
export const LedgerEntry = component(
  'LedgerEntry',
  z
    .object({
      entryId: z.string(),
      reference: z.string().meta({
        description:
          'Idempotency reference of the business fact: payment:<orderNo>:succeeded, payout:<orderNo>:reserve|settle|release, refund:<orderNo>, adjustment:<adjustmentId>',
      }),
      transactionKind: z.enum(TRANSACTION_KINDS),
      orderNo: z.string().meta({
        description: 'The order the posting belongs to; for a balance adjustment by the platform, its adjustmentId',
      }),
      reason: z
        .string()
        .optional()
        .meta({ description: "A balance adjustment's reason, as the platform's operators wrote it" }),
      account: z.enum(LEDGER_ACCOUNTS),
      currency: Currency,
      amount: z
        .string()
        .regex(/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/)
        .meta({
          description:
            'Signed, major units: positive credits the account, negative debits it (the one statement of the direction)',
        }),
      createdAt: unixMs('Posting time'),
    })
    .meta({
      description: "One posting on one of the merchant's accounts (the platform's own accounts are not shown).",
    }),
);
export type LedgerEntry = z.output<typeof LedgerEntry>;
