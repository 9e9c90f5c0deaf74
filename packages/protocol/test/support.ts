// Fixtures shared by the protocol tests: fixed keys, a fixed clock, valid signed requests and
// webhooks to break one rule at a time, and assertions on the typed failures.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  boxKeyPairFrom,
  buildSignatureBase,
  contentDigest,
  ENVELOPE_ALG,
  JSON_CONTENT_TYPE,
  type HeaderPair,
  type MerchantKeys,
  type ReceivedRequest,
  type ReceivedWebhook,
  type RequestVerificationFailure,
  type RequestVerifierDeps,
  type Result,
  type SignatureParams,
  type SigningKey,
  serializeSignature,
  serializeSignatureInput,
  sign,
  signingKeyFrom,
  signReadRequest,
  signWebhook,
  signWriteRequest,
  type VerificationStep,
  type WebhookCheck,
  type WebhookVerificationFailure,
  type WebhookVerifierDeps,
  webhookTarget,
} from '@paygate/protocol';

/** Unwraps a successful Result, failing the test with the error otherwise. */
export function unwrap<T>(result: Result<T, unknown>): T {
  if (!result.ok) assert.fail(`unexpected failure: ${JSON.stringify(result.error)}`);
  return result.value;
}

/** Asserts a parser refused its input with the given error kind and a reason matching `reason`. */
export function assertRefused(
  result: Result<unknown, { kind: string; reason: string }>,
  kind: string,
  reason: RegExp,
): void {
  assert.equal(result.ok, false, 'expected the input to be refused');
  if (result.ok) return;
  assert.equal(result.error.kind, kind);
  assert.match(result.error.reason, reason);
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Padded base64 with one of the unused trailing bits of its last character set: Node decodes it
 * to the same bytes, but it is not the canonical encoding.
 */
export function withTrailingBitSet(base64: string): string {
  const match = /([A-Za-z0-9+/])(=+)$/.exec(base64);
  assert.ok(match, 'needs padded base64, which has unused trailing bits');
  const last = match[1] as string;
  return `${base64.slice(0, match.index)}${BASE64_ALPHABET[BASE64_ALPHABET.indexOf(last) ^ 1]}${match[2]}`;
}

const seed = (label: string) => createHash('sha256').update(label).digest();

/** The verifier's clock in every test, Unix seconds (2026-01-01T00:00:00Z). */
export const NOW = 1_767_225_600;
export const ACCESS_KEY_ID = 'ak_test_Abc123Def456';
export const BODY_KEY_ID = 'body-2026-01';
export const WEBHOOK_KEY_ID = 'whk-2026-01';

export const merchantKey: SigningKey = unwrap(signingKeyFrom(seed('merchant')));
export const otherMerchantKey: SigningKey = unwrap(signingKeyFrom(seed('another merchant')));
export const webhookKey: SigningKey = unwrap(signingKeyFrom(seed('platform webhook')));
export const otherWebhookKey: SigningKey = unwrap(signingKeyFrom(seed('another webhook key')));
export const bodyKey = unwrap(boxKeyPairFrom(seed('platform body')));
export const otherBodyKey = unwrap(boxKeyPairFrom(seed('another body key')));

let nonceCounter = 0;
/** A fresh UUID v4, deterministic across runs. */
export function freshUuid(): string {
  const h = createHash('sha256').update(`uuid ${nonceCounter++}`).digest('hex');
  const variant = '89ab'[parseInt(h.charAt(16), 16) % 4] as string;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const PAYMENTS_PATH = '/api/v1/payments';
export const PLAINTEXT = Buffer.from(
  JSON.stringify({
    merchantOrderNo: 'M-20260101-0001',
    currency: 'BRL',
    amount: '125.50',
    paymentMethod: { code: 'PIX' },
    webhookUrl: 'https://merchant.example/webhook/payment',
  }),
  'utf8',
);

/** Signer fields of a request signed at `created` (default `NOW`) with a fresh nonce. */
export function requestSigner(overrides: { created?: number; key?: SigningKey; nonce?: string } = {}) {
  return {
    accessKey: ACCESS_KEY_ID,
    key: overrides.key ?? merchantKey,
    created: overrides.created ?? NOW,
    nonce: overrides.nonce ?? freshUuid(),
  };
}

/** A valid, signed and sealed write request as the platform receives it. */
export function signedWrite(
  options: { created?: number; key?: SigningKey; nonce?: string; plaintext?: Uint8Array } = {},
): ReceivedRequest {
  const signed = signWriteRequest(
    {
      path: PAYMENTS_PATH,
      plaintext: options.plaintext ?? PLAINTEXT,
      bodyKey: { keyId: BODY_KEY_ID, publicKey: bodyKey.publicKey },
      idempotencyKey: freshUuid(),
    },
    requestSigner(options),
  );
  return {
    method: 'POST',
    path: PAYMENTS_PATH,
    query: undefined,
    headers: Object.entries(signed.headers),
    body: signed.body,
  };
}

/** A valid, signed read request for `query` (raw, without `?`). */
export function signedRead(
  query: string | undefined = 'orderNo=P202601010001',
  options: { created?: number; key?: SigningKey; nonce?: string } = {},
): ReceivedRequest {
  const signed = signReadRequest({ path: PAYMENTS_PATH, query }, requestSigner(options));
  return { method: 'GET', path: PAYMENTS_PATH, query, headers: Object.entries(signed.headers), body: Buffer.alloc(0) };
}

/** The single value of a header (by lowercase name) in a request or webhook. */
export function headerOf(message: { headers: ReceivedRequest['headers'] }, name: string): string {
  const found = (message.headers as readonly HeaderPair[]).filter(([key]) => key.toLowerCase() === name);
  assert.equal(found.length, 1, `expected one ${name} header`);
  return (found[0] as HeaderPair)[1];
}

/** The message with every `name` header set to `value` (appended when absent). */
export function withHeader<T extends { headers: ReceivedRequest['headers'] }>(
  message: T,
  name: string,
  value: string,
): T {
  const pairs = message.headers as readonly HeaderPair[];
  const present = pairs.some(([key]) => key.toLowerCase() === name);
  const headers: HeaderPair[] = present
    ? pairs.map(([key, old]) => (key.toLowerCase() === name ? [key, value] : [key, old]))
    : [...pairs, [name, value]];
  return { ...message, headers };
}

/** The message without any `name` header. */
export function withoutHeader<T extends { headers: ReceivedRequest['headers'] }>(message: T, name: string): T {
  return {
    ...message,
    headers: (message.headers as readonly HeaderPair[]).filter(([key]) => key.toLowerCase() !== name),
  };
}

/** The message with one more `name: value` header line, so that duplicates stay visible. */
export function withExtraHeader<T extends { headers: ReceivedRequest['headers'] }>(
  message: T,
  name: string,
  value: string,
): T {
  return { ...message, headers: [...(message.headers as readonly HeaderPair[]), [name, value]] };
}

/**
 * Signs a request exactly as given (any method, path, query, headers and body bytes) with
 * arbitrary parameters, through the package's own base builder. Used to reach later
 * verification steps with inputs `signWriteRequest` would never produce.
 */
export function signRaw(
  message: {
    method: string;
    path: string;
    query: string | undefined;
    headers: Record<string, string>;
    body: Uint8Array;
  },
  params: SignatureParams,
  key: SigningKey = merchantKey,
): ReceivedRequest {
  const base = unwrap(buildSignatureBase(message, params));
  const headers = {
    ...message.headers,
    'signature-input': serializeSignatureInput(params),
    signature: serializeSignature(params.label, sign(base, key)),
  };
  return {
    method: message.method,
    path: message.path,
    query: message.query,
    headers: Object.entries(headers),
    body: message.body,
  };
}

/** Signs arbitrary wire body bytes as a write request (correct digest and headers). */
export function signWriteBody(body: Uint8Array, overrides: Partial<SignatureParams> = {}): ReceivedRequest {
  const params: SignatureParams = {
    label: 'merchant',
    components: [
      '@method',
      '@path',
      'content-type',
      'content-encryption',
      'content-digest',
      'idempotency-key',
      'merchant-access-key',
    ],
    created: NOW,
    expires: NOW + 300,
    nonce: freshUuid(),
    ...overrides,
  };
  const headers = {
    'content-type': JSON_CONTENT_TYPE,
    'content-encryption': ENVELOPE_ALG,
    'content-digest': contentDigest(body),
    'idempotency-key': freshUuid(),
    'merchant-access-key': ACCESS_KEY_ID,
  };
  return signRaw({ method: 'POST', path: PAYMENTS_PATH, query: undefined, headers, body }, params);
}

/** The merchant record the verifier looks up in these tests. */
export interface TestMerchant extends MerchantKeys {
  readonly id: string;
}

/** Verifier dependencies with an in-memory nonce store and a record of every lookup. */
export interface RecordingDeps extends RequestVerifierDeps<TestMerchant> {
  readonly calls: { merchant: number; nonce: number; bodyKey: number };
  readonly usedNonces: Set<string>;
}

/**
 * Verifier dependencies: the clock at `NOW`, one merchant (`ACCESS_KEY_ID`) holding
 * `merchantKey`, a nonce store that refuses a nonce seen before, and the body key `BODY_KEY_ID`.
 */
export function verifierDeps(overrides: Partial<RequestVerifierDeps<TestMerchant>> = {}): RecordingDeps {
  const calls = { merchant: 0, nonce: 0, bodyKey: 0 };
  const usedNonces = new Set<string>();
  const merchant: TestMerchant = { id: 'm1', publicKeys: [merchantKey.publicKey] };
  const deps: RequestVerifierDeps<TestMerchant> = {
    now: NOW,
    lookupMerchant: (accessKey) => (accessKey === ACCESS_KEY_ID ? merchant : undefined),
    consumeNonce: (m, nonce) => {
      const key = `${m.id} ${nonce}`;
      if (usedNonces.has(key)) return false;
      usedNonces.add(key);
      return true;
    },
    lookupBodyKey: (keyId) => (keyId === BODY_KEY_ID ? bodyKey : undefined),
    ...overrides,
  };
  return {
    now: deps.now,
    lookupMerchant: (accessKey) => {
      calls.merchant++;
      return deps.lookupMerchant(accessKey);
    },
    consumeNonce:
      deps.consumeNonce === 'caller'
        ? 'caller'
        : (m, nonce, expires) => {
            calls.nonce++;
            return (deps.consumeNonce as Exclude<typeof deps.consumeNonce, 'caller'>)(m, nonce, expires);
          },
    lookupBodyKey: (keyId) => {
      calls.bodyKey++;
      return deps.lookupBodyKey(keyId);
    },
    calls,
    usedNonces,
  };
}

/** Asserts a verification result is a failure at `step` whose reason matches `reason`. */
export function assertFailedAt(
  result: Result<unknown, RequestVerificationFailure>,
  step: VerificationStep,
  reason: RegExp,
): void {
  assert.equal(result.ok, false, 'expected the request to be refused');
  if (result.ok) return;
  assert.equal(result.error.step, step, `failed at ${result.error.step}: ${result.error.reason}`);
  assert.match(result.error.reason, reason);
}

// --- webhooks --------------------------------------------------------------------------------

export const WEBHOOK_URL = 'https://merchant.example/webhook/payment?shop=7&v=';
export const EVENT_ID = 'evt_01HZX3K8Q9';
export const EVENT_BODY = Buffer.from(
  JSON.stringify({
    eventId: EVENT_ID,
    orderType: 'PAYMENT',
    orderNo: 'P202601010001',
    merchantOrderNo: 'M-20260101-0001',
    status: 'SUCCEEDED',
    currency: 'BRL',
    amount: '125.50',
    paidAmount: '125.50',
  }),
  'utf8',
);

/** A webhook signed by the platform at `created` (default `NOW`), as the merchant receives it. */
export function signedWebhook(
  options: { created?: number; nonce?: string; key?: SigningKey; keyid?: string; body?: Buffer; eventId?: string } = {},
): ReceivedWebhook {
  const body = options.body ?? EVENT_BODY;
  const { headers } = signWebhook(
    { url: WEBHOOK_URL, body, eventId: options.eventId ?? EVENT_ID },
    {
      keyid: options.keyid ?? WEBHOOK_KEY_ID,
      key: options.key ?? webhookKey,
      created: options.created ?? NOW,
      nonce: options.nonce ?? freshUuid(),
    },
  );
  return { method: 'POST', ...webhookTarget(WEBHOOK_URL), headers: Object.entries(headers), body };
}

/** Signs a webhook with arbitrary parameters, to reach the later checks with crafted input. */
export function signWebhookRaw(
  params: Omit<SignatureParams, 'label' | 'components'>,
  options: { key?: SigningKey; body?: Buffer; eventId?: string } = {},
): ReceivedWebhook {
  const body = options.body ?? EVENT_BODY;
  const full: SignatureParams = {
    label: 'platform',
    components: ['@method', '@path', '@query', 'content-type', 'content-digest', 'webhook-event-id'],
    ...params,
  };
  const target = webhookTarget(WEBHOOK_URL);
  const headers = {
    'content-type': JSON_CONTENT_TYPE,
    'content-digest': contentDigest(body),
    'webhook-event-id': options.eventId ?? EVENT_ID,
  };
  const base = unwrap(buildSignatureBase({ method: 'POST', ...target, headers }, full));
  const signed = {
    ...headers,
    'signature-input': serializeSignatureInput(full),
    signature: serializeSignature('platform', sign(base, options.key ?? webhookKey)),
  };
  return { method: 'POST', ...target, headers: Object.entries(signed), body };
}

/** Webhook verifier dependencies: the clock at `NOW` and the platform key under `WEBHOOK_KEY_ID`. */
export function webhookDeps(overrides: Partial<WebhookVerifierDeps> = {}): WebhookVerifierDeps {
  return { now: NOW, publicKeys: new Map([[WEBHOOK_KEY_ID, webhookKey.publicKey]]), ...overrides };
}

/** Asserts a webhook verification failed at `check` with a reason matching `reason`. */
export function assertWebhookFailedAt(
  result: Result<unknown, WebhookVerificationFailure>,
  check: WebhookCheck,
  reason: RegExp,
): void {
  assert.equal(result.ok, false, 'expected the webhook to be refused');
  if (result.ok) return;
  assert.equal(result.error.check, check, `failed at ${result.error.check}: ${result.error.reason}`);
  assert.match(result.error.reason, reason);
}
