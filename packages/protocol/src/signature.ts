import { type SigningKey, sign } from './keys.js';
import { ok, type Result } from './result.js';
import { type MessageParts, prepareSignature } from './signature-base.js';
import {
  parseSignatureBytes,
  type SignatureHeaderError,
  type SignatureParams,
  serializeSignature,
} from './signature-input.js';

// The Node entry's signing and Signature reading, over Buffers and the synchronous libsodium (or
// noble) backend; the web entry has its own asynchronous pair over WebCrypto (web/keys.ts).

/**
 * Signs a message: its signature base, and the Signature-Input and Signature headers to send with
 * it. The parameters are serialized once, the base's `@signature-params` line and the
 * Signature-Input member being the same text. Throws when a covered component is missing (a
 * signer's own fault, never the peer's).
 */
export function signMessage(
  parts: MessageParts,
  params: SignatureParams,
  key: SigningKey,
): { headers: { 'signature-input': string; signature: string }; signatureBase: string } {
  const { signatureBase, signatureInput } = prepareSignature(parts, params);
  return {
    headers: {
      'signature-input': signatureInput,
      signature: serializeSignature(params.label, sign(signatureBase, key)),
    },
    signatureBase,
  };
}

/** Parses a Signature header: exactly one member, with the expected label, holding a 64-byte sequence. */
export function parseSignature(header: string, label: string): Result<Buffer, SignatureHeaderError> {
  const parsed = parseSignatureBytes(header, label);
  return parsed.ok ? ok(Buffer.from(parsed.value.buffer, parsed.value.byteOffset, parsed.value.byteLength)) : parsed;
}
