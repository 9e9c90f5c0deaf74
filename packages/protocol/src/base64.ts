const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes standard base64 (RFC 4648 section 4) only in its canonical form: padded, no
 * whitespace, no base64url alphabet, and zero trailing bits. Anything else is `undefined`.
 */
export function decodeCanonicalBase64(text: string): Buffer | undefined {
  if (!STANDARD_BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // Node's decoder ignores non-zero trailing bits; re-encoding exposes them.
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Encodes bytes as standard, padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
