import { JSON_CONTENT_TYPE, MAX_CLOCK_SKEW_SECONDS, WEBHOOK_COMPONENTS, WEBHOOK_LABEL } from './constants.js';
import { collectHeaders, type RawHeaders, singleValued } from './headers.js';
import { err, ok, type Result } from './result.js';
import { buildSignatureBase } from './signature-base.js';
import {
  parseSignatureBytes,
  readSignatureInput,
  type SignatureParams,
  type SignatureProfile,
} from './signature-input.js';

// Webhook verification as one pipeline for the Node entry (webhook.ts: libsodium or noble,
// synchronous) and the web entry (web/webhook.ts: WebCrypto), which pass in their digest and
// signature checks. Pure: no Node built-in, no Buffer.

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

/** The cryptography a webhook verifier runs on. */
export interface WebhookCrypto {
  /** True when the header is exactly the Content-Digest of the body (constant-time). */
  verifyContentDigest(header: string, body: Uint8Array): boolean | Promise<boolean>;
  /** True when the signature verifies as strictly as libsodium's `crypto_sign_verify_detached`. */
  verify(signatureBase: string, signature: Uint8Array, publicKey: Uint8Array): boolean | Promise<boolean>;
}

/** What the pipeline found: the webhook's eventId and keyid, and its signature parameters. */
export interface WebhookChecked {
  readonly eventId: string;
  readonly keyid: string;
  readonly params: SignatureParams;
}

const fail = (check: WebhookCheck, reason: string, signatureBase?: string) =>
  err<WebhookVerificationFailure>(signatureBase ? { check, reason, signatureBase } : { check, reason });

const WEBHOOK_HEADERS = ['content-type', 'content-digest', 'webhook-event-id', 'signature-input', 'signature'];

// Like Buffer's toString: invalid sequences become U+FFFD and a byte order mark stays (and fails
// JSON.parse).
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

function bodyEventId(body: Uint8Array): string | undefined {
  try {
    const parsed: unknown = JSON.parse(utf8.decode(body));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const eventId = (parsed as Record<string, unknown>).eventId;
    return typeof eventId === 'string' ? eventId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The webhook verification pipeline of both entries, with their cryptography passed in. It
 * checks a webhook as the specification orders it: Content-Digest over the raw body;
 * Webhook-Event-Id equal to the body's eventId; the time window (refused when now > expires,
 * now < created - 300, or expires - created > 300) and nonce format; keyid selecting a known
 * key; the Ed25519 signature over the rebuilt base; then the optional nonce replay guard.
 */
export async function checkWebhook(
  webhook: ReceivedWebhook,
  deps: WebhookVerifierDeps,
  crypto: WebhookCrypto,
): Promise<Result<WebhookChecked, WebhookVerificationFailure>> {
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

  if (!(await crypto.verifyContentDigest(headers['content-digest'], webhook.body))) {
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
  const signature = parseSignatureBytes(h.signature as string, params.label);
  if (!signature.ok) return fail('signature', signature.error.reason, base.value);
  if (!(await crypto.verify(base.value, signature.value, publicKey)))
    return fail('signature', 'the signature does not verify', base.value);
  if (deps.consumeNonce && !(await deps.consumeNonce(params.nonce, params.expires))) {
    return fail('nonce', 'the nonce was used before', base.value);
  }
  return ok({ eventId, keyid, params });
}
