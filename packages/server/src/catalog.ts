/**
 * Currencies and payment methods the platform accepts, with their ISO 4217 minor digits: the one
 * list of which method is paid in which currency. The sandbox channel serves all of them; the fee
 * table (fees.ts) prices exactly these, which the compiler checks.
 */
import type { Currency, PaymentMethodCode } from '@paygate/wire';

export interface CurrencyInfo {
  readonly code: Currency;
  /** Minor-unit digits (ISO 4217). */
  readonly scale: number;
  /** Payment methods (paymentMethod.code) accepted in this currency. */
  readonly methods: readonly string[];
}

/** Every wire currency, with its scale and its methods, in the order the rate table lists them. */
const CATALOG = {
  BRL: { scale: 2, methods: ['PIX', 'BOLETO'] },
  MXN: { scale: 2, methods: ['SPEI'] },
  USD: { scale: 2, methods: ['CARD'] },
  EUR: { scale: 2, methods: ['SEPA'] },
} as const satisfies Record<Currency, { scale: number; methods: readonly PaymentMethodCode[] }>;

/** The methods the catalogue accepts in currency `C`. */
export type MethodOf<C extends Currency> = (typeof CATALOG)[C]['methods'][number];

/** Every wire payment method is accepted in some currency: this fails to compile otherwise. */
const everyMethodCatalogued: [PaymentMethodCode] extends [MethodOf<Currency>] ? true : never = true;
void everyMethodCatalogued;

export const CURRENCIES: ReadonlyMap<string, CurrencyInfo> = new Map(
  (Object.keys(CATALOG) as Currency[]).map((code) => [code, { code, ...CATALOG[code] }]),
);

/** The currency's info, or `undefined` when the platform does not accept it. */
export const currencyInfo = (code: string): CurrencyInfo | undefined => CURRENCIES.get(code);

/** Minor digits of a currency (2 for one the catalogue does not list). */
export const scaleOf = (currency: string): number => currencyInfo(currency)?.scale ?? 2;
