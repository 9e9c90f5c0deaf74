import { declareErrors } from '../../errors.js';

/** Failures particular to the portal's web app (sign-in and sessions are the accounts module's). */
export const portalErrors = declareErrors({
  /** The portal's web app has no build to serve (an HTML page says how to make one). */
  PORTAL_NOT_BUILT: { status: 503, message: 'the portal web app has not been built', kind: 'private' },
});

declare module '../../errors.js' {
  interface ErrorDeclarations {
    portal: typeof portalErrors;
  }
}
