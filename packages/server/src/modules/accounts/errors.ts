import { declareErrors } from '../../errors.js';

/** Failures of sign-in, sessions and the second factor, for the portal and the back office alike. */
export const accountErrors = declareErrors({
  /** Wrong email or password (never says which). */
  LOGIN_FAILED: { status: 401, message: 'wrong email or password', kind: 'private' },
  /** Too many failed sign-ins for this email or from this address; Retry-After says how long. */
  LOGIN_LOCKED: { status: 429, message: 'too many failed sign-ins; try again later', kind: 'private' },
  /** The right password, but the operator disabled the user's merchant (`paygate merchant disable`). */
  MERCHANT_DISABLED: {
    status: 403,
    message: 'this merchant is disabled: ask the platform operator',
    kind: 'private',
  },
  /** The person's role does not allow this (the message names the role it takes); nothing changed. */
  FORBIDDEN: { status: 403, message: 'your role does not allow this', kind: 'private' },
  /** A wrong, reused or used-up second-factor code (counts as a failed sign-in). */
  SECOND_FACTOR_FAILED: { status: 401, message: 'wrong or already used code', kind: 'private' },
  /**
   * The session must pass its second factor first: it waits for the code of a sign-in, or a
   * second factor is required (always for operators; by the merchant's owners in the portal) and
   * the person has none yet.
   */
  SECOND_FACTOR_REQUIRED: { status: 403, message: 'the second factor is needed first', kind: 'private' },
  /** A sensitive change and the session's last second-factor check is older than 5 minutes. */
  STEP_UP_REQUIRED: {
    status: 403,
    message: 'confirm with your second factor: the last check is older than 5 minutes',
    kind: 'private',
  },
  /** A state-changing request without the session's CSRF token, or from another origin. */
  CSRF_REJECTED: { status: 403, message: 'cross-site request refused', kind: 'private' },
  /** The setup link is unknown, used or expired. */
  INVITATION_INVALID: { status: 400, message: 'this setup link is unknown, used or expired', kind: 'private' },
});

declare module '../../errors.js' {
  interface ErrorDeclarations {
    accounts: typeof accountErrors;
  }
}
