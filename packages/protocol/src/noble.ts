import { hsalsa, xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';

/**
 * libsodium's rules and sealed boxes in pure JavaScript on plain `Uint8Array`s, from the audited
 * noble libraries: the Node entry's fallback when `sodium-native` does not load (`sodium.ts`),
 * and the web entry's sealing and point checks. Nothing here imports a Node built-in or uses
 * `Buffer`, so the web entry can bundle it for edge runtimes and browsers.
 */

export const SIGN_SEED_BYTES = 32;
export const SIGN_SECRET_KEY_BYTES = 64;
export const SIGN_PUBLIC_KEY_BYTES = 32;
export const SIGN_BYTES = 64;
export const BOX_PUBLIC_KEY_BYTES = 32;
export const BOX_SECRET_KEY_BYTES = 32;
/** The ephemeral public key and the Poly1305 tag a sealed box adds to its plaintext. */
export const SEAL_BYTES = 48;

const Point = ed25519.Point;

function strictPoint(bytes: Uint8Array): InstanceType<typeof Point> | undefined {
  try {
    return Point.fromBytes(bytes, false);
  } catch {
    return undefined;
  }
}

/** libsodium's `crypto_core_ed25519_is_valid_point`: canonical, on the curve, in the main subgroup, not small order. */
export function isValidEd25519Point(publicKey: Uint8Array): boolean {
  if (publicKey.length !== SIGN_PUBLIC_KEY_BYTES) return false;
  const point = strictPoint(publicKey);
  return point !== undefined && !point.isSmallOrder() && point.isTorsionFree();
}

/**
 * The checks of libsodium's `crypto_sign_verify_detached` that come before its equation: S
 * canonical (below the group order), R canonical and not of small order, A a valid point. With A
 * and R both in the prime-order subgroup, every RFC 8032 verification equation (cofactored like
 * noble's, cofactorless like libsodium's, OpenSSL's or BoringSSL's behind WebCrypto) gives the
 * same answer, so a verifier that passes these checks first is exactly as strict as libsodium.
 */
export function isStrictSignature(signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGN_BYTES || !isValidEd25519Point(publicKey)) return false;
  let s = 0n;
  for (let i = SIGN_BYTES - 1; i >= 32; i--) s = (s << 8n) | BigInt(signature[i] as number);
  if (s >= Point.Fn.ORDER) return false;
  const r = strictPoint(signature.subarray(0, 32));
  return r !== undefined && !r.isSmallOrder() && r.isTorsionFree();
}

/** libsodium's `crypto_sign_verify_detached` in pure JavaScript. */
export function verifyDetached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (!isStrictSignature(signature, publicKey)) return false;
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** The Ed25519 public key of a 32-byte seed. */
export function ed25519PublicKey(seed: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(seed);
}

/** Ed25519 signature (RFC 8032, deterministic) with a 32-byte seed. */
export function signWithSeed(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed25519.sign(message, seed);
}

/** "expand 32-byte k", the Salsa20 constant, as little-endian words. */
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

function words(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

function bytesOf(input: Uint32Array): Uint8Array {
  const out = new Uint8Array(input.length * 4);
  const view = new DataView(out.buffer);
  input.forEach((word, i) => view.setUint32(i * 4, word, true));
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** `crypto_box_beforenm`: HSalsa20 of the X25519 shared secret with a zero nonce. */
function boxKey(secretKey: Uint8Array, publicKey: Uint8Array): Uint8Array | undefined {
  let shared: Uint8Array;
  try {
    shared = x25519.getSharedSecret(secretKey, publicKey);
  } catch {
    return undefined;
  }
  if (shared.every((byte) => byte === 0)) return undefined;
  const key = new Uint32Array(8);
  hsalsa(SIGMA, words(shared), new Uint32Array(4), key);
  shared.fill(0);
  return bytesOf(key);
}

/** The sealed box's nonce: BLAKE2b-192 of the ephemeral public key ‖ the recipient's public key. */
function sealNonce(ephemeralPublicKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  return blake2b(concat(ephemeralPublicKey, publicKey), { dkLen: 24 });
}

/** Random bytes from the platform's CSPRNG (`crypto.getRandomValues`, on every runtime). */
export function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  return bytes;
}

/** True when X25519 with this public key gives the all-zero secret (libsodium refuses it). */
export function isSmallOrderX25519(publicKey: Uint8Array): boolean {
  // The refusal depends on the point alone, so any fixed scalar finds it.
  return boxKey(new Uint8Array(32).fill(1), publicKey) === undefined;
}

/** The X25519 public key of a secret key. */
export function x25519Base(secretKey: Uint8Array): Uint8Array {
  return x25519.getPublicKey(secretKey);
}

/** `crypto_box_seal`; `undefined` where libsodium refuses (a small-order public key). */
export function boxSeal(plaintext: Uint8Array, publicKey: Uint8Array): Uint8Array | undefined {
  const ephemeralSecret = randomBytes(BOX_SECRET_KEY_BYTES);
  const ephemeralPublic = x25519.getPublicKey(ephemeralSecret);
  const key = boxKey(ephemeralSecret, publicKey);
  ephemeralSecret.fill(0);
  if (!key) return undefined;
  const sealed = xsalsa20poly1305(key, sealNonce(ephemeralPublic, publicKey)).encrypt(plaintext);
  key.fill(0);
  return concat(ephemeralPublic, sealed);
}

/** `crypto_box_seal_open`; `undefined` when the box does not open. */
export function boxSealOpen(
  ciphertext: Uint8Array,
  publicKey: Uint8Array,
  secretKey: Uint8Array,
): Uint8Array | undefined {
  if (ciphertext.length < SEAL_BYTES) return undefined;
  const ephemeralPublic = ciphertext.subarray(0, BOX_PUBLIC_KEY_BYTES);
  const key = boxKey(secretKey, ephemeralPublic);
  if (!key) return undefined;
  try {
    return xsalsa20poly1305(key, sealNonce(ephemeralPublic, publicKey)).decrypt(
      ciphertext.subarray(BOX_PUBLIC_KEY_BYTES),
    );
  } catch {
    return undefined;
  } finally {
    key.fill(0);
  }
}
