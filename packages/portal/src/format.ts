/** Display helpers. Amounts stay the server's decimal strings: never parsed into floats. */

/** The user's locale: the browser's language, which amounts and dates are written in. */
export const LOCALE = typeof navigator === 'undefined' ? 'en' : navigator.language;

const moneyFormats = new Map<string, Intl.NumberFormat>();

/**
 * A decimal amount string in the user's locale and the currency's format (`R$ 10,00` in pt-BR,
 * `R$10.00` in en-US). Intl formats a numeric string exactly, with the currency's minor digits:
 * the amount never goes through a float.
 */
export function formatMoney(amount: string, currency: string): string {
  let format = moneyFormats.get(currency);
  if (format === undefined) {
    format = new Intl.NumberFormat(LOCALE, { style: 'currency', currency });
    moneyFormats.set(currency, format);
  }
  return format.format(amount as `${number}`);
}

/** `<input type="datetime-local">` value (local time) → Unix ms, or undefined when empty/invalid. */
export function fromLocalInput(value: string | null): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** Unix ms → `<input type="datetime-local">` value in local time. */
export function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return '';
  const date = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'];
export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'REFUNDED'];
export const CURRENCIES = ['BRL', 'MXN', 'USD', 'EUR'];

/** Human words for the authentication steps the server reports (verification order of the spec). */
export const AUTH_STEPS: Readonly<Record<string, string>> = {
  shape: '1. Request shape (method, required and forbidden headers)',
  digest: '2. Content-Digest over the wire body',
  'signature-input': '3. Signature-Input (alg, nonce, time window, covered components)',
  signature: '4. Ed25519 signature over the signature base',
  nonce: '4. Nonce (already used: every request needs a new UUID v4)',
  envelope: '5. Sealed-box envelope (parse and decrypt)',
};
