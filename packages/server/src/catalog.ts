/**
 * Currencies and payment methods the platform accepts, with their ISO 4217 minor digits. The
 * sandbox channel serves all of them.
 */
import type { Currency, PaymentMethodCode } from '@paygate/wire';

export interface CurrencyInfo {
  readonly code: Currency;
  /** Minor-unit digits (ISO 4217). */
  readonly scale: number;
  /** Payment methods (paymentMethod.code) accepted in this currency. */
  readonly methods: readonly string[];
}

export const CURRENCIES: ReadonlyMap<string, CurrencyInfo> = new Map(
  (
    [
      { code: 'BRL', scale: 2, methods: ['PIX', 'BOLETO'] },
      { code: 'MXN', scale: 2, methods: ['SPEI'] },
      { code: 'USD', scale: 2, methods: ['CARD'] },
      { code: 'EUR', scale: 2, methods: ['SEPA'] },
    ] satisfies (CurrencyInfo & { methods: PaymentMethodCode[] })[]
  ).map((c) => [c.code, c]),
);

/** The currency's info, or `undefined` when the platform does not accept it. */
export const currencyInfo = (code: string): CurrencyInfo | undefined => CURRENCIES.get(code);

/** Minor digits of a currency (2 for one the catalogue does not list). */
export const scaleOf = (currency: string): number => currencyInfo(currency)?.scale ?? 2;
