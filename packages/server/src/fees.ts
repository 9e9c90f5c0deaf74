import type { Currency } from '@paygate/wire';
import { z } from 'zod';
import { CURRENCIES, type MethodOf, scaleOf } from './catalog.js';

/** One fee: a percentage of the amount (basis points) plus a fixed part (minor units). */
export interface Fee {
  readonly percentBps: number;
  readonly fixedMinor: bigint;
}

/** Fees per currency and payment method (pay-ins) and per currency (payouts). */
export interface FeeSchedule {
  readonly payments: Readonly<Record<string, Readonly<Record<string, Fee>>>>;
  readonly payouts: Readonly<Record<string, Fee>>;
}

const fee = (percentBps: number, fixedMinor: bigint): Fee => ({ percentBps, fixedMinor });

/** A fee for each method of each currency of the catalogue, and none other. */
type PaymentFees = { readonly [C in Currency]: { readonly [M in MethodOf<C>]: Fee } };

/** The sandbox rate table; `PAYGATE_FEES` overrides any part of it. */
export const DEFAULT_FEES: FeeSchedule = {
  payments: {
    BRL: { PIX: fee(99, 0n), BOLETO: fee(0, 350n) },
    MXN: { SPEI: fee(120, 500n) },
    USD: { CARD: fee(290, 30n) },
    EUR: { SEPA: fee(80, 25n) },
  } satisfies PaymentFees,
  payouts: {
    BRL: fee(0, 200n),
    MXN: fee(0, 800n),
    USD: fee(0, 100n),
    EUR: fee(0, 50n),
  } satisfies Record<Currency, Fee>,
};

/** What a fee costs on `amountMinor`: the percentage rounded half up, plus the fixed part. */
export function feeOn(rate: Fee, amountMinor: bigint): bigint {
  return (amountMinor * BigInt(rate.percentBps) + 5_000n) / 10_000n + rate.fixedMinor;
}

/** The fee on a pay-in, never more than what was paid (the merchant is never debited for one). */
export function paymentFee(schedule: FeeSchedule, currency: string, method: string, paidMinor: bigint): bigint {
  const rate = schedule.payments[currency]?.[method] ?? fee(0, 0n);
  const charged = feeOn(rate, paidMinor);
  return charged < paidMinor ? charged : paidMinor;
}

/** The fee on a payout, charged on top of the amount. */
export function payoutFee(schedule: FeeSchedule, currency: string, amountMinor: bigint): bigint {
  return feeOn(schedule.payouts[currency] ?? fee(0, 0n), amountMinor);
}

/** A percentage as text: `1.5`, `0.99`, `0` (at most two decimals, at most 100). */
const PERCENT = /^(0|[1-9][0-9]{0,2})(?:\.([0-9]{1,2}))?$/;
/** A fixed fee as text in major units, zero allowed. */
const FIXED = /^(0|[1-9][0-9]{0,14})(?:\.([0-9]+))?$/;

function percentToBps(text: string): number | undefined {
  const match = PERCENT.exec(text);
  if (!match) return undefined;
  const bps = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return bps <= 10_000 ? bps : undefined;
}

function fixedToMinor(text: string, scale: number): bigint | undefined {
  const match = FIXED.exec(text);
  if (!match || (match[2]?.length ?? 0) > scale) return undefined;
  return BigInt(match[1] as string) * 10n ** BigInt(scale) + BigInt((match[2] ?? '').padEnd(scale, '0') || '0');
}

const feeText = z.object({ percent: z.union([z.string(), z.number()]), fixed: z.string() }).strict();
const overridesSchema = z
  .object({
    payments: z.record(z.string(), z.record(z.string(), feeText)).optional(),
    payouts: z.record(z.string(), feeText).optional(),
  })
  .strict();

/**
 * `PAYGATE_FEES`: JSON overriding parts of the default rate table, e.g.
 * `{"payments":{"BRL":{"PIX":{"percent":"1.5","fixed":"0.30"}}},"payouts":{"BRL":{"percent":"0","fixed":"2.00"}}}`.
 * Percent has at most two decimals; fixed is in major units with the currency's minor digits.
 * Only catalog currencies and methods are accepted, so a typo cannot silently charge nothing.
 */
export const feesJson = z.string().transform((text, ctx): FeeSchedule => {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not JSON' });
    return z.NEVER;
  }
  const applied = applyFeeOverrides(DEFAULT_FEES, raw);
  if (!applied.ok) {
    ctx.addIssue({ code: 'custom', message: applied.problems.join('; ') });
    return z.NEVER;
  }
  return applied.schedule;
});

/** Fee overrides as `PAYGATE_FEES` and a merchant's fee plan write them (see feesJson). */
export type FeeOverrides = z.infer<typeof overridesSchema>;

/**
 * `base` with the parts `raw` overrides (the shape of `PAYGATE_FEES`): the new schedule, or what
 * is wrong with `raw` (each problem naming its place: `payments.BRL.PIX.percent: …`).
 */
export function applyFeeOverrides(
  base: FeeSchedule,
  raw: unknown,
): { ok: true; schedule: FeeSchedule; overrides: FeeOverrides } | { ok: false; problems: string[] } {
  const parsed = overridesSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: [`not a fee table: ${parsed.error.issues[0]?.message}`] };
  const problems: string[] = [];
  const toFee = (where: string, currency: string, text: z.infer<typeof feeText>): Fee => {
    const scale = scaleOf(currency);
    const percentBps = percentToBps(String(text.percent));
    const fixedMinor = fixedToMinor(text.fixed, scale);
    if (percentBps === undefined) problems.push(`${where}.percent: 0 to 100 with at most two decimals`);
    if (fixedMinor === undefined) problems.push(`${where}.fixed: a decimal with at most ${scale} fraction digits`);
    return fee(percentBps ?? 0, fixedMinor ?? 0n);
  };
  const payments: Record<string, Record<string, Fee>> = {};
  for (const [currency, methods] of Object.entries(base.payments)) payments[currency] = { ...methods };
  for (const [currency, methods] of Object.entries(parsed.data.payments ?? {})) {
    const info = CURRENCIES.get(currency);
    if (!info) {
      problems.push(`payments.${currency}: not a catalog currency`);
      continue;
    }
    for (const [method, text] of Object.entries(methods)) {
      if (!info.methods.includes(method)) problems.push(`payments.${currency}.${method}: not a method of ${currency}`);
      else
        (payments[currency] as Record<string, Fee>)[method] = toFee(`payments.${currency}.${method}`, currency, text);
    }
  }
  const payouts: Record<string, Fee> = { ...base.payouts };
  for (const [currency, text] of Object.entries(parsed.data.payouts ?? {})) {
    if (!CURRENCIES.has(currency)) problems.push(`payouts.${currency}: not a catalog currency`);
    else payouts[currency] = toFee(`payouts.${currency}`, currency, text);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, schedule: { payments, payouts }, overrides: parsed.data };
}
