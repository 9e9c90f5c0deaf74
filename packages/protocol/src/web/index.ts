/**
 * The Paygate wire protocol for edge runtimes and browsers (Cloudflare Workers, Vercel Edge,
 * Deno, Bun, service workers) and for serverless functions that cannot load native addons: the
 * merchant's side, signing requests and verifying webhooks, asynchronous and on `Uint8Array`
 * only. Ed25519 and SHA-256 run on WebCrypto (`crypto.subtle`); sealed boxes and libsodium's
 * strict point checks on the noble libraries. Nothing here imports a Node built-in or uses
 * `Buffer`. Signatures, digests and signature bases are byte for byte the Node entry's.
 *
 * @packageDocumentation
 */
export * from '../constants.js';
export {
  collectHeaders,
  type HeaderMultimap,
  type HeaderPair,
  headerPairs,
  type RawHeaders,
  singleValued,
} from '../headers.js';
export type { BodyPublicKey, EnvelopeError, KeyError } from '../request-parts.js';
export * from '../result.js';
export { buildSignatureBase, componentValue, type MessageParts, type SignatureBaseError } from '../signature-base.js';
export {
  parseSignatureBytes,
  parseSignatureInput,
  readSignatureInput,
  type SignatureHeaderError,
  type SignatureParameter,
  type SignatureParams,
  type SignatureProfile,
  serializeSignature,
  serializeSignatureInput,
  serializeSignatureParams,
} from '../signature-input.js';
export {
  type ReceivedWebhook,
  type WebhookCheck,
  type WebhookVerificationFailure,
  type WebhookVerifierDeps,
  WEBHOOK_PROFILE,
  webhookTarget,
} from '../webhook-core.js';
export { decodeCanonicalBase64, encodeBase64 } from './base64.js';
export { contentDigest, verifyContentDigest } from './digest.js';
export { openSealedBox, sealEnvelope } from './envelope.js';
export {
  type BoxKeyPair,
  boxKeyPairFrom,
  boxPublicKeyFrom,
  publicKeyFrom,
  type SigningKey,
  sign,
  signingKeyFrom,
  verify,
  type WebCryptoKey,
} from './keys.js';
export {
  type RequestSigner,
  type SignedRequest,
  type SignedWriteRequest,
  signReadRequest,
  signWriteRequest,
} from './request.js';
export { type VerifiedWebhook, verifyWebhook, verifyWebhookRequest } from './webhook.js';
