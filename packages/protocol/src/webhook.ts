import {
  JSON_CONTENT_TYPE,
  MAX_CLOCK_SKEW_SECONDS,
  MAX_SIGNATURE_LIFETIME_SECONDS,
  WEBHOOK_COMPONENTS,
  WEBHOOK_LABEL,
} from './constants.js';
import { contentDigest, verifyContentDigest } from './digest.js';
import { collectHeaders, type RawHeaders, singleValued } from './headers.js';
import { type SigningKey, verify } from './keys.js';
import { err, ok, type Result } from './result.js';
import { buildSignatureBase, signMessage } from './signature-base.js';
import { parseSignature, readSignatureInput, type SignatureParams, type SignatureProfile } from './signature-input.js';

/** Signature-Input profile of webhooks: label `platform`, the fixed webhook list, keyid required. */
export const WEBHOOK_PROFILE: SignatureProfile = {
  label: WEBHOOK_LABEL,
  components: [WEBHOOK_COMPONENTS],
  keyid: true,
  form: 'canonical',
};

/** The request target of a webhook URL: the path and raw query an HTTP client sends for it. */
export function webhookTarget(url: string): { path: string; query: string | undefined } {
  const parsed = new URL(url);
  return { path: parsed.pathname, query: parsed.search === '' ? undefined : parsed.search.slice(1) };
}

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

/** A webhook as the merchant received it: raw path and query, headers, raw body bytes. */
export interface ReceivedWebhook {
  /** Request method; anything but POST fails. */
  readonly method?: string;
  readonly path: string;
  /** Raw query without `?`; `undefined` when there is none. */
  readonly query: string | undefined;
  readonly headers: RawHeaders;
  readonly body: Uint8Array;
}

/** The checks of webhook verification, in order. */
export type WebhookCheck = 'shape' | 'digest' | 'event-id' | 'signature-input' | 'nonce' | 'keyid' | 'signature';

/** Why a webhook was refused, naming the check that failed. */
export interface WebhookVerificationFailure {
  readonly check: WebhookCheck;
  readonly reason: string;
  readonly signatureBase?: string;
}

/** Keys and policy for webhook verification. */
export interface WebhookVerifierDeps {
  /** Current time, Unix seconds. */
  readonly now: number;
  /** Platform webhook public key by keyid; `undefined` for an unknown keyid. */
  readonly publicKeys: ReadonlyMap<string, Uint8Array> | ((keyid: string) => Uint8Array | undefined);
  /**
   * Optional replay guard: resolves `true` when the nonce is new. Called only after the
   * signature verified.
   */
  readonly consumeNonce?: (nonce: string, expires: number) => boolean | Promise<boolean>;
}

/** A webhook that passed every check: its raw body bytes, its eventId and keyid. */
export interface VerifiedWebhook {
  readonly body: Buffer;
  readonly eventId: string;
  readonly keyid: string;
  readonly params: SignatureParams;
}

const fail = (check: WebhookCheck, reason: string, signatureBase?: string) =>
  err<WebhookVerificationFailure>(signatureBase ? { check, reason, signatureBase } : { check, reason });

const WEBHOOK_HEADERS = ['content-type', 'content-digest', 'webhook-event-id', 'signature-input', 'signature'];

function bodyEventId(body: Uint8Array): string | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const eventId = (parsed as Record<string, unknown>).eventId;
    return typeof eventId === 'string' ? eventId : undefined;
  } catch {
    return undefined;
  }
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
  if (webhook.method !== undefined && webhook.method.toUpperCase() !== 'POST')
    return fail('shape', 'a webhook is a POST');
  const picked = singleValued(collectHeaders(webhook.headers), WEBHOOK_HEADERS);
  if ('duplicate' in picked) return fail('shape', `header ${picked.duplicate} is repeated`);
  const h = picked.values;
  for (const name of WEBHOOK_HEADERS) {
    if (h[name] === undefined) return fail('shape', `missing ${name}`);
  }
  const headers = {
    'content-type': h['content-type'] as string,
    'content-digest': h['content-digest'] as string,
    'webhook-event-id': h['webhook-event-id'] as string,
  };
  if (headers['content-type'] !== JSON_CONTENT_TYPE) return fail('shape', 'Content-Type is not application/json');

  if (!verifyContentDigest(headers['content-digest'], webhook.body)) {
    return fail('digest', 'Content-Digest does not match the body');
  }
  const eventId = bodyEventId(webhook.body);
  if (eventId === undefined || eventId !== headers['webhook-event-id']) {
    return fail('event-id', 'Webhook-Event-Id differs from the body eventId');
  }

  const parsed = readSignatureInput(h['signature-input'] as string, WEBHOOK_PROFILE);
  if (!parsed.ok) return fail('signature-input', parsed.error.reason);
  const { params, signatureParams } = parsed.value;
  if (deps.now > params.expires) return fail('signature-input', 'the signature has expired');
  if (deps.now < params.created - MAX_CLOCK_SKEW_SECONDS)
    return fail('signature-input', 'the signature was created in the future');

  const keyid = params.keyid as string;
  const publicKey = typeof deps.publicKeys === 'function' ? deps.publicKeys(keyid) : deps.publicKeys.get(keyid);
  if (!publicKey) return fail('keyid', `unknown keyid ${keyid}`);

  const base = buildSignatureBase(
    { method: 'POST', path: webhook.path, query: webhook.query, headers },
    params,
    signatureParams,
  );
  if (!base.ok) return fail('signature-input', `missing component ${base.error.component}`);
  const signature = parseSignature(h.signature as string, params.label);
  if (!signature.ok) return fail('signature', signature.error.reason, base.value);
  if (!verify(base.value, signature.value, publicKey))
    return fail('signature', 'the signature does not verify', base.value);
  if (deps.consumeNonce && !(await deps.consumeNonce(params.nonce, params.expires))) {
    return fail('nonce', 'the nonce was used before', base.value);
  }
  return ok({ body: Buffer.from(webhook.body), eventId, keyid, params });
}
