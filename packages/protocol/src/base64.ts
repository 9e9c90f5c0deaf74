/**
 * Decodes standard base64 (RFC 4648 section 4) only in its canonical form: padded, no
 * whitespace, no base64url alphabet, and zero trailing bits. Anything else is `undefined`.
 */
export function decodeCanonicalBase64(text: string): Buffer | undefined {
  // Node's decoder is lenient (it skips whitespace and unknown characters, takes base64url,
  // ignores trailing bits and missing padding), but its encoder only writes the canonical form:
  // a text is canonical exactly when re-encoding its bytes gives it back. This replaces a
  // validating regular expression that cost ten times the decoding on large envelopes.
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Encodes bytes as standard, padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
