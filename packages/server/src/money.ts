/** Amounts are decimal strings in major units on the wire and integer minor units everywhere else. */

const AMOUNT = /^(0|[1-9][0-9]{0,14})(?:\.([0-9]+))?$/;

/**
 * Parses a positive decimal amount with at most `scale` fraction digits into minor units. No
 * sign, exponent, spaces or leading zeros; `undefined` when the text is not such an amount.
 */
export function parseAmount(text: string, scale: number): bigint | undefined {
  const match = AMOUNT.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  if (fraction.length > scale || (match[2] !== undefined && fraction.length === 0)) return undefined;
  const minor = BigInt(match[1] as string) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
  return minor > 0n ? minor : undefined;
}

/** Formats minor units as a decimal string with exactly `scale` fraction digits. */
export function formatAmount(minor: bigint, scale: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(scale + 1, '0');
  const whole = scale === 0 ? digits : digits.slice(0, -scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}
