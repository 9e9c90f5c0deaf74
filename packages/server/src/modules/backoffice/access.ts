/**
 * Who may do what in the back office (decisions.md, "Back office: the people who run the
 * platform"): the operators' roles, what each is allowed, and the one table naming what every
 * route of the back-office API needs. The accounts module's gate checks a request against it
 * before the handler runs, and a route missing from the table stops the server from starting.
 */
import type { AccessTable } from '../accounts/access.js';
import type { Audience } from '../accounts/audience.js';

export const OPERATOR_ROLES = ['admin', 'support', 'finance', 'auditor'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/**
 * What a route needs. `read`: any operator (orders, merchants, money, channels, events);
 * `self`: the operator's own account; the others are the roles' areas.
 */
export type OperatorCapability =
  'read' | 'self' | 'operators' | 'merchants' | 'platform-keys' | 'support' | 'money' | 'files' | 'audit' | 'documents';

/** Each capability and the roles that hold it (admins hold every one). */
export const OPERATOR_CAPABILITY_ROLES: Readonly<Record<OperatorCapability, readonly OperatorRole[]>> = {
  read: ['admin', 'support', 'finance', 'auditor'],
  self: ['admin', 'support', 'finance', 'auditor'],
  operators: ['admin'],
  merchants: ['admin'],
  'platform-keys': ['admin'],
  // Resend and replay webhook events, ask an order's channel again.
  support: ['admin', 'support'],
  // Propose, approve and reject balance adjustments and fee plans.
  money: ['admin', 'finance'],
  // Bank files' XML and reconciliation runs.
  files: ['admin', 'finance'],
  audit: ['admin', 'auditor'],
  // Payer and payee documents and account numbers shown whole (masked to the other roles).
  documents: ['admin', 'support', 'finance'],
};

const WHAT: Readonly<Record<OperatorCapability, string>> = {
  read: 'read',
  self: 'manage your own account',
  operators: 'manage operators',
  merchants: "manage merchants' lifecycle",
  'platform-keys': 'manage the platform keys',
  support: 'resend or replay webhook events and ask a channel again',
  money: 'propose or approve balance adjustments and fee plans',
  files: 'download bank files and run reconciliation',
  audit: 'read the audit trail',
  documents: 'see documents and account numbers whole',
};

/** What every route of the back-office API needs, by `METHOD /path` under /backoffice/api. */
export const OPERATOR_ROUTE_ACCESS = {
  // The operator's own account (modules/accounts/access.ts, SELF_ROUTES).
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
  // Operators.
  'GET /operators': 'operators',
  'POST /operators': 'operators',
  'POST /operators/role': 'operators',
  'POST /operators/remove': 'operators',
  // Orders across every merchant.
  'GET /orders': 'read',
  'GET /orders/export.csv': 'read',
  'GET /orders/:orderNo': 'read',
  'POST /orders/:orderNo/sync': 'support',
  // Merchants.
  'GET /merchants': 'read',
  'POST /merchants': 'merchants',
  'GET /merchants/:accessKey': 'read',
  'POST /merchants/:accessKey/disable': 'merchants',
  'POST /merchants/:accessKey/enable': 'merchants',
  'POST /merchants/:accessKey/invite': 'merchants',
  'GET /merchants/:accessKey/fees': 'read',
  // Fee plans and balance adjustments: proposed by one, approved by another.
  'GET /fee-changes': 'read',
  'POST /fee-changes': 'money',
  'POST /fee-changes/:id/approve': 'money',
  'POST /fee-changes/:id/reject': 'money',
  'GET /money': 'read',
  'GET /adjustments': 'read',
  'POST /adjustments': 'money',
  'POST /adjustments/:id/approve': 'money',
  'POST /adjustments/:id/reject': 'money',
  'POST /reconciliation': 'files',
  // Channels, their notifications and bank files.
  'GET /channels': 'read',
  'GET /channels/:name/notifications': 'read',
  'GET /channels/:name/files': 'read',
  'GET /channels/:name/files/:msgId/xml': 'files',
  'GET /channels/:name/received/:file/xml': 'files',
  'GET /channels/credits': 'read',
  'GET /channels/batch-bookings': 'read',
  // Webhook events across merchants.
  'GET /events': 'read',
  'POST /events/replay': 'support',
  'POST /events/:eventId/resend': 'support',
  // Platform keys.
  'GET /platform-keys': 'read',
  'POST /platform-keys/rotate': 'platform-keys',
  'POST /platform-keys/retire': 'platform-keys',
  // The audit trail.
  'GET /audit': 'audit',
  'GET /audit/export.csv': 'audit',
  'GET /audit/verify': 'audit',
} as const satisfies Readonly<Record<string, OperatorCapability>>;

export type OperatorRoute = keyof typeof OPERATOR_ROUTE_ACCESS;

/** Sensitive changes: the second factor is asked again when its last check is older than 5 minutes. */
export const OPERATOR_STEP_UP_ROUTES: readonly OperatorRoute[] = [
  'POST /operators',
  'POST /operators/role',
  'POST /operators/remove',
  'POST /merchants',
  'POST /merchants/:accessKey/disable',
  'POST /merchants/:accessKey/enable',
  'POST /merchants/:accessKey/invite',
  'POST /adjustments/:id/approve',
  'POST /fee-changes/:id/approve',
  'POST /platform-keys/rotate',
  'POST /platform-keys/retire',
  'POST /passkeys/:passkeyId/remove',
];

export const OPERATOR_ACCESS: AccessTable<OperatorRole, OperatorCapability> = {
  file: 'modules/backoffice/access.ts',
  routes: OPERATOR_ROUTE_ACCESS,
  capabilityRoles: OPERATOR_CAPABILITY_ROLES,
  what: WHAT,
  stepUp: OPERATOR_STEP_UP_ROUTES,
};

/** A back-office session ends this long after sign-in at the latest… */
export const OPERATOR_SESSION_MAX_MS = 8 * 3_600_000;
/** …or after this long without a request (the portal's: 2 hours). */
export const OPERATOR_SESSION_IDLE_MS = 30 * 60_000;

/** The platform's operators: their roles, cookie and sessions; a second factor always. */
export const OPERATOR_AUDIENCE: Audience<OperatorRole> = {
  name: 'backoffice',
  roles: OPERATOR_ROLES,
  keeperRole: 'admin',
  defaultRole: undefined,
  ofMerchant: false,
  sessionMaxMs: OPERATOR_SESSION_MAX_MS,
  sessionIdleMs: OPERATOR_SESSION_IDLE_MS,
  secondFactor: 'mandatory',
  cookie: { name: 'paygate_backoffice', path: '/backoffice' },
  setupPath: '/backoffice/setup',
  actor: (email) => ({ kind: 'operator', email }),
  issuer: () => 'Paygate back office',
  invitedTo: () => 'the Paygate back office',
};
