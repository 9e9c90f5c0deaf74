import {
  ENVELOPE_ALG,
  ENVELOPE_VERSION,
  JSON_CONTENT_TYPE,
  MAX_SIGNATURE_LIFETIME_SECONDS,
  REQUEST_LABEL,
} from './constants.js';
import type { SignatureParams } from './signature-input.js';

// What a signed merchant request is made of, shared by the Node entry (request.ts) and the web
// entry (web/request.ts), which differ only in how they hash, seal and sign. Pure: no Node
// built-in, no Buffer.

/** The platform body public key a merchant seals to. */
export interface BodyPublicKey {
  readonly keyId: string;
  readonly publicKey: Uint8Array;
}

/** Why a key could not be loaded. */
export interface KeyError {
  readonly kind: 'invalid-key';
  readonly reason: string;
}

/** Why an envelope was refused. */
export interface EnvelopeError {
  readonly kind: 'invalid-envelope';
  readonly reason: string;
}

/** The parameters of a merchant request signature: created, expires (at most 300 s later) and nonce. */
export function requestSignatureParams(
  components: readonly string[],
  signer: { readonly created: number; readonly nonce: string; readonly lifetime?: number },
): SignatureParams {
  const lifetime = Math.min(signer.lifetime ?? MAX_SIGNATURE_LIFETIME_SECONDS, MAX_SIGNATURE_LIFETIME_SECONDS);
  return {
    label: REQUEST_LABEL,
    components,
    created: signer.created,
    expires: signer.created + lifetime,
    nonce: signer.nonce,
  };
}

/** A read (GET) request's covered parts: the target and the access key. */
export function readRequestParts(target: { path: string; query?: string | undefined }, accessKey: string) {
  return { method: 'GET', path: target.path, query: target.query, headers: { 'merchant-access-key': accessKey } };
}

/** A write (POST) request's covered parts: the path and the five covered headers. */
export function writeRequestParts(request: {
  path: string;
  contentDigest: string;
  idempotencyKey: string;
  accessKey: string;
}) {
  return {
    method: 'POST',
    path: request.path,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'content-encryption': ENVELOPE_ALG,
      'content-digest': request.contentDigest,
      'idempotency-key': request.idempotencyKey,
      'merchant-access-key': request.accessKey,
    },
  };
}

/** The envelope's JSON text: version, alg, keyId and the base64 sealed box, in that order. */
export function envelopeText(keyId: string, ciphertextBase64: string): string {
  return JSON.stringify({ version: ENVELOPE_VERSION, alg: ENVELOPE_ALG, keyId, ciphertext: ciphertextBase64 });
}
