import { READ_COMPONENTS, WRITE_COMPONENTS } from '../constants.js';
import { type BodyPublicKey, readRequestParts, requestSignatureParams, writeRequestParts } from '../request-parts.js';
import { type MessageParts, prepareSignature } from '../signature-base.js';
import { serializeSignature } from '../signature-input.js';
import { contentDigest } from './digest.js';
import { sealEnvelope } from './envelope.js';
import { type SigningKey, sign } from './keys.js';

/** What every request signature needs: who signs, with what, when, and a fresh nonce. */
export interface RequestSigner {
  readonly accessKey: string;
  /** From `signingKeyFrom` of this entry. */
  readonly key: SigningKey;
  /** Signing time, Unix seconds. */
  readonly created: number;
  /** Fresh UUID v4 for this HTTP request (`crypto.randomUUID()`). */
  readonly nonce: string;
  /** Seconds until expiry; at most and by default 300. */
  readonly lifetime?: number;
}

/** A request ready to send: headers to set (lowercase names) and the exact body bytes. */
export interface SignedRequest {
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
  /** The signature base that was signed (for debugging integrations). */
  readonly signatureBase: string;
}

/** A signed write: the sealed envelope bytes are always there. */
export interface SignedWriteRequest extends SignedRequest {
  readonly body: Uint8Array;
}

async function signParts(
  parts: MessageParts & { headers: Record<string, string> },
  components: readonly string[],
  signer: RequestSigner,
): Promise<SignedRequest> {
  const params = requestSignatureParams(components, signer);
  const { signatureBase, signatureInput } = prepareSignature(parts, params);
  const signature = serializeSignature(params.label, await sign(signatureBase, signer.key));
  return { headers: { ...parts.headers, 'signature-input': signatureInput, signature }, signatureBase };
}

/**
 * Signs a read (GET) request. `query` is the raw query string without `?`, exactly as it
 * will be sent.
 */
export function signReadRequest(
  target: { path: string; query?: string | undefined },
  signer: RequestSigner,
): Promise<SignedRequest> {
  return signParts(readRequestParts(target, signer.accessKey), READ_COMPONENTS, signer);
}

/**
 * Seals business JSON bytes to the platform body key and signs the write (POST) request.
 * The returned body must be sent byte for byte; re-serializing it breaks digest and signature.
 * Rejects when the plaintext exceeds 1 MiB or the body key is a small-order point.
 */
export async function signWriteRequest(
  request: { path: string; plaintext: Uint8Array; bodyKey: BodyPublicKey; idempotencyKey: string },
  signer: RequestSigner,
): Promise<SignedWriteRequest> {
  const sealed = sealEnvelope(request.plaintext, request.bodyKey);
  if (!sealed.ok) throw new Error(`cannot seal: ${sealed.error.reason}`);
  const parts = writeRequestParts({
    path: request.path,
    contentDigest: await contentDigest(sealed.value),
    idempotencyKey: request.idempotencyKey,
    accessKey: signer.accessKey,
  });
  return { ...(await signParts(parts, WRITE_COMPONENTS, signer)), body: sealed.value };
}
