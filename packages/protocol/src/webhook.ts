import { JSON_CONTENT_TYPE, MAX_SIGNATURE_LIFETIME_SECONDS, WEBHOOK_COMPONENTS, WEBHOOK_LABEL } from './constants.js';
import { contentDigest, verifyContentDigest } from './digest.js';
import { type SigningKey, verify } from './keys.js';
import { ok, type Result } from './result.js';
import type { SignatureParams } from './signature-input.js';
import { signMessage } from './signature.js';
import {
  checkWebhook,
  type ReceivedWebhook,
  type WebhookVerificationFailure,
  type WebhookVerifierDeps,
  webhookTarget,
} from './webhook-core.js';

export {
  type ReceivedWebhook,
  type WebhookCheck,
  type WebhookVerificationFailure,
  type WebhookVerifierDeps,
  WEBHOOK_PROFILE,
  webhookTarget,
} from './webhook-core.js';

/** The platform webhook key used to sign a delivery. */
export interface WebhookSigner {
  readonly keyid: string;
  readonly key: SigningKey;
  /** Signing time, Unix seconds. */
  readonly created: number;
  /** Fresh UUID v4 for this attempt. */
  readonly nonce: string;
  /** Seconds until expiry; at most and by default 300. */
  readonly lifetime?: number;
}

/**
 * Signs one delivery attempt of a webhook. The body bytes are sent as given; every attempt
 * must be signed afresh (new created, expires and nonce).
 */
export function signWebhook(
  delivery: { url: string; body: Uint8Array; eventId: string },
  signer: WebhookSigner,
): { headers: Record<string, string>; signatureBase: string } {
  const lifetime = Math.min(signer.lifetime ?? MAX_SIGNATURE_LIFETIME_SECONDS, MAX_SIGNATURE_LIFETIME_SECONDS);
  const params: SignatureParams = {
    label: WEBHOOK_LABEL,
    components: WEBHOOK_COMPONENTS,
    created: signer.created,
    expires: signer.created + lifetime,
    nonce: signer.nonce,
    keyid: signer.keyid,
  };
  const headers: Record<string, string> = {
    'content-type': JSON_CONTENT_TYPE,
    'content-digest': contentDigest(delivery.body),
    'webhook-event-id': delivery.eventId,
  };
  const signed = signMessage({ method: 'POST', ...webhookTarget(delivery.url), headers }, params, signer.key);
  return { headers: { ...headers, ...signed.headers }, signatureBase: signed.signatureBase };
}

/** A webhook that passed every check: its raw body bytes, its eventId and keyid. */
export interface VerifiedWebhook {
  readonly body: Buffer;
  readonly eventId: string;
  readonly keyid: string;
  readonly params: SignatureParams;
}

/**
 * Verifies a webhook as the specification orders it: Content-Digest over the raw body;
 * Webhook-Event-Id equal to the body's eventId; the time window (refused when now > expires,
 * now < created - 300, or expires - created > 300) and nonce format; keyid selecting a known
 * key; the Ed25519 signature over the rebuilt base; then the optional nonce replay guard.
 */
export async function verifyWebhook(
  webhook: ReceivedWebhook,
  deps: WebhookVerifierDeps,
): Promise<Result<VerifiedWebhook, WebhookVerificationFailure>> {
  const checked = await checkWebhook(webhook, deps, { verifyContentDigest, verify });
  return checked.ok ? ok({ body: Buffer.from(webhook.body), ...checked.value }) : checked;
}
