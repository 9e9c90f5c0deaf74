/**
 * The values a SEPA Credit Transfer file carries, checked and normalized before they are written:
 * IBAN (ISO 13616) and BIC (ISO 9362) through `ibantools`, names and references in the EPC's
 * basic Latin character set, and EUR amounts as integer cents.
 *
 * @module
 */
import { isValidBIC, isValidIBAN } from 'ibantools';

/**
 * An IBAN per ISO 13616 in its electronic form: white space dropped and letters upper-cased, then
 * the country's length, its BBAN format and the mod-97 check held by `ibantools`. `undefined` when
 * any of them fails.
 */
export function normalizeIban(input: string): string | undefined {
  const iban = input.replace(/\s+/g, '').toUpperCase();
  return isValidIBAN(iban) ? iban : undefined;
}

/**
 * A BIC per ISO 9362 as the XSDs take it: 8 or 11 characters, upper case, a known country in
 * positions 5–6 (`ibantools`). A lower-case BIC is not one: see {@link normalizeBic}.
 */
export function isBic(input: string): boolean {
  return /^[A-Z0-9]{8}([A-Z0-9]{3})?$/.test(input) && isValidBIC(input);
}

/** A BIC with white space dropped and letters upper-cased; `undefined` unless {@link isBic} holds then. */
export function normalizeBic(input: string): string | undefined {
  const bic = input.replace(/\s+/g, '').toUpperCase();
  return isBic(bic) ? bic : undefined;
}

/** The EPC basic Latin character set (EPC217-08): what SEPA names and references may hold. */
const EPC_LATIN = /^[A-Za-z0-9/\-?:().,'+ ]*$/;
const EPC_LATIN_CHAR = /[A-Za-z0-9/\-?:().,'+ ]/;

/**
 * Letters that Unicode does not decompose into a base letter and marks, written the way the
 * EPC's conversion table (EPC217-08) and banks write them.
 */
const SPECIAL_LETTERS: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'SS',
  Ø: 'O',
  ø: 'o',
  Æ: 'AE',
  æ: 'ae',
  Œ: 'OE',
  œ: 'oe',
  Đ: 'D',
  đ: 'd',
  Ð: 'D',
  ð: 'd',
  Ł: 'L',
  ł: 'l',
  Þ: 'TH',
  þ: 'th',
  ı: 'i',
  Ħ: 'H',
  ħ: 'h',
  Ŧ: 'T',
  ŧ: 't',
  ŉ: "'n",
  // Typographic punctuation that has a plain counterpart in the set.
  '‘': "'",
  '’': "'",
  '‚': "'",
  '`': "'",
  '´': "'",
  '‐': '-',
  '‑': '-',
  '‒': '-',
  '–': '-',
  '—': '-',
  '&': '+',
};

/** The longest name the EPC XSD takes (`Max140Text` restricted to 70). */
export const EPC_NAME_MAX = 70;

/**
 * `text` in the EPC basic Latin set (`a-z A-Z 0-9 / - ? : ( ) . , ' +` and space) without a length
 * limit: compatibility forms folded (NFKD, so `ﬁ` → `fi`, full-width letters → ASCII), marks dropped
 * (`é` → `e`, `Å` → `A`), the letters Unicode does not decompose spelled out (`ß` → `ss`, `Ø` → `O`,
 * `Æ` → `AE`, `Œ` → `OE`, `Ł` → `L`, `Þ` → `TH`), typographic quotes and dashes made plain, `&` written
 * `+`, and **every other character replaced by a space**; runs of spaces collapsed, ends trimmed.
 */
export function foldToEpcLatin(text: string): string {
  let out = '';
  for (const char of text.normalize('NFKD')) {
    if (EPC_LATIN_CHAR.test(char)) out += char;
    else if (/\p{M}/u.test(char)) continue;
    else out += SPECIAL_LETTERS[char] ?? ' ';
  }
  return out.replace(/ {2,}/g, ' ').trim();
}

/**
 * A name for the file: {@link foldToEpcLatin} (marks dropped, other characters replaced by a space),
 * then at most {@link EPC_NAME_MAX} characters, trimmed again. Returns `''` when no character of
 * `name` survives (a name in another script entirely): such a name cannot go into a SEPA file and
 * is best refused when the payout is created.
 */
export function toEpcLatin(name: string): string {
  return foldToEpcLatin(name).slice(0, EPC_NAME_MAX).trim();
}

/** Whether every character of `text` is in the EPC basic Latin set (the empty string is). */
export function isEpcLatin(text: string): boolean {
  return EPC_LATIN.test(text);
}

/**
 * Whether `id` may be an EPC reference (`MsgId`, `PmtInfId`, `EndToEndId`): 1–35 characters of the
 * EPC basic Latin set, not starting or ending with `/` and without `//` (EPC217-08's rule for
 * references).
 */
export function isEpcReference(id: string): boolean {
  return (
    id.length >= 1 &&
    id.length <= 35 &&
    isEpcLatin(id) &&
    id.trim() === id &&
    !id.startsWith('/') &&
    !id.endsWith('/') &&
    !id.includes('//')
  );
}

/**
 * Whether `text` holds only characters XML 1.0 allows and no other control character (tab, line
 * feed and carriage return included: the identifiers and names written are one line).
 */
export function isPlainText(text: string): boolean {
  return !/[\u0000-\u001f\u007f-\u009f\ud800-\udfff\ufffe\uffff]/.test(text);
}

/** The largest SCT amount (AT-04 in the EPC rulebook; the EPC XSD's `maxInclusive`). */
export const MAX_SCT_CENTS = 99_999_999_999;

/**
 * A EUR amount as integer cents, from a decimal string with at most 2 decimals (`"12.3"`, `"12.30"`,
 * `"12"`); `undefined` for anything else (signs, exponents, spaces, three decimals, leading zeros
 * such as `"012"`). Integer cents are exact where adding floats is not (0.10 + 0.20).
 */
export function eurToCents(amount: string): number | undefined {
  const match = /^(0|[1-9][0-9]{0,14})(?:\.([0-9]{1,2}))?$/.exec(amount);
  if (match === null) return undefined;
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(cents) ? cents : undefined;
}

/** Integer cents written with two decimals: `1230` → `"12.30"`. */
export function centsToEur(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`${cents} is not a whole number of cents`);
  const text = String(cents).padStart(3, '0');
  return `${text.slice(0, -2)}.${text.slice(-2)}`;
}
