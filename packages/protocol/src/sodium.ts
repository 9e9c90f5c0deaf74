import { createRequire } from 'node:module';
import { xsalsa20poly1305, hsalsa } from '@noble/ciphers/salsa.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';
import type SodiumNative from 'sodium-native';

/**
 * The few libsodium operations the protocol needs, from one of two implementations with the same
 * results: the native `sodium-native` addon when it loads (the platform's fast path, and
 * protected memory for secrets), otherwise pure JavaScript from the audited noble libraries
 * (`@noble/curves`, `@noble/ciphers`, `@noble/hashes`), for hosts that cannot build or load
 * native addons. `sodium-native` is an optional dependency of this package.
 */
export interface SodiumBackend {
  readonly name: 'sodium-native' | 'noble';
  /** Ed25519 key pair from a 32-byte seed; the secret key is libsodium's 64 bytes (seed ‖ public key). */
  signSeedKeyPair(seed: Uint8Array): { publicKey: Buffer; secretKey: Buffer };
  signDetached(message: Buffer, secretKey: Buffer): Buffer;
  /** libsodium's `crypto_sign_verify_detached`: canonical S, R not of small order, A a valid point. */
  verifyDetached(signature: Buffer, message: Buffer, publicKey: Buffer): boolean;
  /** libsodium's `crypto_core_ed25519_is_valid_point`: canonical, on the curve, in the main subgroup, not small order. */
  isValidEd25519Point(publicKey: Buffer): boolean;
  /** True when X25519 with this public key gives the all-zero secret (libsodium refuses it). */
  isSmallOrderX25519(publicKey: Buffer): boolean;
  x25519Base(secretKey: Buffer): Buffer;
  /** `crypto_box_seal`; `undefined` where libsodium refuses (a small-order public key). */
  boxSeal(plaintext: Buffer, publicKey: Buffer): Buffer | undefined;
  /** `crypto_box_seal_open`; `undefined` when the box does not open. */
  boxSealOpen(ciphertext: Buffer, publicKey: Buffer, secretKey: Buffer): Buffer | undefined;
  randomBytes(length: number): Buffer;
  /** A buffer for secrets: libsodium's guarded memory natively, an ordinary buffer otherwise. */
  secretBuffer(length: number): Buffer;
  memzero(buffer: Buffer): void;
}

export const SIGN_SEED_BYTES = 32;
export const SIGN_SECRET_KEY_BYTES = 64;
export const SIGN_PUBLIC_KEY_BYTES = 32;
export const SIGN_BYTES = 64;
export const BOX_PUBLIC_KEY_BYTES = 32;
export const BOX_SECRET_KEY_BYTES = 32;
/** The ephemeral public key and the Poly1305 tag a sealed box adds to its plaintext. */
export const SEAL_BYTES = 48;

function nativeBackend(sodium: typeof SodiumNative): SodiumBackend {
  const SMALL_ORDER_PROBE = Buffer.alloc(32, 1);
  return {
    name: 'sodium-native',
    signSeedKeyPair(seed) {
      const publicKey = Buffer.alloc(SIGN_PUBLIC_KEY_BYTES);
      const secretKey = sodium.sodium_malloc(SIGN_SECRET_KEY_BYTES) as Buffer;
      sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.from(seed));
      return { publicKey, secretKey };
    },
    signDetached(message, secretKey) {
      const signature = Buffer.alloc(SIGN_BYTES);
      sodium.crypto_sign_detached(signature, message, secretKey);
      return signature;
    },
    verifyDetached: (signature, message, publicKey) =>
      sodium.crypto_sign_verify_detached(signature, message, publicKey),
    isValidEd25519Point: (publicKey) => sodium.crypto_core_ed25519_is_valid_point(publicKey),
    isSmallOrderX25519(publicKey) {
      // The refusal depends on the point alone, so any fixed scalar finds it.
      try {
        sodium.crypto_scalarmult(Buffer.alloc(32), SMALL_ORDER_PROBE, publicKey);
        return false;
      } catch {
        return true;
      }
    },
    x25519Base(secretKey) {
      const publicKey = Buffer.alloc(BOX_PUBLIC_KEY_BYTES);
      sodium.crypto_scalarmult_base(publicKey, secretKey);
      return publicKey;
    },
    boxSeal(plaintext, publicKey) {
      const ciphertext = Buffer.alloc(plaintext.length + SEAL_BYTES);
      try {
        sodium.crypto_box_seal(ciphertext, plaintext, publicKey);
      } catch {
        return undefined;
      }
      return ciphertext;
    },
    boxSealOpen(ciphertext, publicKey, secretKey) {
      if (ciphertext.length < SEAL_BYTES) return undefined;
      const plaintext = Buffer.alloc(ciphertext.length - SEAL_BYTES);
      return sodium.crypto_box_seal_open(plaintext, ciphertext, publicKey, secretKey) ? plaintext : undefined;
    },
    randomBytes(length) {
      const bytes = Buffer.alloc(length);
      sodium.randombytes_buf(bytes);
      return bytes;
    },
    secretBuffer: (length) => sodium.sodium_malloc(length) as Buffer,
    memzero: (buffer) => sodium.sodium_memzero(buffer),
  };
}

