import type { CurrencyRates, Fee as FeeView, PaymentMethodCode } from '@paygate/wire';
import type { Config } from '../../config.js';
import { type FieldError, validationFailed } from '../../errors.js';
import { formatAmount } from '../../money.js';
import { CURRENCIES } from '../../catalog.js';
import type { Fee } from '../../fees.js';

/** A fee as the API shows it and the rates of one currency: the wire schemas `Fee` and `CurrencyRates`. */
export type { CurrencyRates, FeeView };

const feeView = (fee: Fee, scale: number): FeeView => ({
  feePercent: formatAmount(BigInt(fee.percentBps), 2),
  feeFixed: formatAmount(fee.fixedMinor, scale),
});

/** The sandbox rate table (the configured fee schedule), filtered by currency and method. */
export class Fees {
  constructor(private readonly config: Pick<Config, 'fees'>) {}

  table(filters: { currency?: string | undefined; method?: string | undefined } = {}): CurrencyRates[] {
    const errors: FieldError[] = [];
    if (filters.currency !== undefined && !CURRENCIES.has(filters.currency)) {
      errors.push({ field: 'currency', message: 'not a supported currency' });
    }
    const methods = new Set([...CURRENCIES.values()].flatMap((info) => info.methods));
    if (filters.method !== undefined && !methods.has(filters.method)) {
      errors.push({ field: 'method', message: 'not a supported payment method' });
    }
    if (errors.length > 0) throw validationFailed(errors);
    const zero: Fee = { percentBps: 0, fixedMinor: 0n };
    return [...CURRENCIES.values()]
      .filter((info) => filters.currency === undefined || info.code === filters.currency)
      .filter((info) => filters.method === undefined || info.methods.includes(filters.method))
      .map((info) => ({
        currency: info.code,
        scale: info.scale,
        payments: info.methods
          .filter((method) => filters.method === undefined || method === filters.method)
          .map((method) => ({
            // The catalogue's methods are checked to be wire payment methods (catalog.ts).
            method: method as PaymentMethodCode,
            ...feeView(this.config.fees.payments[info.code]?.[method] ?? zero, info.scale),
          })),
        payout: feeView(this.config.fees.payouts[info.code] ?? zero, info.scale),
      }));
  }
}
