import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sodium from 'sodium-native';
import type { Config } from '../config.js';

/** Encrypts and decrypts platform secrets at rest (XChaCha20-Poly1305 under the master key). */
export interface SecretSealer {
  seal(plaintext: Buffer, associatedData: string): Buffer;
  open(sealed: Buffer, associatedData: string): Buffer;
}

const KEY_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES;
const NONCE_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
const TAG_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_ABYTES;

/**
 * The master key: `PAYGATE_MASTER_KEY`, or in the sandbox a key generated once into
 * `<dataDir>/master.key` (mode 0600). Production refuses to start without the variable.
 */
export function loadMasterKey(config: Config): Buffer {
  let encoded = config.masterKey;
  if (encoded === undefined) {
    if (config.environment !== 'sandbox') throw new Error('PAYGATE_MASTER_KEY is required in production');
    const file = join(config.dataDir, 'master.key');
    if (!existsSync(file)) {
      mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
      const fresh = Buffer.alloc(KEY_BYTES);
      sodium.randombytes_buf(fresh);
      writeFileSync(file, `${fresh.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    }
    encoded = readFileSync(file, 'utf8').trim();
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== KEY_BYTES) throw new Error('the master key must be 32 bytes of base64');
  const secure = sodium.sodium_malloc(KEY_BYTES) as Buffer;
  key.copy(secure);
  sodium.sodium_memzero(key);
  return secure;
}

/** A sealer under `masterKey`; the output is nonce ‖ ciphertext ‖ tag. */
export function secretSealer(masterKey: Buffer): SecretSealer {
  return {
    seal(plaintext, associatedData) {
      const nonce = Buffer.alloc(NONCE_BYTES);
      sodium.randombytes_buf(nonce);
      const ciphertext = Buffer.alloc(plaintext.length + TAG_BYTES);
      sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        ciphertext,
        plaintext,
        Buffer.from(associatedData),
        null,
        nonce,
        masterKey,
      );
      return Buffer.concat([nonce, ciphertext]);
    },
    open(sealed, associatedData) {
      const plaintext = sodium.sodium_malloc(sealed.length - NONCE_BYTES - TAG_BYTES) as Buffer;
      sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
        plaintext,
        null,
        sealed.subarray(NONCE_BYTES),
        Buffer.from(associatedData),
        sealed.subarray(0, NONCE_BYTES),
        masterKey,
      );
      return plaintext;
    },
  };
}
