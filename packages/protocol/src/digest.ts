import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The RFC 9530 Content-Digest header value for the exact bytes given:
 * `sha-256=:<base64 of SHA-256>:`.
 */
export function contentDigest(body: Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/**
 * True when `header` is exactly the Content-Digest of `body`. Only the single-member
 * `sha-256` form of the specification is accepted; the comparison is constant-time.
 */
export function verifyContentDigest(header: string, body: Uint8Array): boolean {
  const expected = Buffer.from(contentDigest(body), 'utf8');
  // UTF-8, not latin1: latin1 keeps only the low byte of each character, so a header with
  // characters beyond U+00FF could compare equal to the ASCII digest.
  const received = Buffer.from(header, 'utf8');
  return received.length === expected.length && timingSafeEqual(received, expected);
}
