import * as noble from '../noble.js';
import type { KeyError } from '../request-parts.js';
import { err, ok, type Result } from '../result.js';
import { decodeBase64Url, decodeCanonicalBase64 } from './base64.js';

/** WebCrypto's `CryptoKey`, named through `crypto.subtle` so that no DOM or Node typing is assumed. */
export type WebCryptoKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

/**
 * An Ed25519 signing key for WebCrypto: the private key as a non-extractable `CryptoKey`, and its
 * raw 32-byte public key.
 */
export interface SigningKey {
  readonly privateKey: WebCryptoKey;
  readonly publicKey: Uint8Array;
}

/** An X25519 key pair for sealed boxes. */
export interface BoxKeyPair {
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

const ED25519 = { name: 'Ed25519' } as const;
const subtle = () => globalThis.crypto.subtle;
const invalid = (reason: string) => err<KeyError>({ kind: 'invalid-key', reason });
const utf8 = new TextEncoder();

/** The fixed PKCS#8 (RFC 8410) prefix of an Ed25519 private key: the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = new Uint8Array([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

async function fromSeed(seed: Uint8Array): Promise<SigningKey> {
  const pkcs8 = new Uint8Array(PKCS8_ED25519_PREFIX.length + seed.length);
  pkcs8.set(PKCS8_ED25519_PREFIX);
  pkcs8.set(seed, PKCS8_ED25519_PREFIX.length);
  const privateKey = await subtle().importKey('pkcs8', pkcs8, ED25519, false, ['sign']);
  pkcs8.fill(0);
  return { privateKey, publicKey: noble.ed25519PublicKey(seed) };
}

async function fromBytes(bytes: Uint8Array): Promise<Result<SigningKey, KeyError>> {
  if (bytes.length === noble.SIGN_SEED_BYTES) return ok(await fromSeed(bytes));
  if (bytes.length === noble.SIGN_SECRET_KEY_BYTES) {
    const key = await fromSeed(bytes.subarray(0, noble.SIGN_SEED_BYTES));
    // A 64-byte key whose public half does not belong to its seed would sign with one key
    // and advertise another.
    const half = bytes.subarray(noble.SIGN_SEED_BYTES);
    if (!key.publicKey.every((byte, i) => byte === half[i])) {
      return invalid('the public half of the 64-byte key does not match its seed');
    }
    return ok(key);
  }
  return invalid(`an Ed25519 private key is 32 or 64 bytes, not ${bytes.length}`);
}

function isPem(text: string): boolean {
  return text.trimStart().startsWith('-----BEGIN ');
}

/** The DER bytes of a PEM block with the given label; `undefined` for any other text. */
function pemBody(text: string, label: string): Uint8Array<ArrayBuffer> | undefined {
  const match = new RegExp(
    `^-----BEGIN ${label}-----\\r?\\n([A-Za-z0-9+/=\\r\\n]+?)\\r?\\n-----END ${label}-----$`,
  ).exec(text.trim());
  return match ? decodeCanonicalBase64((match[1] as string).replace(/\r?\n/g, '')) : undefined;
}

/**
 * Loads an Ed25519 signing key from a 32-byte seed, a 64-byte libsodium key (bytes or standard
 * base64), or a PEM PKCS#8 private key, as the Node entry's `signingKeyFrom` does. The private
 * key is imported into WebCrypto, not extractable.
 */
export async function signingKeyFrom(input: string | Uint8Array): Promise<Result<SigningKey, KeyError>> {
  if (typeof input !== 'string') return fromBytes(input);
  if (isPem(input)) {
    const der = pemBody(input, 'PRIVATE KEY');
    if (!der) return invalid('the PEM is not an unencrypted PRIVATE KEY (PKCS#8) block');
    // An RFC 8410 PKCS#8 of X25519, Ed448 or X448 differs from Ed25519's only in the OID's last byte.
    if (der.length >= 16 && PKCS8_ED25519_PREFIX.every((byte, i) => i === 11 || der[i] === byte) && der[11] !== 0x70) {
      return invalid('the PEM key is not an Ed25519 key');
    }
    let d: string | undefined;
    try {
      // WebCrypto parses the PKCS#8 and refuses a key of any other algorithm (X25519, RSA).
      const key = await subtle().importKey('pkcs8', der, ED25519, true, ['sign']);
      d = (await subtle().exportKey('jwk', key)).d;
    } catch {
      return invalid('the PEM private key could not be parsed');
    }
    const seed = d === undefined ? undefined : decodeBase64Url(d);
    if (seed?.length !== noble.SIGN_SEED_BYTES) return invalid('the PEM key has no private part');
    return ok(await fromSeed(seed));
  }
  const bytes = decodeCanonicalBase64(input.trim());
  return bytes ? fromBytes(bytes) : invalid('the key is neither PEM nor canonical base64');
}

function checkPublicKey(bytes: Uint8Array): Result<Uint8Array, KeyError> {
  if (bytes.length !== noble.SIGN_PUBLIC_KEY_BYTES) {
    return invalid(`an Ed25519 public key is 32 bytes, not ${bytes.length}`);
  }
  if (!noble.isValidEd25519Point(bytes)) return invalid('the public key is not a valid Ed25519 point');
  return ok(Uint8Array.from(bytes));
}

/**
 * The DER of an Ed25519 SubjectPublicKeyInfo (RFC 8410) up to the key: a SEQUENCE of the algorithm
 * identifier (OID 1.3.101.112, no parameters) and a BIT STRING of the 32 raw bytes. Every Ed25519
 * SPKI is these 12 bytes and the key, so it is read without WebCrypto, synchronously.
 */
const SPKI_ED25519_PREFIX = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];
/** Where the last byte of the OID sits: 0x70 for Ed25519, 0x6e for X25519, 0x71 for Ed448, 0x6f for X448. */
const SPKI_OID_LAST = 8;

