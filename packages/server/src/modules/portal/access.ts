import { type AccessTable, capabilitiesOf as capabilitiesIn } from '../accounts/access.js';
import type { Audience } from '../accounts/audience.js';

/**
 * Who may do what in the portal: the roles, what each is allowed, and the one table naming what
 * every route of the portal API needs. The routes' hook (routes.ts) checks a request against it
 * before the handler runs (modules/accounts/routes.ts), and a route missing from the table stops the
 * server from starting.
 */

export const ROLES = ['owner', 'developer', 'finance', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a route needs. `read`: any signed-in person; `self`: the person's own account (sessions,
 * password), also any role; the others are the roles' areas.
 */
export type Capability =
  'read' | 'self' | 'keys' | 'webhooks' | 'debugger' | 'payments' | 'exports' | 'people' | 'audit';

/** Each capability and the roles that hold it (owners hold every one). */
export const CAPABILITY_ROLES: Readonly<Record<Capability, readonly Role[]>> = {
  read: ['owner', 'developer', 'finance', 'viewer'],
  self: ['owner', 'developer', 'finance', 'viewer'],
  keys: ['owner', 'developer'],
  webhooks: ['owner', 'developer'],
  debugger: ['owner', 'developer'],
  payments: ['owner', 'finance'],
  exports: ['owner', 'finance'],
  people: ['owner'],
  audit: ['owner'],
};

/** How a refusal names a capability: "… needs the owner or developer role to <what>". */
const WHAT: Readonly<Record<Capability, string>> = {
  read: 'read',
  self: 'manage your own account',
  keys: 'manage API keys',
  webhooks: 'resend or recover webhook events',
  debugger: 'use the sandbox helpers',
  payments: 'cancel orders',
  exports: 'export data',
  people: 'manage people',
  audit: 'read the audit trail',
};

/**
 * What every route of the portal API needs, by `METHOD /path` under /portal/api. The public
 * routes (sign-in and password setup) are not in it: they have no session to check.
 */
export const ROUTE_ACCESS = {
  'GET /session': 'self',
  'POST /session/logout': 'self',
  'GET /sessions': 'self',
  'POST /sessions/:sessionId/end': 'self',
  'POST /password': 'self',
  'POST /session/second-factor': 'self',
  'POST /session/second-factor/options': 'self',
  'GET /passkeys': 'self',
  'POST /passkeys/options': 'self',
  'POST /passkeys': 'self',
  'POST /passkeys/:passkeyId/remove': 'self',
  'GET /second-factor': 'self',
  'POST /second-factor/totp': 'self',
  'POST /second-factor/totp/confirm': 'self',
  'POST /second-factor/remove': 'self',
  'GET /security': 'people',
  'POST /security': 'people',
  'GET /credentials': 'read',
  'POST /keys': 'keys',
  'POST /keys/retire': 'keys',
  'GET /payments': 'read',
  'GET /payments/:orderNo': 'read',
  'POST /payments/:orderNo/cancel': 'payments',
  'GET /payouts': 'read',
  'GET /payouts/:orderNo': 'read',
  'GET /balances': 'read',
  'GET /ledger': 'read',
  'GET /ledger/export.csv': 'exports',
  'GET /payouts/report.csv': 'exports',
  'GET /payments/report.csv': 'exports',
  'GET /rejected-requests': 'read',
  'GET /overview': 'read',
  'GET /events': 'read',
  'POST /events/recover': 'webhooks',
  'POST /events/:eventId/resend': 'webhooks',
  'POST /sandbox/payments/:orderNo/simulate': 'debugger',
  'POST /sandbox/payouts/:orderNo/simulate': 'debugger',
  'POST /sandbox/payouts/:orderNo/return': 'debugger',
  'GET /people': 'people',
  'POST /people': 'people',
  'POST /people/role': 'people',
  'POST /people/remove': 'people',
  'GET /audit': 'audit',
  'GET /audit/export.csv': 'audit',
} as const satisfies Readonly<Record<string, Capability>>;

export type PortalRoute = keyof typeof ROUTE_ACCESS;

/** The routes before the second factor, and the public ones: the same for every audience. */
export { BEFORE_SECOND_FACTOR, PUBLIC_ROUTES, WITHOUT_REQUIRED_SECOND_FACTOR } from '../accounts/access.js';

/**
 * Sensitive changes: a person with a second factor is asked for it again (step-up) when the
 * session's last check is older than STEP_UP_MS (keys, people and roles, the security settings).
 */
export const STEP_UP_ROUTES: readonly PortalRoute[] = [
  'POST /keys',
  'POST /keys/retire',
  'POST /people',
  'POST /people/role',
  'POST /people/remove',
  'POST /security',
  'POST /passkeys/:passkeyId/remove',
];

/** The portal's door: its route table and roles, as the accounts module's gate checks them. */
export const PORTAL_ACCESS: AccessTable<Role, Capability> = {
  file: 'modules/portal/access.ts',
  routes: ROUTE_ACCESS,
  capabilityRoles: CAPABILITY_ROLES,
  what: WHAT,
  stepUp: STEP_UP_ROUTES,
};

/** The portal's people: a merchant's teammates, their roles, cookie and sessions. */
export const PORTAL_AUDIENCE: Audience<Role> = {
  name: 'portal',
  roles: ROLES,
  keeperRole: 'owner',
  defaultRole: 'owner',
  ofMerchant: true,
  sessionMaxMs: 12 * 3_600_000,
  sessionIdleMs: 2 * 3_600_000,
  secondFactor: 'merchant-setting',
  cookie: { name: 'paygate_portal', path: '/portal' },
  setupPath: '/portal/setup',
  actor: (email) => ({ kind: 'user', email }),
  issuer: (merchantName) => `Paygate (${merchantName ?? 'portal'})`,
  invitedTo: (merchantName) => `the Paygate merchant portal of ${merchantName ?? 'a merchant'}`,
};

/** The capabilities a role holds, for the web app (which hides what the role cannot use). */
export const capabilitiesOf = (role: Role): Capability[] => capabilitiesIn(PORTAL_ACCESS, role);
