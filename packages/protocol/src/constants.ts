/** Fixed values of the wire protocol (specification: Authentication, Limits, Versioning). */

/** Signature label on merchant requests. */
export const REQUEST_LABEL = 'merchant';
/** Signature label on platform webhooks. */
export const WEBHOOK_LABEL = 'platform';
/** The only signature algorithm. */
export const SIGNATURE_ALG = 'ed25519';

/** Covered components of a write (POST) request, in the only accepted order. */
export const WRITE_COMPONENTS = [
  '@method',
  '@path',
  'content-type',
  'content-encryption',
  'content-digest',
  'idempotency-key',
  'merchant-access-key',
] as const;

/** Covered components of a read (GET) request, in the only accepted order. */
export const READ_COMPONENTS = ['@method', '@path', '@query', 'merchant-access-key'] as const;

/** Covered components of a webhook delivery, in the only accepted order. */
export const WEBHOOK_COMPONENTS = [
  '@method',
  '@path',
  '@query',
  'content-type',
  'content-digest',
  'webhook-event-id',
] as const;

/** Envelope algorithm; also the value of the Content-Encryption header. */
export const ENVELOPE_ALG = 'sealedbox-v1-x25519-xsalsa20poly1305';
/** Envelope version. */
export const ENVELOPE_VERSION = 1;
/** Content-Type of every POST and every webhook. */
export const JSON_CONTENT_TYPE = 'application/json';

/** Maximum `expires - created`, and maximum age of `created`, in seconds. */
export const MAX_SIGNATURE_LIFETIME_SECONDS = 300;
/** How far `created` may lie in the future (clock skew), in seconds. */
export const MAX_CLOCK_SKEW_SECONDS = 300;
/** Maximum size of the business JSON before sealing. */
export const MAX_PLAINTEXT_BYTES = 1024 * 1024;
/** Maximum size of a POST body on the wire (the envelope). */
export const MAX_WIRE_BODY_BYTES = 2 * 1024 * 1024;

/** A UUID version 4, lowercase or uppercase hex. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
