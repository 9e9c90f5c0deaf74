/**
 * The EPC's "SEPA credit transfer" QR code (EPC069-12, *Quick Response Code: Guidelines to Enable
 * Data Capture for the Initiation of a SEPA Credit Transfer*): the text a payer's banking app
 * reads to fill in a transfer. Its payload is lines separated by a line feed, in this order:
 *
 * ```text
 * BCD                 service tag
 * 002                 version (001 needs the BIC; 002 makes it optional in the EEA)
 * 1                   character set: 1 = UTF-8
 * SCT                 identification: SEPA credit transfer
 * BIC                 the beneficiary's bank (may be empty in version 002)
 * name                the beneficiary, 1–70 characters
 * IBAN                the beneficiary's account
 * EUR12.30            the amount, EUR and 0.01–999999999.99 with at most two decimals (optional)
 * purpose             a 4-character purpose code (optional)
 * reference           structured remittance: a creditor reference, at most 35 (ISO 11649 RF) —
 * text                or unstructured remittance, at most 140: one of the two, never both
 * information         beneficiary to originator information, at most 70 (optional)
 * ```
 *
 * Empty optional elements keep their (empty) line, except at the end: the last populated element
 * is not followed by a line feed. The whole is at most 331 bytes (QR version 13 at error
 * correction level M, which the guidelines ask for).
 *
 * @module
 */
import { normalizeCreditorReference } from './creditor-reference.js';
import { eurToCents, isBic, MAX_SCT_CENTS, normalizeIban } from './text.js';

/** What an EPC QR code carries. */
export interface EpcQrTransfer {
  /** `002` (default) or `001` (which needs the BIC). */
  readonly version?: '001' | '002' | undefined;
  readonly beneficiary: { readonly name: string; readonly iban: string; readonly bic?: string | undefined };
  /** EUR as a decimal string with at most two decimals (`"12.30"`, `"1"`); omitted: the payer enters it. */
  readonly amount?: string | undefined;
  /** A 4-character ISO 20022 purpose code (`CHAR`, `GDDS`, …). */
  readonly purpose?: string | undefined;
  /** A structured creditor reference (written in its electronic form); or `text`, not both. */
  readonly reference?: string | undefined;
  /** Unstructured remittance information, at most 140 characters. */
  readonly text?: string | undefined;
  /** Beneficiary to originator information, at most 70 characters. */
  readonly information?: string | undefined;
}

/** A QR payload that cannot be made: `message` names the element and why. */
export class EpcQrError extends Error {
  override name = 'EpcQrError';
}

/** The most bytes the guidelines allow (QR version 13, level M). */
export const EPC_QR_MAX_BYTES = 331;

function line(value: string | undefined, element: string, max: number): string {
  if (value === undefined) return '';
  if (value.length > max || /[\r\n]/.test(value) || value.trim() !== value) {
    throw new EpcQrError(`${element} must be one line of at most ${max} characters, without surrounding space`);
  }
  return value;
}

/** The EPC069-12 payload for `transfer` (see the module's comment); throws {@link EpcQrError}. */
export function epcQrPayload(transfer: EpcQrTransfer): string {
  const version = transfer.version ?? '002';
  const { beneficiary } = transfer;
  const bic = beneficiary.bic?.replace(/\s+/g, '').toUpperCase();
  if (bic !== undefined && !isBic(bic)) throw new EpcQrError(`BIC "${beneficiary.bic}" is not a BIC`);
  if (version === '001' && bic === undefined) throw new EpcQrError('version 001 needs the BIC');
  const name = beneficiary.name.trim();
  if (name.length < 1) throw new EpcQrError('the beneficiary name is required');
  const iban = normalizeIban(beneficiary.iban);
  if (iban === undefined) throw new EpcQrError(`IBAN "${beneficiary.iban}" is not a valid IBAN`);
  let amount = '';
  if (transfer.amount !== undefined) {
    const cents = eurToCents(transfer.amount);
    if (cents === undefined || cents < 1 || cents > MAX_SCT_CENTS) {
      throw new EpcQrError(`amount "${transfer.amount}" is not a EUR amount from 0.01 to 999999999.99`);
    }
    amount = `EUR${transfer.amount}`;
  }
  if (transfer.purpose !== undefined && !/^[A-Z0-9]{1,4}$/.test(transfer.purpose)) {
    throw new EpcQrError(`purpose "${transfer.purpose}" is not a code of up to 4 characters`);
  }
  if (transfer.reference !== undefined && transfer.text !== undefined) {
    throw new EpcQrError('give a structured reference or a text, not both');
  }
  let reference = '';
  if (transfer.reference !== undefined) {
    // A reference that is not an RF one is allowed (35 characters); an RF one must be valid.
    const rf = /^\s*rf/i.test(transfer.reference) ? normalizeCreditorReference(transfer.reference) : undefined;
    if (/^\s*rf/i.test(transfer.reference) && rf === undefined) {
      throw new EpcQrError(`reference "${transfer.reference}" is not a valid ISO 11649 creditor reference`);
    }
    reference = line(rf ?? transfer.reference, 'reference', 35);
  }
  const lines = [
    'BCD',
    version,
    '1',
    'SCT',
    bic ?? '',
    line(name, 'the beneficiary name', 70),
    iban,
    amount,
    transfer.purpose ?? '',
    reference,
    line(transfer.text, 'text', 140),
    line(transfer.information, 'information', 70),
  ];
  while (lines.at(-1) === '') lines.pop();
  const payload = lines.join('\n');
  const bytes = Buffer.byteLength(payload, 'utf8');
  if (bytes > EPC_QR_MAX_BYTES) throw new EpcQrError(`the payload is ${bytes} bytes, more than ${EPC_QR_MAX_BYTES}`);
  return payload;
}
