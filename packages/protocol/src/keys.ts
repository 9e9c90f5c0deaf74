import { createPrivateKey, createPublicKey } from 'node:crypto';
import { decodeCanonicalBase64 } from './base64.js';
import type { KeyError } from './request-parts.js';
import { err, ok, type Result } from './result.js';
import {
  BOX_PUBLIC_KEY_BYTES,
  BOX_SECRET_KEY_BYTES,
  SIGN_BYTES,
  SIGN_PUBLIC_KEY_BYTES,
  SIGN_SECRET_KEY_BYTES,
  SIGN_SEED_BYTES,
  sodium,
} from './sodium.js';

/** An Ed25519 key pair held as libsodium's 64-byte secret key (seed followed by public key). */
export interface SigningKey {
  readonly secretKey: Buffer;
  readonly publicKey: Buffer;
}

/** An X25519 key pair for sealed boxes. */
export interface BoxKeyPair {
  readonly secretKey: Buffer;
  readonly publicKey: Buffer;
}

export type { KeyError } from './request-parts.js';

const invalid = (reason: string) => err<KeyError>({ kind: 'invalid-key', reason });

function fromSeed(seed: Uint8Array): SigningKey {
  return sodium.signSeedKeyPair(seed);
}

function fromBytes(bytes: Uint8Array): Result<SigningKey, KeyError> {
  if (bytes.length === SIGN_SEED_BYTES) return ok(fromSeed(bytes));
  if (bytes.length === SIGN_SECRET_KEY_BYTES) {
    const key = fromSeed(bytes.subarray(0, SIGN_SEED_BYTES));
    // A 64-byte key whose public half does not belong to its seed would sign with one key
    // and advertise another.
    if (!key.publicKey.equals(Buffer.from(bytes.subarray(SIGN_SEED_BYTES)))) {
      return invalid('the public half of the 64-byte key does not match its seed');
    }
    return ok(key);
  }
  return invalid(`an Ed25519 private key is 32 or 64 bytes, not ${bytes.length}`);
}

function isPem(text: string): boolean {
  return text.trimStart().startsWith('-----BEGIN ');
}

// node:crypto derives a public key from a private key, a certificate or PKCS#1 as readily as from
// an SPKI block; a public-key field must not quietly accept a pasted private key.
const SPKI_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n/;

/**
 * Loads an Ed25519 signing key from a 32-byte seed, a 64-byte libsodium key (bytes or
 * standard base64), or a PEM PKCS#8 private key.
 */
export function signingKeyFrom(input: string | Uint8Array): Result<SigningKey, KeyError> {
  if (typeof input !== 'string') return fromBytes(input);
  if (isPem(input)) {
    try {
      const key = createPrivateKey({ key: input.trim(), format: 'pem' });
      if (key.asymmetricKeyType !== 'ed25519') return invalid('the PEM key is not an Ed25519 key');
      const d = key.export({ format: 'jwk' }).d;
      if (d === undefined) return invalid('the PEM key has no private part');
      return ok(fromSeed(Buffer.from(d, 'base64url')));
    } catch {
      return invalid('the PEM private key could not be parsed');
    }
  }
  const bytes = decodeCanonicalBase64(input.trim());
  return bytes ? fromBytes(bytes) : invalid('the key is neither PEM nor canonical base64');
}

function checkPublicKey(bytes: Uint8Array): Result<Buffer, KeyError> {
  if (bytes.length !== SIGN_PUBLIC_KEY_BYTES) {
    return invalid(`an Ed25519 public key is 32 bytes, not ${bytes.length}`);
  }
  const key = Buffer.from(bytes);
  if (!sodium.isValidEd25519Point(key)) {
    return invalid('the public key is not a valid Ed25519 point');
  }
  return ok(key);
}

/**
 * Loads an Ed25519 public key from its raw 32 bytes (bytes or standard base64) or a PEM
 * SubjectPublicKeyInfo (`PUBLIC KEY` block only: a pasted private key is refused, not
 * reduced to its public half). Small-order and non-canonical points are refused.
 */
