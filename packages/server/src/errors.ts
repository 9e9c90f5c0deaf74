/**
 * Where a failure code is documented, which the catalogue test checks:
 * - `business`: in decisions.md's fixed Responses list, and in the OpenAPI document's responses
 *   of the merchant API at its status;
 * - `api`: ours beyond that list, answered by the merchant API or the channel notification
 *   endpoint, in the OpenAPI document's responses at its status;
 * - `transport`: the HTTP layer's own answers on any path (a malformed or oversized message, a
 *   timeout, an instance or database that cannot serve): in the OpenAPI Error schema's `msg` list;
 * - `private`: answered only by the portal's API, the operator API or the cashier page, which the
 *   merchant API's document does not describe (the test checks it does not list them).
 */
export type ErrorKind = 'business' | 'api' | 'transport' | 'private';

/** One failure, declared once: its HTTP status, what it means (the default message), where it is documented. */
export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
  readonly kind: ErrorKind;
}

/**
 * A module's failure codes. `http/errors.ts` merges every module's declaration into the one
 * catalogue that all scopes answer from; a code declared twice fails at startup.
 */
export function declareErrors<const T extends Record<string, ErrorSpec>>(errors: T): Readonly<T> {
  return Object.freeze(errors);
}

/**
 * Every declaration of failure codes, by the name of its owner. Each `errors.ts` adds its own
 * here (`declare module … { interface ErrorDeclarations { … } }`), so that this file knows every
 * code without importing a module; `http/errors.ts` checks that its catalogue merges exactly these.
 */
export interface ErrorDeclarations {
  common: typeof commonErrors;
}

/** A failure code, as answered in `msg`: a code of one of the declarations. */
export type ErrorCode = {
  [Owner in keyof ErrorDeclarations]: keyof ErrorDeclarations[Owner] & string;
}[keyof ErrorDeclarations];

/** Failures every module may raise. */
export const commonErrors = declareErrors({
  VALIDATION_FAILED: { status: 400, message: 'the request is not valid', kind: 'business' },
  /** Any authentication failure; under the merchant API, the operator API and channel notifications the body is `msg` alone. */
  UNAUTHORIZED: { status: 401, message: 'authentication failed', kind: 'business' },
  ORDER_NOT_FOUND: { status: 404, message: 'no such order', kind: 'business' },
  DUPLICATE_ORDER: {
    status: 409,
    message: 'an order with this merchantOrderNo exists with different fields',
    kind: 'business',
  },
  INVALID_STATE: { status: 409, message: 'the order is not in a state that allows this', kind: 'business' },
  INTERNAL_ERROR: { status: 500, message: 'an unexpected failure; it is logged with the request id', kind: 'business' },
  /** No such path, endpoint, merchant, key or channel. */
  NOT_FOUND: { status: 404, message: 'no such resource', kind: 'api' },
  /** An operator or portal write that collides with existing data (a key added twice, a user of another merchant). */
  CONFLICT: { status: 409, message: 'this conflicts with existing data', kind: 'private' },
});

/** One problem with one input field. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/**
 * A failure with a catalogue code. Domain code raises these; only `http/errors.ts` turns the
 * code into an HTTP status. Without a message the body is the bare `{"msg": code}`.
 */
export class DomainError extends Error {
  /** True when the body carries `msg` only (authentication failures, for one). */
  readonly bare: boolean;
  /** Seconds for a Retry-After header (a lock-out, a rate limit). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly fieldErrors: readonly FieldError[] = [],
    options: { retryAfterSeconds?: number } = {},
  ) {
    super(message ?? code);
    this.name = 'DomainError';
    this.bare = message === undefined;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * A field error's message as a plain sentence that names the field: `amount must be a decimal
 * string…`, `webhookUrl is not an absolute URL`, `payee.name is required`. A message that already
 * names a field (it starts with one, or says `give …`/`only …`) is kept.
 */
export function fieldSentence(field: string, message: string): string {
  if (message.startsWith(field) || /^(give|only|currency codes) /.test(message)) return message;
  if (message === 'required') return `${field} is required`;
  if (/^(is|are|must|has|does|may|can) /.test(message)) return `${field} ${message}`;
  if (/^not /.test(message)) return `${field} is ${message}`;
  if (/^no /.test(message)) return `${field} is refused: ${message}`;
  return `${field} must be ${message}`;
}

export const validationFailed = (fieldErrors: readonly FieldError[]) =>
  new DomainError(
    'VALIDATION_FAILED',
    commonErrors.VALIDATION_FAILED.message,
    fieldErrors.map((error) => ({ field: error.field, message: fieldSentence(error.field, error.message) })),
  );
export const orderNotFound = () => new DomainError('ORDER_NOT_FOUND', commonErrors.ORDER_NOT_FOUND.message);
export const invalidState = (message: string) => new DomainError('INVALID_STATE', message);
export const duplicateOrder = () => new DomainError('DUPLICATE_ORDER', commonErrors.DUPLICATE_ORDER.message);
/** The authentication failure: the same bare body for every cause (the reason goes to the log only). */
export const unauthorized = () => new DomainError('UNAUTHORIZED');
