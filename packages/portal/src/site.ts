/**
 * Where the app is served and what it is called: the merchant portal's, here. The back office's
 * build (vite.backoffice.config.ts) resolves every import of this module to backoffice/site.ts,
 * so the API client, the router and every component built on them serve either app unchanged.
 */
export interface Site {
  /** The app's path (`/portal`). */
  readonly base: string;
  /** Its JSON API (`/portal/api`). */
  readonly apiBase: string;
  /** The window event a refused session raises (each app its own). */
  readonly signedOutEvent: string;
  /** The name after every page title. */
  readonly title: string;
}

export const SITE: Site = {
  base: '/portal',
  apiBase: '/portal/api',
  signedOutEvent: 'paygate:signed-out',
  title: 'Paygate merchant portal',
};
