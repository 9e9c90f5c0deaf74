import { createRequire } from 'node:module';
import type SodiumNative from 'sodium-native';
import * as noble from './noble.js';

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

import {
  BOX_PUBLIC_KEY_BYTES,
  BOX_SECRET_KEY_BYTES,
  SEAL_BYTES,
  SIGN_BYTES,
  SIGN_PUBLIC_KEY_BYTES,
  SIGN_SECRET_KEY_BYTES,
  SIGN_SEED_BYTES,
} from './noble.js';

export {
  BOX_PUBLIC_KEY_BYTES,
  BOX_SECRET_KEY_BYTES,
  SEAL_BYTES,
  SIGN_BYTES,
  SIGN_PUBLIC_KEY_BYTES,
  SIGN_SECRET_KEY_BYTES,
  SIGN_SEED_BYTES,
};

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

/** A Buffer view of noble's bytes, without copying. */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const nobleBackend: SodiumBackend = {
  name: 'noble',
  signSeedKeyPair(seed) {
    const publicKey = asBuffer(noble.ed25519PublicKey(seed));
    return { publicKey, secretKey: Buffer.concat([Buffer.from(seed), publicKey]) };
  },
  signDetached: (message, secretKey) =>
    asBuffer(noble.signWithSeed(message, secretKey.subarray(0, noble.SIGN_SEED_BYTES))),
  verifyDetached: noble.verifyDetached,
  isValidEd25519Point: noble.isValidEd25519Point,
  isSmallOrderX25519: noble.isSmallOrderX25519,
  x25519Base: (secretKey) => asBuffer(noble.x25519Base(secretKey)),
  boxSeal(plaintext, publicKey) {
    const sealed = noble.boxSeal(plaintext, publicKey);
    return sealed && asBuffer(sealed);
  },
  boxSealOpen(ciphertext, publicKey, secretKey) {
    const opened = noble.boxSealOpen(ciphertext, publicKey, secretKey);
    return opened && asBuffer(opened);
  },
  randomBytes: (length) => asBuffer(noble.randomBytes(length)),
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
