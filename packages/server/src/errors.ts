/** Business failure codes, as the API reports them in `msg` (decisions.md, Responses). */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'ORDER_NOT_FOUND'
  | 'EVENT_NOT_FOUND'
  | 'NOT_FOUND'
  | 'DUPLICATE_ORDER'
  | 'INVALID_STATE'
  | 'INSUFFICIENT_BALANCE'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'CONFLICT'
  /** A malformed HTTP message (a repeated single-valued header, a missing Host). */
  | 'BAD_REQUEST'
  /** Too many header lines, or a request head over its size limit (http/header-limits.ts). */
  | 'REQUEST_HEADER_FIELDS_TOO_LARGE'
  | 'NOT_IMPLEMENTED'
  /** The order's channel could not be reached; nothing was created or changed (modules/channels). */
  | 'CHANNEL_UNAVAILABLE';

/** One problem with one input field. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** A business failure. Domain code raises these; only the HTTP layer knows their status codes. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors: readonly FieldError[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const validationFailed = (fieldErrors: readonly FieldError[]) =>
  new DomainError('VALIDATION_FAILED', 'the request is not valid', fieldErrors);
export const orderNotFound = () => new DomainError('ORDER_NOT_FOUND', 'no such order');
export const invalidState = (message: string) => new DomainError('INVALID_STATE', message);
export const channelUnavailable = (channel: string) =>
  new DomainError('CHANNEL_UNAVAILABLE', `the channel ${channel} is unavailable; nothing was done, retry later`);
export const duplicateOrder = () =>
  new DomainError('DUPLICATE_ORDER', 'an order with this merchantOrderNo exists with different fields');
