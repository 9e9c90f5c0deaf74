/**
 * ISO 11649 structured creditor references ("RF references"): `RF`, two check digits and up to 21
 * letters and digits, valid when the whole passes ISO 7064's mod-97 check (as an IBAN does). A
 * payer's bank carries it unchanged to the creditor in `RmtInf/Strd/CdtrRefInf/Ref`; people write
 * it in groups of four (`RF18 5390 0754 7034`). Generation and the check are `node-iso11649`'s;
 * this module adds the electronic form, the printed form and finding a reference in free text.
 *
 * @module
 */
import { generate, validate } from 'node-iso11649';

/** The longest creditor reference: `RF`, 2 check digits, 21 characters. */
export const CREDITOR_REFERENCE_MAX = 25;

/**
 * The creditor reference of `body` (1–21 letters and digits, case and white space ignored), in
 * its electronic form: `RF`, the mod-97 check digits, the body upper-cased. Throws a RangeError
 * on a body that cannot make one.
 */
export function creditorReference(body: string): string {
  const normalized = body.replace(/\s+/g, '').toUpperCase();
  if (!/^[0-9A-Z]{1,21}$/.test(normalized)) {
    throw new RangeError(`"${body}" cannot make a creditor reference: 1 to 21 letters and digits`);
  }
  const reference = generate(normalized);
  if (!validate(reference)) throw new RangeError(`"${body}" made an invalid creditor reference ${reference}`);
  return reference;
}

/**
 * A creditor reference in its electronic form (white space dropped, upper-cased) when `text` is
 * one (the format and the mod-97 check); `undefined` otherwise.
 */
export function normalizeCreditorReference(text: string): string | undefined {
  const reference = text.replace(/\s+/g, '').toUpperCase();
  if (reference.length > CREDITOR_REFERENCE_MAX || !/^RF[0-9]{2}[0-9A-Z]{1,21}$/.test(reference)) return undefined;
  return validate(reference) ? reference : undefined;
}

/** Whether `text` is a valid creditor reference, as people write it (spaces and case ignored). */
export function isCreditorReference(text: string): boolean {
  return normalizeCreditorReference(text) !== undefined;
}

/** A creditor reference as people read it: groups of four (`RF18 5390 0754 7034`). */
export function formatCreditorReference(reference: string): string {
  return reference
    .replace(/\s+/g, '')
    .toUpperCase()
    .replace(/(.{4})(?!$)/g, '$1 ');
}

/**
 * Every valid creditor reference within free text (an `Ustrd` line: "Invoice RF18 5390 0754 7034,
 * thanks"), compared without spaces and case: for each `RF` followed by two digits, each run of
 * letters and digits after it that makes a valid reference, in the order found. A mod-97 check
 * lets about one in 97 wrong candidates through, so a caller matches what is found against the
 * references it issued.
 */
export function findCreditorReferences(text: string): string[] {
  const compact = text.replace(/\s+/g, '').toUpperCase();
  const found: string[] = [];
  for (let at = compact.indexOf('RF'); at !== -1; at = compact.indexOf('RF', at + 1)) {
    const run = /^RF[0-9]{2}[0-9A-Z]*/.exec(compact.slice(at, at + CREDITOR_REFERENCE_MAX))?.[0];
    if (run === undefined) continue;
    for (let end = 5; end <= run.length; end++) {
      const candidate = run.slice(0, end);
      if (validate(candidate) && !found.includes(candidate)) found.push(candidate);
    }
  }
  return found;
}
