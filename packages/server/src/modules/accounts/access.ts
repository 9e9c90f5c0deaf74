/**
 * What an audience's door checks before a route runs: the one table naming what every route of
 * its API needs, the roles holding each capability, and the routes a session may call before its
 * second factor. Each audience declares its own (modules/portal/access.ts,
 * modules/backoffice/access.ts); the account routes every audience shares are declared here once.
 */

/** An audience's route table and roles. `R`: its roles; `C`: its capabilities (`self` among them). */
export interface AccessTable<R extends string, C extends string> {
  /** Where the table is declared, for the start-up error naming a route missing from it. */
  readonly file: string;
  /** What every route of the API needs, by `METHOD /path` under the API's prefix. */
  readonly routes: Readonly<Record<string, C>>;
  /** Each capability and the roles that hold it. */
  readonly capabilityRoles: Readonly<Record<C, readonly R[]>>;
  /** How a refusal names a capability: "… takes the admin role to <what>". */
  readonly what: Readonly<Record<C, string>>;
  /** Sensitive changes: the second factor is asked again when its last check is older than STEP_UP_MS. */
  readonly stepUp: readonly string[];
}

/**
 * The routes of every audience's own account, each needing `self` (any role): the session, the
 * person's sessions and password, the second factor and passkeys.
 */
export const SELF_ROUTES = [
  'GET /session',
  'POST /session/logout',
  'GET /sessions',
  'POST /sessions/:sessionId/end',
  'POST /password',
  'POST /session/second-factor',
  'POST /session/second-factor/options',
  'GET /passkeys',
  'POST /passkeys/options',
  'POST /passkeys',
  'POST /passkeys/:passkeyId/remove',
  'GET /second-factor',
  'POST /second-factor/totp',
  'POST /second-factor/totp/confirm',
  'POST /second-factor/remove',
] as const;

/** What a session waiting for its sign-in's second factor may call: nothing else. */
export const BEFORE_SECOND_FACTOR: readonly string[] = [
  'GET /session',
  'POST /session/logout',
  'POST /session/second-factor',
  'POST /session/second-factor/options',
];

/** What a person without a second factor may call where one is required: setting one up. */
export const WITHOUT_REQUIRED_SECOND_FACTOR: readonly string[] = [
  ...BEFORE_SECOND_FACTOR,
  'GET /second-factor',
  'POST /second-factor/totp',
  'POST /second-factor/totp/confirm',
  'GET /passkeys',
  'POST /passkeys/options',
  'POST /passkeys',
];

/** The routes anyone may call, signed in or not: sign-in, password setup, and a passkey sign-in. */
export const PUBLIC_ROUTES: readonly string[] = [
  'POST /session',
  'POST /setup',
  'POST /session/passkey/options',
  'POST /session/passkey',
];

export function allows<R extends string, C extends string>(table: AccessTable<R, C>, role: R, capability: C): boolean {
  return table.capabilityRoles[capability].includes(role);
}

/** The capabilities a role holds, for the web app (which hides what the role cannot use). */
export function capabilitiesOf<R extends string, C extends string>(table: AccessTable<R, C>, role: R): C[] {
  return (Object.keys(table.capabilityRoles) as C[]).filter((capability) => allows(table, role, capability));
}

/** The refusal's plain reason: which roles may, and what. */
export function refusalReason<R extends string, C extends string>(
  table: AccessTable<R, C>,
  role: R,
  capability: C,
): string {
  const roles = table.capabilityRoles[capability];
  const named =
    roles.length === 1 ? `the ${roles[0]} role` : `the ${roles.slice(0, -1).join(', ')} or ${roles.at(-1)} role`;
  return `you have the ${role} role: it takes ${named} to ${table.what[capability]}`;
}
