import { publicKeyFrom } from '@paygate/protocol/web';
import { PaygateConfigError } from './errors.js';

// The webhook keys part of the configuration, on the protocol's web entry (synchronous, no Node
// built-in) so that both the Node and the web WebhookVerifier load keys with it.

/** A platform webhook public key as onboarding prints it (`webhookKeys`). */
export interface WebhookKey {
  /** The key id carried in each webhook's Signature-Input. */
  readonly keyid: string;
  /** Base64 of the raw 32-byte Ed25519 public key, a PEM SubjectPublicKeyInfo, or the bytes. */
  readonly publicKey: string | Uint8Array;
}

/** Loads the platform webhook keys into a map by keyid; refuses duplicates and bad keys. */
export function loadWebhookKeys(keys: readonly WebhookKey[]): ReadonlyMap<string, Uint8Array> {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new PaygateConfigError('webhookKeys: at least one {keyid, publicKey} from onboarding is required');
  }
  const map = new Map<string, Uint8Array>();
  for (const [i, key] of keys.entries()) {
    if (typeof key?.keyid !== 'string' || key.keyid === '') {
      throw new PaygateConfigError(`webhookKeys[${i}].keyid: a non-empty key id is required`);
    }
    if (map.has(key.keyid)) throw new PaygateConfigError(`webhookKeys[${i}]: keyid ${key.keyid} is listed twice`);
    const publicKey = publicKeyFrom(key.publicKey);
    if (!publicKey.ok) throw new PaygateConfigError(`webhookKeys[${i}].publicKey: ${publicKey.error.reason}`);
    map.set(key.keyid, publicKey.value);
  }
  return map;
}
