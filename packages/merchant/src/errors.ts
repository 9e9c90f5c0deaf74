import type { WebhookCheck } from '@paygate/protocol/web';
import type { ApiErrorCode, FieldError } from './types.js';

/** Base class of every error the SDK throws; `instanceof PaygateError` catches them all. */
export class PaygateError extends Error {
  override readonly name: string = 'PaygateError';
}

/**
 * The SDK was configured or called with something unusable: a key that does not load, a bad URL,
 * a POST body that is not JSON or exceeds 1 MiB. Nothing was sent.
 */
export class PaygateConfigError extends PaygateError {
  override readonly name = 'PaygateConfigError';
}

/**
 * The platform answered, and not with `{"msg":"SUCCESS"}`: a business failure
 * (`VALIDATION_FAILED`, `ORDER_NOT_FOUND`, `DUPLICATE_ORDER`, `INVALID_STATE`,
 * `INSUFFICIENT_BALANCE`, …), an authentication failure (`UNAUTHORIZED`), or a server error that
 * persisted through the retries. Quote {@link PaygateApiError.requestId} when asking for help: the
 * platform logs the reason of every refusal under it.
 */
export class PaygateApiError extends PaygateError {
  override readonly name = 'PaygateApiError';
  /** The platform's failure code (`msg`), or `INVALID_RESPONSE` when the answer was not the API's JSON. */
  readonly msg: ApiErrorCode;
  /** HTTP status. */
  readonly status: number;
  /** Field errors of a `VALIDATION_FAILED`; empty otherwise. */
  readonly fieldErrors: readonly FieldError[];
  /** The `Request-Id` response header. */
  readonly requestId: string | undefined;
  /** The platform's explanation (`message`), when it gave one. */
  readonly detail: string | undefined;
  /** The parsed response body (or its text when it was not JSON). */
  readonly body: unknown;
  /** Request method and path (no query string: it may carry identifiers). */
  readonly method: string;
  readonly path: string;

  /** Built by the client from the platform's answer. */
  constructor(init: {
    msg: ApiErrorCode;
    status: number;
    fieldErrors?: readonly FieldError[];
    requestId: string | undefined;
    detail?: string | undefined;
    body: unknown;
    method: string;
    path: string;
  }) {
    // The platform's field errors are sentences that name their field; older ones were not.
    const fields = (init.fieldErrors ?? [])
      .map((e) => (e.message.startsWith(`${e.field} `) ? e.message : `${e.field}: ${e.message}`))
      .join('; ');
    const hint = init.msg === 'UNAUTHORIZED' ? ` ${UNAUTHORIZED_HINT}` : '';
    super(
      `${init.method} ${init.path} failed with ${init.status} ${init.msg}` +
        (init.detail ? `: ${init.detail}` : '') +
        (fields ? ` (${fields})` : '') +
        (init.requestId ? ` [Request-Id ${init.requestId}]` : '') +
        hint,
    );
    this.msg = init.msg;
    this.status = init.status;
    this.fieldErrors = init.fieldErrors ?? [];
    this.requestId = init.requestId;
    this.detail = init.detail;
    this.body = init.body;
    this.method = init.method;
    this.path = init.path;
  }
}

const UNAUTHORIZED_HINT =
  'The platform never says which check failed. Usual causes: the private key does not belong to the public key ' +
  'uploaded for this access key; a sandbox key or access key used against production (or the reverse); the body key ' +
  'id or public key is not the one onboarding printed; this machine’s clock is more than 5 minutes off. In the ' +
  'sandbox the portal shows the reason and the signature base the platform built, under this Request-Id.';

/**
 * No answer from the platform: the connection failed, or an attempt ran past its timeout, on
 * every try. Creates are safe to repeat (the platform deduplicates them by merchantOrderNo), so
 * the operation can be tried again later.
 */
export class PaygateNetworkError extends PaygateError {
  override readonly name = 'PaygateNetworkError';
  /** Whether the last attempt was cut off by the timeout. */
  readonly timedOut: boolean;
  /** How many attempts were made. */
  readonly attempts: number;
  readonly method: string;
  readonly path: string;

  /** Built by the client when its last attempt got no answer. */
  constructor(init: { method: string; path: string; attempts: number; timedOut: boolean; cause: unknown }) {
    const reason = init.timedOut
      ? 'the attempt timed out'
      : init.cause instanceof Error
        ? describeCause(init.cause)
        : String(init.cause);
    super(`${init.method} ${init.path}: no answer from the platform after ${init.attempts} attempt(s): ${reason}`, {
      cause: init.cause,
    });
    this.timedOut = init.timedOut;
    this.attempts = init.attempts;
    this.method = init.method;
    this.path = init.path;
  }
}

function describeCause(error: Error): string {
  // fetch wraps the socket error (ECONNREFUSED, ECONNRESET…) in a TypeError's cause.
  const inner = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${inner}`;
}

/** The checks of webhook verification, and `payload` for an authentic body that is not a known event. */
export type WebhookFailureCheck = WebhookCheck | 'payload';

/**
 * A webhook was refused. {@link WebhookVerificationError.check} names the check that failed, in
 * the specification's order: `shape` (method, headers) → `digest` (Content-Digest over the raw
 * body) → `event-id` (Webhook-Event-Id equals the body's eventId) → `signature-input` (parameters
 * and time window) → `keyid` (a configured platform key) → `signature` (Ed25519 over the
 * rebuilt base) → `nonce` (replay guard, when configured); `payload` when an authentic body is
 * not an event this SDK knows.
 */
export class WebhookVerificationError extends PaygateError {
  override readonly name = 'WebhookVerificationError';
  readonly check: WebhookFailureCheck;
  /** What the check found, e.g. `Content-Digest does not match the body`. */
  readonly reason: string;
  /** What usually causes this failure and how to fix it. */
  readonly hint: string;
  /** The signature base rebuilt from the request, once verification got that far. */
  readonly signatureBase: string | undefined;

  /** Built by the verifier from the protocol's failure. */
  constructor(init: { check: WebhookFailureCheck; reason: string; hint: string; signatureBase?: string | undefined }) {
    super(`webhook refused at the ${init.check} check: ${init.reason}. ${init.hint}`);
    this.check = init.check;
    this.reason = init.reason;
    this.hint = init.hint;
    this.signatureBase = init.signatureBase;
  }
}

/**
 * The webhook's raw body bytes were no longer available: something (typically `express.json()`
 * or another body parser) read and parsed the request before the Paygate handler did. The
 * signature covers the exact bytes, so a parsed body can never be verified. Adapters answer 500,
 * so the platform retries once the integration is fixed.
 */
export class RawBodyUnavailableError extends PaygateError {
  override readonly name = 'RawBodyUnavailableError';
}

/**
 * Another delivery of the same event is being processed right now. Adapters answer 503 with
 * Retry-After; the platform retries later and then finds the event done.
 */
export class InboxBusyError extends PaygateError {
  override readonly name = 'InboxBusyError';
  readonly eventId: string;
  /** When to try again, in seconds. */
  readonly retryAfterSeconds: number;

  /** Built by the inbox when a claim is held by another delivery. */
  constructor(eventId: string, retryAfterSeconds: number) {
    super(`event ${eventId} is being processed by another delivery; retry in ${retryAfterSeconds} s`);
    this.eventId = eventId;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