// --- pure JavaScript --------------------------------------------------------------------------

const Point = ed25519.Point;

function strictPoint(bytes: Uint8Array): InstanceType<typeof Point> | undefined {
  try {
    return Point.fromBytes(bytes, false);
  } catch {
    return undefined;
  }
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
  return blake2b(Buffer.concat([ephemeralPublicKey, publicKey]), { dkLen: 24 });
}

function randomBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  globalThis.crypto.getRandomValues(bytes);
  return bytes;
}

const nobleBackend: SodiumBackend = {
  name: 'noble',
  signSeedKeyPair(seed) {
    const publicKey = Buffer.from(ed25519.getPublicKey(seed));
    return { publicKey, secretKey: Buffer.concat([Buffer.from(seed), publicKey]) };
  },
  signDetached: (message, secretKey) => Buffer.from(ed25519.sign(message, secretKey.subarray(0, SIGN_SEED_BYTES))),
  verifyDetached(signature, message, publicKey) {
    if (signature.length !== SIGN_BYTES || !nobleBackend.isValidEd25519Point(publicKey)) return false;
    // With A in the main subgroup, an R in it too makes noble's cofactored equation the same as
    // libsodium's cofactorless one; libsodium also refuses an R of small order.
    const r = strictPoint(signature.subarray(0, 32));
    if (!r || r.isSmallOrder() || !r.isTorsionFree()) return false;
    try {
      return ed25519.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  },
  isValidEd25519Point(publicKey) {
    if (publicKey.length !== SIGN_PUBLIC_KEY_BYTES) return false;
    const point = strictPoint(publicKey);
    return point !== undefined && !point.isSmallOrder() && point.isTorsionFree();
  },
  isSmallOrderX25519: (publicKey) => boxKey(new Uint8Array(32).fill(1), publicKey) === undefined,
  x25519Base: (secretKey) => Buffer.from(x25519.getPublicKey(secretKey)),
  boxSeal(plaintext, publicKey) {
    const ephemeralSecret = randomBytes(BOX_SECRET_KEY_BYTES);
    const ephemeralPublic = x25519.getPublicKey(ephemeralSecret);
    const key = boxKey(ephemeralSecret, publicKey);
    ephemeralSecret.fill(0);
    if (!key) return undefined;
    const sealed = xsalsa20poly1305(key, sealNonce(ephemeralPublic, publicKey)).encrypt(plaintext);
    key.fill(0);
    return Buffer.concat([ephemeralPublic, sealed]);
  },
  boxSealOpen(ciphertext, publicKey, secretKey) {
    if (ciphertext.length < SEAL_BYTES) return undefined;
    const ephemeralPublic = ciphertext.subarray(0, BOX_PUBLIC_KEY_BYTES);
    const key = boxKey(secretKey, ephemeralPublic);
    if (!key) return undefined;
    try {
      return Buffer.from(
        xsalsa20poly1305(key, sealNonce(ephemeralPublic, publicKey)).decrypt(ciphertext.subarray(BOX_PUBLIC_KEY_BYTES)),
      );
    } catch {
      return undefined;
    } finally {
      key.fill(0);
    }
  },
  randomBytes,
  secretBuffer: (length) => Buffer.alloc(length),
  memzero: (buffer) => void buffer.fill(0),
};

/** The pure-JavaScript implementation, whatever loads (tests compare the two). */
export const pureSodium: SodiumBackend = nobleBackend;

function loadNative(): SodiumBackend | undefined {
  try {
    return nativeBackend(createRequire(import.meta.url)('sodium-native') as typeof SodiumNative);
  } catch {
    return undefined;
  }
}

/** The implementation in use: `sodium-native` when it loads, the pure-JavaScript one otherwise. */
export const sodium: SodiumBackend = loadNative() ?? nobleBackend;

/** Which implementation the protocol runs on: `sodium-native`, or `noble` (pure JavaScript). */
export const cryptoImplementation: SodiumBackend['name'] = sodium.name;
