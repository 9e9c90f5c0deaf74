// Standard base64 without Buffer: `btoa` and `atob` are on every runtime the web entry serves
// (browsers, Cloudflare Workers, Vercel Edge, Deno, Bun, Node).

const CHUNK = 0x8000;

/** Encodes bytes as standard, padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes standard base64 (RFC 4648 section 4) only in its canonical form: padded, no
 * whitespace, no base64url alphabet, and zero trailing bits. Anything else is `undefined`.
 */
export function decodeCanonicalBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  // `atob` skips ASCII whitespace and takes missing padding; the alphabet and length checks refuse
  // those, and re-encoding refuses non-zero trailing bits (as the Node entry's decoder does).
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return encodeBase64(bytes) === text ? bytes : undefined;
}

/** Decodes base64url without padding (a JWK member); `undefined` when it is not. */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return decodeCanonicalBase64(standard.padEnd(Math.ceil(standard.length / 4) * 4, '='));
}
