/**
 * XSD validation with `xmllint-wasm` (libxml2 compiled to WebAssembly, no native addon) against the
 * schemas shipped in `../xsd/` (see `xsd/README.md` for where each came from). Each schema is read
 * from disk once and kept.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { validateXML, memoryPages } from 'xmllint-wasm';

/** The messages this package validates. */
export type Schema = 'pain.001.001.09' | 'pain.002.001.10' | 'camt.054.001.08' | 'camt.053.001.08';

/** The shipped XSD of each schema, relative to this file (`src/` and `dist/` both sit beside `xsd/`). */
const XSD_FILES: Readonly<Record<Schema, string>> = {
  'pain.001.001.09': 'pain.001.001.09.epc-sct-2023.xsd',
  // No published pain.002.001.10 XSD was found to ship. The .001.11 XSD is used with its namespace
  // rewritten to .001.10: the elements this package writes and reads (GrpHdr, OrgnlGrpInfAndSts
  // with GrpSts and StsRsnInf, OrgnlPmtInfAndSts with TxInfAndSts, OrgnlEndToEndId, TxSts and
  // StsRsnInf) have the same names, order and types in both versions.
  'pain.002.001.10': 'pain.002.001.11.xsd',
  'camt.054.001.08': 'camt.054.001.08.xsd',
  'camt.053.001.08': 'camt.053.001.08.xsd',
};

/** At most this many of xmllint's messages are kept (a file of 10,000 bad names would make 10,000). */
const MAX_ERRORS = 100;

const schemas = new Map<Schema, Promise<string>>();

/** The XSD text for `schema`, read once. */
function schemaText(schema: Schema): Promise<string> {
  let text = schemas.get(schema);
  if (text === undefined) {
    text = readFile(new URL(`../xsd/${XSD_FILES[schema]}`, import.meta.url), 'utf8').then((xsd) =>
      schema === 'pain.002.001.10' ? xsd.replaceAll('pain.002.001.11', 'pain.002.001.10') : xsd,
    );
    // A failed read is not kept: the next call tries again.
    text.catch(() => schemas.delete(schema));
    schemas.set(schema, text);
  }
  return text;
}

/**
 * Validates `xml` against the shipped XSD of `schema` (which also checks the root's namespace).
 * Errors are xmllint's messages (the first 100), each prefixed with its line: `12: Element '…': […]`. A document
 * that is not well-formed is `valid: false` too, and so is one with a DOCTYPE (refused before
 * xmllint runs). Rejects only when xmllint itself cannot run.
 */
export async function validateXml(
  xml: string | Uint8Array,
  schema: Schema,
): Promise<{ valid: true } | { valid: false; errors: string[] }> {
  // libxml2 would try to load an external entity or DTD (from its in-memory file system only, in
  // WebAssembly); no bank file has one, so a DOCTYPE is refused before xmllint sees it.
  const text =
    typeof xml === 'string' ? xml : Buffer.from(xml.buffer, xml.byteOffset, xml.byteLength).toString('latin1');
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) return { valid: false, errors: ['a DOCTYPE or entity declaration is refused'] };
  const xsd = await schemaText(schema);
  const result = await validateXML({
    xml: [{ fileName: 'document.xml', contents: xml }],
    schema: [{ fileName: `${schema}.xsd`, contents: xsd }],
    // A 10,000-transaction file is ~6 MB; libxml2's tree of it needs far more than the 32 MiB
    // default. The memory grows as needed up to this bound.
    maxMemoryPages: memoryPages.GiB,
  });
  if (result.valid) return { valid: true };
  // xmllint follows a parser error with the offending line and a caret: those have no location.
  const located = result.errors.filter((error) => error.loc !== null);
  const errors = located
    .slice(0, MAX_ERRORS)
    .map((error) => (error.loc === null ? error.message : `${error.loc.lineNumber}: ${error.message}`));
  if (located.length > MAX_ERRORS) errors.push(`… and ${located.length - MAX_ERRORS} more`);
  return { valid: false, errors: errors.length > 0 ? errors : [result.rawOutput.trim() || 'invalid'] };
}
