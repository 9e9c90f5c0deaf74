/** Failures particular to the portal's sign-in and sessions; routes map them to HTTP statuses. */
export type PortalErrorCode =
  /** Wrong email or password (never says which). */
  | 'LOGIN_FAILED'
  /** Too many failed sign-ins for this email or from this address; `retryAfterMs` says how long. */
  | 'LOGIN_LOCKED'
  /** No valid session cookie. */
  | 'UNAUTHORIZED'
  /** A state-changing request without the session's CSRF token, or from another origin. */
  | 'CSRF_REJECTED'
  /** The setup link is unknown, used or expired. */
  | 'INVITATION_INVALID';

export class PortalError extends Error {
  constructor(
    readonly code: PortalErrorCode,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'PortalError';
  }
}