export function publicKeyFrom(input: string | Uint8Array): Result<Buffer, KeyError> {
  if (typeof input !== 'string') return checkPublicKey(input);
  if (isPem(input)) {
    const pem = input.trim();
    if (!SPKI_PEM.test(pem)) return invalid('the PEM is not a PUBLIC KEY (SubjectPublicKeyInfo) block');
    try {
      const key = createPublicKey({ key: pem, format: 'pem' });
      if (key.asymmetricKeyType !== 'ed25519') return invalid('the PEM key is not an Ed25519 key');
      const x = key.export({ format: 'jwk' }).x;
      if (x === undefined) return invalid('the PEM key has no public part');
      return checkPublicKey(Buffer.from(x, 'base64url'));
    } catch {
      return invalid('the PEM public key could not be parsed');
    }
  }
  const bytes = decodeCanonicalBase64(input.trim());
  return bytes ? checkPublicKey(bytes) : invalid('the key is neither PEM nor canonical base64');
}

// libsodium refuses to seal to a small-order X25519 point (the shared secret would not depend on
// the sender's key).
function isSmallOrderBoxKey(publicKey: Buffer): boolean {
  return sodium.isSmallOrderX25519(publicKey);
}

/** Loads an X25519 public key (32 raw bytes or their standard base64); small-order points are refused. */
export function boxPublicKeyFrom(input: string | Uint8Array): Result<Buffer, KeyError> {
  const bytes = typeof input === 'string' ? decodeCanonicalBase64(input.trim()) : Buffer.from(input);
  if (!bytes || bytes.length !== BOX_PUBLIC_KEY_BYTES) {
    return invalid('an X25519 public key is 32 bytes of canonical base64');
  }
  if (isSmallOrderBoxKey(bytes)) return invalid('the X25519 public key is a small-order point');
  return ok(bytes);
}

/** Loads an X25519 key pair from its 32-byte secret key; the public key is derived. */
export function boxKeyPairFrom(secretKey: Uint8Array): Result<BoxKeyPair, KeyError> {
  if (secretKey.length !== BOX_SECRET_KEY_BYTES) {
    return invalid(`an X25519 secret key is 32 bytes, not ${secretKey.length}`);
  }
  const secret = sodium.secretBuffer(BOX_SECRET_KEY_BYTES);
  Buffer.from(secretKey).copy(secret);
  return ok({ secretKey: secret, publicKey: sodium.x25519Base(secret) });
}

/** A fresh random Ed25519 key pair. */
export function generateSigningKey(): SigningKey {
  const seed = sodium.randomBytes(SIGN_SEED_BYTES);
  const key = fromSeed(seed);
  sodium.memzero(seed);
  return key;
}

/** A fresh random X25519 key pair. */
export function generateBoxKeyPair(): BoxKeyPair {
  const secretKey = sodium.secretBuffer(BOX_SECRET_KEY_BYTES);
  const random = sodium.randomBytes(BOX_SECRET_KEY_BYTES);
  random.copy(secretKey);
  sodium.memzero(random);
  return { secretKey, publicKey: sodium.x25519Base(secretKey) };
}

/** The 32-byte seed of a signing key (what PEM PKCS#8 and `seed_base64` hold). */
export function seedOf(key: SigningKey): Buffer {
  return Buffer.from(key.secretKey.subarray(0, SIGN_SEED_BYTES));
}

/** PEM encodings of an Ed25519 key pair (PKCS#8 private, SPKI public). */
export function signingKeyToPem(key: SigningKey): { privateKeyPem: string; publicKeyPem: string } {
  const jwk = {
    kty: 'OKP',
    crv: 'Ed25519',
    d: seedOf(key).toString('base64url'),
    x: key.publicKey.toString('base64url'),
  };
  const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
  return {
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: createPublicKey(privateKey).export({ format: 'pem', type: 'spki' }).toString(),
  };
}

/** Ed25519 signature of `message`. */
export function sign(message: Uint8Array | string, key: SigningKey): Buffer {
  return sodium.signDetached(toBuffer(message), key.secretKey);
}

/** True when `signature` is a valid Ed25519 signature of `message` under `publicKey`. */
export function verify(message: Uint8Array | string, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGN_BYTES) return false;
  if (publicKey.length !== SIGN_PUBLIC_KEY_BYTES) return false;
  return sodium.verifyDetached(asBuffer(signature), toBuffer(message), asBuffer(publicKey));
}

/** A Buffer view of the bytes, without copying. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function toBuffer(message: Uint8Array | string): Buffer {
  return typeof message === 'string' ? Buffer.from(message, 'utf8') : asBuffer(message);
}
