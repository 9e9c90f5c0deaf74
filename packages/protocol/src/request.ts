import {
  ENVELOPE_ALG,
  JSON_CONTENT_TYPE,
  MAX_CLOCK_SKEW_SECONDS,
  MAX_PLAINTEXT_BYTES,
  MAX_WIRE_BODY_BYTES,
  READ_COMPONENTS,
  REQUEST_LABEL,
  UUID_V4,
  WRITE_COMPONENTS,
} from './constants.js';
import { contentDigest, verifyContentDigest } from './digest.js';
import { type BodyPublicKey, openEnvelope, parseEnvelope, sealEnvelope } from './envelope.js';
import { collectHeaders, type RawHeaders, singleValued } from './headers.js';
import { type BoxKeyPair, type SigningKey, verify } from './keys.js';
import { readRequestParts, requestSignatureParams, writeRequestParts } from './request-parts.js';
import { err, ok, type Result } from './result.js';
import { buildSignatureBase } from './signature-base.js';
import { parseSignature, signMessage } from './signature.js';
import { readSignatureInput, type SignatureParams, type SignatureProfile } from './signature-input.js';

/** Signature-Input profile of merchant requests: label `merchant`, the write or read list, no keyid, any signer's form. */
export const REQUEST_PROFILE: SignatureProfile = {
  label: REQUEST_LABEL,
  components: [WRITE_COMPONENTS, READ_COMPONENTS],
  keyid: false,
  form: 'any-signer',
};

/** Access keys carry their environment: `ak_test_…` (sandbox) or `ak_live_…` (production). */
export const ACCESS_KEY = /^ak_(test|live)_[A-Za-z0-9]{8,64}$/;

// ---------------------------------------------------------------------------------------------
// Signing (merchant side)

/** What every request signature needs: who signs, with what, when, and a fresh nonce. */
export interface RequestSigner {
  readonly accessKey: string;
  readonly key: SigningKey;
  /** Signing time, Unix seconds. */
  readonly created: number;
  /** Fresh UUID v4 for this HTTP request. */
  readonly nonce: string;
  /** Seconds until expiry; at most and by default 300. */
  readonly lifetime?: number;
}

/** A request ready to send: headers to set (lowercase names) and the exact body bytes. */
export interface SignedRequest {
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  /** The signature base that was signed (for debugging integrations). */
  readonly signatureBase: string;
}

/** A signed write: the sealed envelope bytes are always there. */
export interface SignedWriteRequest extends SignedRequest {
  readonly body: Buffer;
}

function signParts(
  parts: { method: string; path: string; query?: string | undefined; headers: Record<string, string> },
  components: readonly string[],
  signer: RequestSigner,
): SignedRequest {
  const signed = signMessage(parts, requestSignatureParams(components, signer), signer.key);
  return { headers: { ...parts.headers, ...signed.headers }, signatureBase: signed.signatureBase };
}

/**
 * Signs a read (GET) request. `query` is the raw query string without `?`, exactly as it
 * will be sent.
 */
export function signReadRequest(
  target: { path: string; query?: string | undefined },
  signer: RequestSigner,
): SignedRequest {
  return signParts(readRequestParts(target, signer.accessKey), READ_COMPONENTS, signer);
}

/**
 * Seals business JSON bytes to the platform body key and signs the write (POST) request.
 * The returned body must be sent byte for byte; re-serializing it breaks digest and signature.
 */
export function signWriteRequest(
  request: { path: string; plaintext: Uint8Array; bodyKey: BodyPublicKey; idempotencyKey: string },
  signer: RequestSigner,
): SignedWriteRequest {
  const sealed = sealEnvelope(request.plaintext, request.bodyKey);
  if (!sealed.ok) throw new Error(`cannot seal: ${sealed.error.reason}`);
  const parts = writeRequestParts({
    path: request.path,
    contentDigest: contentDigest(sealed.value),
    idempotencyKey: request.idempotencyKey,
    accessKey: signer.accessKey,
  });
  return { ...signParts(parts, WRITE_COMPONENTS, signer), body: sealed.value };
}

// ---------------------------------------------------------------------------------------------
// Verification (platform side)

/** A request as received: nothing decoded, headers with their duplicates, the raw body. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path exactly as received. */
  readonly path: string;
  /** Raw query string without `?`; `undefined` when the target has no `?`. */
  readonly query: string | undefined;
  readonly headers: RawHeaders;
  /** The wire body bytes (empty for none). */
  readonly body: Uint8Array;
}

/** The verification steps, in the order the specification runs them. */
export type VerificationStep = 'shape' | 'digest' | 'signature-input' | 'signature' | 'nonce' | 'envelope';

/**
 * Why a request was refused. For logs and the sandbox debugger only: every failure must be
 * answered the same way (401 UNAUTHORIZED).
 */
