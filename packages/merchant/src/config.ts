import { ACCESS_KEY, type BodyPublicKey, boxPublicKeyFrom, type SigningKey, signingKeyFrom } from '@paygate/protocol';
import { z } from 'zod';
import { PaygateConfigError } from './errors.js';

export { loadWebhookKeys, type WebhookKey } from './webhook-keys.js';

/** The platform body key as onboarding prints it (`bodyKey`): what POST bodies are sealed to. */
export interface BodyKeyConfig {
  readonly keyId: string;
  /** Base64 of the raw 32-byte X25519 public key, or the bytes. */
  readonly publicKey: string | Uint8Array;
}

/**
 * Loads the merchant's Ed25519 private key: PEM PKCS#8, standard base64 of the 32-byte seed or
 * the 64-byte key, or those bytes.
 */
export function loadSigningKey(privateKey: string | Uint8Array): SigningKey {
  if (typeof privateKey === 'string' && /-----BEGIN (RSA |EC )?PUBLIC KEY-----/.test(privateKey)) {
    throw new PaygateConfigError(
      'privateKey: this is a public key (a PEM "PUBLIC KEY" block); give the private key instead, ' +
        'the private.pem that `paygate-merchant keygen` wrote beside public.pem (the public key is what the platform holds)',
    );
  }
  const loaded = signingKeyFrom(privateKey);
  if (!loaded.ok) throw new PaygateConfigError(`privateKey: ${loaded.error.reason}`);
  return loaded.value;
}

/** Loads the platform body key (keyId and X25519 public key). */
export function loadBodyKey(bodyKey: BodyKeyConfig): BodyPublicKey {
  if (typeof bodyKey?.keyId !== 'string' || bodyKey.keyId === '') {
    throw new PaygateConfigError('bodyKey.keyId: the body key id onboarding printed (bk_…) is required');
  }
  const publicKey = boxPublicKeyFrom(bodyKey.publicKey);
  if (!publicKey.ok) throw new PaygateConfigError(`bodyKey.publicKey: ${publicKey.error.reason}`);
  return { keyId: bodyKey.keyId, publicKey: publicKey.value };
}

/** Checks an access key's form: `ak_test_…` (sandbox) or `ak_live_…` (production). */
export function checkAccessKey(accessKey: string): string {
  if (typeof accessKey !== 'string' || !ACCESS_KEY.test(accessKey)) {
    throw new PaygateConfigError('accessKey: expected ak_test_… (sandbox) or ak_live_… (production)');
  }
  return accessKey;
}

/** What onboarding prints (`paygate merchant create --json`, or the portal): everything but your private key. */
export interface Onboarding {
  /** `ak_test_…` or `ak_live_…`. */
  readonly accessKey: string;
  /** `sandbox` or `production`. */
  readonly environment?: string | undefined;
  /** The platform body key POST bodies are sealed to. */
  readonly bodyKey: { readonly keyId: string; readonly publicKey: string };
  /** The platform webhook keys, by keyid. */
  readonly webhookKeys: readonly { readonly keyid: string; readonly publicKey: string }[];
}

const onboardingSchema = z.object({
  accessKey: z.string().min(1),
  environment: z.string().optional(),
  bodyKey: z.object({ keyId: z.string().min(1), publicKey: z.string().min(1) }),
  webhookKeys: z.array(z.object({ keyid: z.string().min(1), publicKey: z.string().min(1) })).min(1),
});

/**
 * Validates the onboarding JSON (as `paygate merchant create --json` prints it), so that it can
 * configure a {@link PaygateClient} (with your private key) and a {@link WebhookVerifier}.
 *
 * @throws {@link PaygateConfigError} naming each member that is missing or malformed.
 */
export function parseOnboarding(json: unknown): Onboarding {
  const parsed = onboardingSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'onboarding'}: ${issue.message}`);
    throw new PaygateConfigError(
      `not the onboarding JSON that \`paygate merchant create --json\` prints: ${problems.join('; ')}`,
    );
  }
  return parsed.data;
}
