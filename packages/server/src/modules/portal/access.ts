/**
 * Who may do what in the portal: the roles, what each is allowed, and the one table naming what
 * every route of the portal API needs. The routes' hook (routes.ts) checks a request against it
 * before the handler runs, and a route missing from the table stops the server from starting.
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

/** What a session waiting for its sign-in's second factor may call: nothing else. */
export const BEFORE_SECOND_FACTOR: readonly PortalRoute[] = [
  'GET /session',
  'POST /session/logout',
  'POST /session/second-factor',
  'POST /session/second-factor/options',
];

/** What a person without a second factor may call when the merchant requires one: setting one up. */
export const WITHOUT_REQUIRED_SECOND_FACTOR: readonly PortalRoute[] = [
  ...BEFORE_SECOND_FACTOR,
  'GET /second-factor',
  'POST /second-factor/totp',
  'POST /second-factor/totp/confirm',
  'GET /passkeys',
  'POST /passkeys/options',
  'POST /passkeys',
];

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

/** The routes anyone may call, signed in or not. */
export const PUBLIC_ROUTES: readonly string[] = [
  'POST /session',
  'POST /setup',
  'POST /session/passkey/options',
  'POST /session/passkey',
];

export function allows(role: Role, capability: Capability): boolean {
  return CAPABILITY_ROLES[capability].includes(role);
}

/** The capabilities a role holds, for the web app (which hides what the role cannot use). */
export function capabilitiesOf(role: Role): Capability[] {
  return (Object.keys(CAPABILITY_ROLES) as Capability[]).filter((capability) => allows(role, capability));
}

/** The refusal's plain reason: which roles may, and what. */
export function refusalReason(role: Role, capability: Capability): string {
  const roles = CAPABILITY_ROLES[capability];
  const named =
    roles.length === 1 ? `the ${roles[0]} role` : `the ${roles.slice(0, -1).join(', ')} or ${roles.at(-1)} role`;
  return `you have the ${role} role: it takes ${named} to ${WHAT[capability]}`;
}
