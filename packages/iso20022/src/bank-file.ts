/**
 * The files a bank puts in the customer's download directory, read by their `Document` namespace:
 * `pain.002` status reports, `camt.054` notifications and `camt.053` statements.
 *
 * @module
 */
import { CAMT_053_NAMESPACE, type Camt053, readCamt053 } from './camt053.js';
import { CAMT_054_NAMESPACE, type Camt054, readCamt054 } from './camt054.js';
import { PAIN_002_NAMESPACES, type Pain002, readPain002 } from './pain002.js';
import { ReadError, parseDocument, readFailure } from './xml.js';

/** A file the bank sends: a status report, a notification or a statement. */
export type BankFile = Pain002 | Camt054 | Camt053;

/**
 * Reads a bank file, detected by its `Document`'s namespace: `pain.002.001.10` (also `.001.11` and
 * `.001.03`), `camt.054.001.08` or `camt.053.001.08`. Never throws: anything else (another namespace, malformed XML,
 * bytes that are not UTF-8, a DOCTYPE or entity declaration (refused: no XXE), a required member
 * missing or repeated, a bad amount, date or code) is `ok: false` with a one-line reason. Strict: a
 * file is read whole or refused whole, never in part. It does not validate against the XSD (see
 * `validateXml`).
 */
export function readBankFile(xml: string | Uint8Array): { ok: true; file: BankFile } | { ok: false; reason: string } {
  try {
    const { namespace, root } = parseDocument(xml);
    if (PAIN_002_NAMESPACES.includes(namespace)) return { ok: true, file: readPain002(root) };
    if (namespace === CAMT_054_NAMESPACE) return { ok: true, file: readCamt054(root) };
    if (namespace === CAMT_053_NAMESPACE) return { ok: true, file: readCamt053(root) };
    throw new ReadError(`namespace "${namespace}" is neither pain.002, camt.054.001.08 nor camt.053.001.08`);
  } catch (error) {
    return { ok: false, reason: readFailure(error) };
  }
}
