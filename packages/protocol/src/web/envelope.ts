import { MAX_PLAINTEXT_BYTES } from '../constants.js';
import * as noble from '../noble.js';
import { type BodyPublicKey, type EnvelopeError, envelopeText } from '../request-parts.js';
import { err, ok, type Result } from '../result.js';
import { encodeBase64 } from './base64.js';
import type { BoxKeyPair } from './keys.js';

const invalid = (reason: string) => err<EnvelopeError>({ kind: 'invalid-envelope', reason });
const utf8 = new TextEncoder();

/**
 * Seals business JSON bytes to the platform body key (a libsodium sealed box, by noble) and
 * returns the envelope's wire bytes. Every call produces a different ciphertext. Plaintext over
 * 1 MiB is refused.
 */
export function sealEnvelope(plaintext: Uint8Array, key: BodyPublicKey): Result<Uint8Array, EnvelopeError> {
  if (plaintext.length > MAX_PLAINTEXT_BYTES) return invalid('plaintext exceeds 1 MiB');
  if (key.publicKey.length !== noble.BOX_PUBLIC_KEY_BYTES) return invalid('body public key is not 32 bytes');
  const ciphertext = noble.boxSeal(plaintext, key.publicKey);
  // libsodium refuses a small-order public key.
  if (!ciphertext) return invalid('the body public key is a small-order point');
  return ok(utf8.encode(envelopeText(key.keyId, encodeBase64(ciphertext))));
}

/** Opens a raw sealed box with an X25519 key pair; `undefined` when it does not open. */
export function openSealedBox(ciphertext: Uint8Array, key: BoxKeyPair): Uint8Array | undefined {
  return noble.boxSealOpen(ciphertext, key.publicKey, key.secretKey);
}
