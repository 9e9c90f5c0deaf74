/** The back office's place and name (see ../site.ts): what its build binds the shared client and router to. */
import type { Site } from '../site';

export const SITE: Site = {
  base: '/backoffice',
  apiBase: '/backoffice/api',
  signedOutEvent: 'paygate:backoffice-signed-out',
  title: 'Paygate back office',
};
