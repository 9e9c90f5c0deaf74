import { encodeBase64 } from './base64.js';

const utf8 = new TextEncoder();

/**
 * The RFC 9530 Content-Digest header value for the exact bytes given:
 * `sha-256=:<base64 of SHA-256>:`, hashed by WebCrypto.
 */
export async function contentDigest(body: Uint8Array): Promise<string> {
  const hash = await globalThis.crypto.subtle.digest('SHA-256', body as Uint8Array<ArrayBuffer>);
  return `sha-256=:${encodeBase64(new Uint8Array(hash))}:`;
}

/** True when the two byte strings are equal, in time that depends on their length only. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

/**
 * True when `header` is exactly the Content-Digest of `body`. Only the single-member
 * `sha-256` form of the specification is accepted; the comparison is constant-time.
 */
export async function verifyContentDigest(header: string, body: Uint8Array): Promise<boolean> {
  // UTF-8, as the Node entry compares: a header with characters beyond U+00FF never equals the
  // ASCII digest.
  return constantTimeEqual(utf8.encode(header), utf8.encode(await contentDigest(body)));
}