/**
 * Loads an Ed25519 public key from its raw 32 bytes (bytes or standard base64) or a PEM
 * SubjectPublicKeyInfo (`PUBLIC KEY` block only: a pasted private key is refused). Small-order
 * and non-canonical points are refused, as libsodium refuses them. Synchronous, as in the Node
 * entry.
 */
export function publicKeyFrom(input: string | Uint8Array): Result<Uint8Array, KeyError> {
  if (typeof input !== 'string') return checkPublicKey(input);
  if (isPem(input)) {
    const der = pemBody(input, 'PUBLIC KEY');
    if (!der) return invalid('the PEM is not a PUBLIC KEY (SubjectPublicKeyInfo) block');
    const prefixed = (except: number) =>
      der.length === SPKI_ED25519_PREFIX.length + noble.SIGN_PUBLIC_KEY_BYTES &&
      SPKI_ED25519_PREFIX.every((byte, i) => i === except || der[i] === byte);
    if (prefixed(-1)) return checkPublicKey(der.subarray(SPKI_ED25519_PREFIX.length));
    if (prefixed(SPKI_OID_LAST)) return invalid('the PEM key is not an Ed25519 key');
    return invalid('the PEM public key could not be parsed');
  }
  const bytes = decodeCanonicalBase64(input.trim());
  return bytes ? checkPublicKey(bytes) : invalid('the key is neither PEM nor canonical base64');
}

/** Loads an X25519 public key (32 raw bytes or their standard base64); small-order points are refused. */
export function boxPublicKeyFrom(input: string | Uint8Array): Result<Uint8Array, KeyError> {
  const bytes = typeof input === 'string' ? decodeCanonicalBase64(input.trim()) : Uint8Array.from(input);
  if (!bytes || bytes.length !== noble.BOX_PUBLIC_KEY_BYTES) {
    return invalid('an X25519 public key is 32 bytes of canonical base64');
  }
  // libsodium refuses to seal to a small-order point (the shared secret would not depend on the
  // sender's key).
  if (noble.isSmallOrderX25519(bytes)) return invalid('the X25519 public key is a small-order point');
  return ok(bytes);
}

/** Loads an X25519 key pair from its 32-byte secret key; the public key is derived. */
export function boxKeyPairFrom(secretKey: Uint8Array): Result<BoxKeyPair, KeyError> {
  if (secretKey.length !== noble.BOX_SECRET_KEY_BYTES) {
    return invalid(`an X25519 secret key is 32 bytes, not ${secretKey.length}`);
  }
  const secret = Uint8Array.from(secretKey);
  return ok({ secretKey: secret, publicKey: noble.x25519Base(secret) });
}

const toBytes = (message: Uint8Array | string): Uint8Array<ArrayBuffer> =>
  (typeof message === 'string' ? utf8.encode(message) : message) as Uint8Array<ArrayBuffer>;

/** Ed25519 signature of `message` by WebCrypto (RFC 8032: deterministic, libsodium's bytes). */
export async function sign(message: Uint8Array | string, key: SigningKey): Promise<Uint8Array> {
  return new Uint8Array(await subtle().sign(ED25519, key.privateKey, toBytes(message)));
}

/**
 * True when `signature` is a valid Ed25519 signature of `message` under `publicKey`, as strictly
 * as libsodium's `crypto_sign_verify_detached`. RFC 8032, which WebCrypto follows, leaves
 * small-order and mixed-order keys and R to each implementation (OpenSSL, BoringSSL, Deno's and
 * Cloudflare's differ), so noble checks S, R and A first, and WebCrypto checks the equation.
 */
export async function verify(
  message: Uint8Array | string,
  signature: Uint8Array,
  publicKey: Uint8Array,
): Promise<boolean> {
  if (!noble.isStrictSignature(signature, publicKey)) return false;
  try {
    const key = await subtle().importKey('raw', publicKey as Uint8Array<ArrayBuffer>, ED25519, false, ['verify']);
    return await subtle().verify(ED25519, key, signature as Uint8Array<ArrayBuffer>, toBytes(message));
  } catch {
    return false;
  }
}
