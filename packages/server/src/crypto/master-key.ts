import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sodium from 'sodium-native';
import type { Config } from '../config.js';

/** One master key and its id (derived from the key, so it names the key without revealing it). */
export interface MasterKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * The master keys a process holds: `current` seals, and opens what is sealed under it;
 * `previous` (`PAYGATE_MASTER_KEY_PREVIOUS`, during a rotation) only opens. `source` says where
 * the current key came from, for the one line a start refused for a wrong key prints.
 */
export interface MasterKeyRing {
  readonly current: MasterKey;
  readonly previous: MasterKey | undefined;
  readonly source: string;
}

/** A sealed secret and the id of the master key it is sealed under. */
export interface Sealed {
  readonly sealed: Buffer;
  readonly sealedUnder: string;
}

/** Encrypts and decrypts platform secrets at rest (XChaCha20-Poly1305 under a master key). */
export interface SecretSealer {
  /** The id of the key new seals are made under. */
  readonly currentKeyId: string;
  /** The ids of the master keys this process holds, the current one first. */
  readonly heldKeyIds: readonly string[];
  /** True when this process holds the master key with this id. */
  holds(keyId: string): boolean;
  seal(plaintext: Buffer, associatedData: string): Sealed;
  /** Opens a secret sealed under the key `sealedUnder`; throws when not held or not authentic. */
  open(sealed: Buffer, associatedData: string, sealedUnder: string): Buffer;
  /** A key-check value for the current key: a fixed label sealed under it. */
  keyCheck(): Buffer;
  /** True when `check` is the key-check value of the key `keyId` and this process holds that key. */
  opensKeyCheck(keyId: string, check: Buffer): boolean;
}

/** The master key does not open what the database holds: the start stops with this one line. */
export class MasterKeyError extends Error {
  override readonly name = 'MasterKeyError';
}

const KEY_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES;
const NONCE_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
const TAG_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_ABYTES;
const KEY_CHECK_LABEL = 'paygate master key check v1';

/**
 * A master key's id: `mk_` and 16 hex digits of BLAKE2b keyed with the master key over a fixed
 * label. Stored next to every seal and key check, so a wrong key is named, not guessed at.
 */
function masterKeyId(key: Buffer): string {
  const out = Buffer.alloc(sodium.crypto_generichash_BYTES_MIN);
  sodium.crypto_generichash(out, Buffer.from('paygate master key id'), key);
  return `mk_${out.subarray(0, 8).toString('hex')}`;
}

/** Decodes a base64 master key into guarded memory; `name` says which setting it came from. */
function decodeMasterKey(encoded: string, name: string): MasterKey {
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== KEY_BYTES) throw new MasterKeyError(`${name} must be 32 bytes of base64`);
  const secure = sodium.sodium_malloc(KEY_BYTES) as Buffer;
  key.copy(secure);
  sodium.sodium_memzero(key);
  return { id: masterKeyId(secure), key: secure };
}

/** A master key already in memory (tests pass one in); the buffer is used, not copied. */
export function masterKeyFrom(key: Buffer): MasterKey {
  if (key.length !== KEY_BYTES) throw new MasterKeyError('the master key must be 32 bytes');
  return { id: masterKeyId(key), key };
}

/** A fresh random master key, base64: what `paygate master-key generate` prints. */
export function generateMasterKey(): string {
  const fresh = Buffer.alloc(KEY_BYTES);
  sodium.randombytes_buf(fresh);
  return fresh.toString('base64');
}

/**
 * The master keys: `PAYGATE_MASTER_KEY`, or in the sandbox a key generated once into
 * `<dataDir>/master.key` (mode 0600), and `PAYGATE_MASTER_KEY_PREVIOUS` when set. Production
 * refuses to start without the variable.
 */
export function loadMasterKeys(config: Config, current?: Buffer): MasterKeyRing {
  let source = 'PAYGATE_MASTER_KEY';
  let loaded: MasterKey;
  if (current) {
    loaded = masterKeyFrom(current);
  } else if (config.masterKey !== undefined) {
    loaded = decodeMasterKey(config.masterKey, 'PAYGATE_MASTER_KEY');
  } else {
    if (config.environment !== 'sandbox') throw new MasterKeyError('PAYGATE_MASTER_KEY is required in production');
    const file = join(config.dataDir, 'master.key');
    source = `${file}, the sandbox's generated key`;
    if (!existsSync(file)) {
      mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
      writeFileSync(file, `${generateMasterKey()}\n`, { mode: 0o600, flag: 'wx' });
      source = `${file}, generated just now because that data directory had none`;
    }
    loaded = decodeMasterKey(readFileSync(file, 'utf8').trim(), file);
  }
  const previous =
    config.masterKeyPrevious === undefined
      ? undefined
      : decodeMasterKey(config.masterKeyPrevious, 'PAYGATE_MASTER_KEY_PREVIOUS');
  return { current: loaded, previous: previous?.id === loaded.id ? undefined : previous, source };
}

function sealUnder(key: Buffer, plaintext: Buffer, associatedData: string): Buffer {
  const nonce = Buffer.alloc(NONCE_BYTES);
  sodium.randombytes_buf(nonce);
  const ciphertext = Buffer.alloc(plaintext.length + TAG_BYTES);
  sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
    ciphertext,
    plaintext,
    Buffer.from(associatedData),
    null,
    nonce,
    key,
  );
  return Buffer.concat([nonce, ciphertext]);
}

function openUnder(key: Buffer, sealed: Buffer, associatedData: string): Buffer {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('the sealed secret is too short');
  const plaintext = sodium.sodium_malloc(sealed.length - NONCE_BYTES - TAG_BYTES) as Buffer;
  sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
    plaintext,
    null,
    sealed.subarray(NONCE_BYTES),
    Buffer.from(associatedData),
    sealed.subarray(0, NONCE_BYTES),
    key,
  );
  return plaintext;
}

/** The key check is bound to its key id, so one key's check cannot stand in for another's. */
const keyCheckData = (keyId: string) => `master-key-check:${keyId}`;

/** A sealer over `ring`; a seal is nonce ‖ ciphertext ‖ tag, with the key id kept beside it. */
export function secretSealer(ring: Pick<MasterKeyRing, 'current' | 'previous'>): SecretSealer {
  const keys = new Map([ring.current, ...(ring.previous ? [ring.previous] : [])].map((k) => [k.id, k.key]));
  const keyFor = (keyId: string): Buffer => {
    const key = keys.get(keyId);
    if (!key) throw new MasterKeyError(`sealed under master key ${keyId}, which this process does not hold`);
    return key;
  };
  return {
    currentKeyId: ring.current.id,
    heldKeyIds: [...keys.keys()],
    holds: (keyId) => keys.has(keyId),
    seal: (plaintext, associatedData) => ({
      sealed: sealUnder(ring.current.key, plaintext, associatedData),
      sealedUnder: ring.current.id,
    }),
    open: (sealed, associatedData, sealedUnder) => openUnder(keyFor(sealedUnder), sealed, associatedData),
    keyCheck: () => sealUnder(ring.current.key, Buffer.from(KEY_CHECK_LABEL), keyCheckData(ring.current.id)),
    opensKeyCheck(keyId, check) {
      const key = keys.get(keyId);
      if (!key) return false;
      try {
        return openUnder(key, check, keyCheckData(keyId)).equals(Buffer.from(KEY_CHECK_LABEL));
      } catch {
        return false;
      }
    },
  };
}