export interface RequestVerificationFailure {
  readonly step: VerificationStep;
  readonly reason: string;
  /** The access key the request named, when it was well-formed. */
  readonly accessKey?: string;
  /** The signature base the verifier built, once it got that far. */
  readonly signatureBase?: string;
  /** Set when the request was authentic but its sealed plaintext exceeds 1 MiB. */
  readonly tooLarge?: true;
  /**
   * With `consumeNonce: 'caller'`, on a failure after the signature verified (the envelope): the
   * request's nonce, not recorded, for the caller to record before it answers.
   */
  readonly nonce?: { readonly value: string; readonly expires: number };
}

/** What the platform needs to know about a merchant to verify its requests. */
export interface MerchantKeys {
  /** The merchant's active Ed25519 public keys (one, or two during a rotation). */
  readonly publicKeys: readonly Uint8Array[];
}

/** Lookups and policy the verifier is given; it does no I/O of its own. */
export interface RequestVerifierDeps<M extends MerchantKeys> {
  /** Current time, Unix seconds. */
  readonly now: number;
  /** The merchant an access key names, with its active keys; `undefined` when unknown. */
  readonly lookupMerchant: (accessKey: string) => M | undefined | Promise<M | undefined>;
  /**
   * Records a nonce after the signature verified. Resolves `true` when the nonce was new,
   * `false` when it was used before. Must be atomic across every verifier instance.
   *
   * `'caller'`: the verifier records nothing and the caller must, before any business processing
   * (`params.nonce` and `params.expires` of the verified request): a platform that records the
   * nonce in the business's own transaction, so that a write costs one commit. The envelope is then
   * opened before the nonce is decided; a failure there carries the nonce (see
   * {@link RequestVerificationFailure.nonce}).
   */
  readonly consumeNonce: ((merchant: M, nonce: string, expires: number) => boolean | Promise<boolean>) | 'caller';
  /** The platform body key pair a key id selects; `undefined` for an unknown or retired id. */
  readonly lookupBodyKey: (keyId: string) => BoxKeyPair | undefined | Promise<BoxKeyPair | undefined>;
}

/** A request that passed every check. */
export interface VerifiedRequest<M extends MerchantKeys> {
  readonly kind: 'read' | 'write';
  readonly accessKey: string;
  readonly merchant: M;
  readonly params: SignatureParams;
  /** Index in `merchant.publicKeys` of the key that verified. */
  readonly keyIndex: number;
  /** The signature base that verified (for the record of a refusal found later: a replay). */
  readonly signatureBase: string;
  /** The decrypted business JSON bytes (writes only). */
  readonly plaintext?: Buffer;
}

const WRITE_HEADERS = ['content-type', 'content-encryption', 'content-digest', 'idempotency-key'] as const;
const CHECKED_HEADERS = [
  'merchant-access-key',
  'signature-input',
  'signature',
  'content-encoding',
  'content-length',
  'transfer-encoding',
  ...WRITE_HEADERS,
];

type Step<T> = Result<T, RequestVerificationFailure>;
const fail = (step: VerificationStep, reason: string, extra: Partial<RequestVerificationFailure> = {}) =>
  err<RequestVerificationFailure>({ step, reason, ...extra });

interface Shape {
  readonly kind: 'read' | 'write';
  readonly headers: Record<string, string>;
  readonly accessKey: string;
  readonly signatureInput: string;
  readonly signature: string;
}

function checkShape(request: ReceivedRequest): Step<Shape> {
  const kind = request.method === 'POST' ? 'write' : request.method === 'GET' ? 'read' : undefined;
  if (!kind) return fail('shape', `method ${request.method} is not allowed`);
  const picked = singleValued(collectHeaders(request.headers), CHECKED_HEADERS);
  if ('duplicate' in picked) return fail('shape', `header ${picked.duplicate} is repeated`);
  const h = picked.values;
  const accessKey = h['merchant-access-key'];
  const signatureInput = h['signature-input'];
  const signature = h.signature;
  if (accessKey === undefined || !ACCESS_KEY.test(accessKey))
    return fail('shape', 'missing or malformed Merchant-Access-Key');
  if (signatureInput === undefined) return fail('shape', 'missing Signature-Input');
  if (signature === undefined) return fail('shape', 'missing Signature');
  const encoding = h['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity')
    return fail('shape', 'Content-Encoding is not identity');

  const headers: Record<string, string> = { 'merchant-access-key': accessKey };
  if (kind === 'read') {
    if (request.body.length > 0) return fail('shape', 'a GET request carries no body');
    if (h['transfer-encoding'] !== undefined) return fail('shape', 'a GET request carries no body');
    if (h['content-length'] !== undefined && h['content-length'] !== '0')
      return fail('shape', 'a GET request carries no body');
    for (const name of WRITE_HEADERS) {
      if (h[name] !== undefined) return fail('shape', `a GET request does not send ${name}`);
    }
    return ok({ kind, headers, accessKey, signatureInput, signature });
  }

  if (request.query !== undefined) return fail('shape', 'a POST request has no query string');
  if (request.body.length > MAX_WIRE_BODY_BYTES) return fail('shape', 'wire body exceeds 2 MiB');
  for (const name of WRITE_HEADERS) {
    const value = h[name];
    if (value === undefined) return fail('shape', `missing ${name}`);
    headers[name] = value;
  }
  if (headers['content-type'] !== JSON_CONTENT_TYPE) return fail('shape', 'Content-Type is not application/json');
  if (headers['content-encryption'] !== ENVELOPE_ALG) return fail('shape', 'unknown Content-Encryption');
  if (!UUID_V4.test(headers['idempotency-key'] as string)) return fail('shape', 'Idempotency-Key is not a UUID v4');
  return ok({ kind, headers, accessKey, signatureInput, signature });
}

/**
 * Verifies a merchant request in the specified order: shape → Content-Digest →
 * Signature-Input (alg, nonce, time window, components) → Ed25519 signature (any active
 * merchant key) → nonce recorded (or left to the caller: `consumeNonce: 'caller'`) → envelope
 * parsed and opened. Returns the verified
 * request, or the first failure with the step it happened at.
 */
export async function verifyRequest<M extends MerchantKeys>(
  request: ReceivedRequest,
  deps: RequestVerifierDeps<M>,
): Promise<Step<VerifiedRequest<M>>> {
  const shape = checkShape(request);
  if (!shape.ok) return shape;
  const { kind, headers, accessKey } = shape.value;

  if (kind === 'write' && !verifyContentDigest(headers['content-digest'] as string, request.body)) {
    return fail('digest', 'Content-Digest does not match the body', { accessKey });
  }

  const parsed = readSignatureInput(shape.value.signatureInput, REQUEST_PROFILE);
  if (!parsed.ok) return fail('signature-input', parsed.error.reason, { accessKey });
  const { params, signatureParams } = parsed.value;
  const expected = kind === 'write' ? WRITE_COMPONENTS : READ_COMPONENTS;
  if (params.components.length !== expected.length) {
    return fail('signature-input', `a ${request.method} request covers the ${kind} list`, { accessKey });
  }
  if (deps.now > params.expires) return fail('signature-input', 'the signature has expired', { accessKey });
  if (deps.now < params.created - MAX_CLOCK_SKEW_SECONDS) {
    return fail('signature-input', 'the signature was created in the future', { accessKey });
  }

  const parts = { method: request.method, path: request.path, query: request.query, headers };
  const base = buildSignatureBase(parts, params, signatureParams);
  if (!base.ok) return fail('signature-input', `missing component ${base.error.component}`, { accessKey });
  const signatureBase = base.value;

  const signature = parseSignature(shape.value.signature, REQUEST_LABEL);
  if (!signature.ok) return fail('signature', signature.error.reason, { accessKey, signatureBase });
  const merchant = await deps.lookupMerchant(accessKey);
  if (!merchant) return fail('signature', 'unknown access key', { accessKey, signatureBase });
  const keyIndex = merchant.publicKeys.findIndex((key) => verify(signatureBase, signature.value, key));
  if (keyIndex < 0) return fail('signature', 'the signature does not verify', { accessKey, signatureBase });

  const consume = deps.consumeNonce;
  if (consume !== 'caller' && !(await consume(merchant, params.nonce, params.expires))) {
    return fail('nonce', 'the nonce was used before', { accessKey, signatureBase });
  }

  const verified = { kind, accessKey, merchant, params, keyIndex, signatureBase };
  if (kind === 'read') return ok(verified);

  // Past the signature: a failure carries the nonce when the caller records it.
  const context = {
    accessKey,
    signatureBase,
    ...(consume === 'caller' ? { nonce: { value: params.nonce, expires: params.expires } } : {}),
  };
  const envelope = parseEnvelope(request.body, headers['content-encryption'] as string);
  if (!envelope.ok) return fail('envelope', envelope.error.reason, context);
  const bodyKey = await deps.lookupBodyKey(envelope.value.keyId);
  const plaintext = openEnvelope(envelope.value, () => bodyKey);
  if (!plaintext.ok) return fail('envelope', plaintext.error.reason, context);
  if (plaintext.value.length > MAX_PLAINTEXT_BYTES) {
    return fail('envelope', 'plaintext exceeds 1 MiB', { ...context, tooLarge: true });
  }
  return ok({ ...verified, plaintext: plaintext.value });
}
