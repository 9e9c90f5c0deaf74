import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../errors.js';
import { success } from '../../http/errors.js';
import { strictJsonBodies } from '../../http/strict-json.js';
import { parseInput } from '../../validation.js';
import type { AuditContext } from '../audit/service.js';
import {
  type AccessTable,
  allows,
  BEFORE_SECOND_FACTOR,
  PUBLIC_ROUTES,
  refusalReason,
  WITHOUT_REQUIRED_SECOND_FACTOR,
} from './access.js';
import { cookieSpec } from './audience.js';
import { readCookie, sessionCookie } from './cookies.js';
import { accountErrors } from './errors.js';
import { STEP_UP_MS } from './second-factor.js';
import { type AccountSession, type Accounts, type ClientInfo, sameToken } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session of a request inside an audience's authenticated scope (portal or back office). */
    accountSession: AccountSession | null;
  }
  interface FastifyContextConfig {
    /** What a route of an audience's API needs (its access table), set when the route is added. */
    capability?: string;
    /** The route's `METHOD /path`, as the access table names it. */
    accountRoute?: string;
  }
}

/** The header state-changing requests carry the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/** One audience's door: its accounts, its route table, and how its API shows a session. */
export interface Door<R extends string, C extends string> {
  readonly accounts: Accounts<R>;
  readonly access: AccessTable<R, C>;
  readonly publicUrl: string;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** The session as the API answers it (sign-in, setup, `GET /session`). */
  readonly view: (session: AccountSession<R>) => unknown;
}

/**
 * Cross-site request refusal for every non-GET request, before its body is read: a browser
 * always sends `Origin` on such requests, and it must be this server's (the public URL's, or
 * the one the request was addressed to). Without `Origin`, `Sec-Fetch-Site` must not say
 * cross-site. Clients that send neither are not browsers, so not CSRF victims.
 */
function checkOrigin(request: FastifyRequest, publicUrl: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const allowed = [new URL(publicUrl).origin, `${request.protocol}://${request.headers.host ?? ''}`];
    if (!allowed.includes(origin)) throw new DomainError('CSRF_REJECTED', 'cross-origin request refused');
    return;
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new DomainError('CSRF_REJECTED', 'cross-site request refused');
  }
}

/** The authentication failure of a cookie API: unlike the merchant API's, it says what to do. */
const signInFirst = () => new DomainError('UNAUTHORIZED', 'sign in first');

/** The session of a request inside an authenticated scope. */
export function sessionOf(request: FastifyRequest): AccountSession {
  if (!request.accountSession) throw signInFirst();
  return request.accountSession;
}

/** What a request tells about its client, for sessions and the audit trail. */
export function clientOf(request: FastifyRequest): ClientInfo {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: agent?.slice(0, 512), requestId: request.id };
}

/** The `METHOD /path` of a route under an API's prefix, as an access table names it. */
function routeKey(method: string, url: string, prefix: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${url.slice(prefix.length) || '/'}`;
}

const emptyBody = z.object({}).strict();
const sessionParam = z.object({ sessionId: z.string().max(20) });
const passkeyParam = z.object({ passkeyId: z.string().max(20) });

/**
 * An audience's cookie API: strict JSON bodies, no caching, the origin check on writes, the
 * public sign-in routes (password, setup link, passkey), and `authenticated`, the scope of every
 * other route, each checked against the access table before it runs (see `gate`), with the
 * person's own account routes (SELF_ROUTES) already in it.
 */
export async function accountApi<R extends string, C extends string>(
  api: FastifyInstance,
  door: Door<R, C>,
  authenticated: (auth: FastifyInstance, actorOf: (request: FastifyRequest) => AuditContext) => void,
): Promise<void> {
  const { accounts, publicUrl } = door;
  const cookie = cookieSpec(accounts.audience, publicUrl);
  const setSession = (reply: FastifyReply, token: string, session: AccountSession<R>) =>
    reply.header(
      'set-cookie',
      sessionCookie(cookie.name, token, { ...cookie, maxAge: (session.expiresAt - door.now()) / 1000 }),
    );
  const clearSession = (reply: FastifyReply) =>
    reply.header('set-cookie', sessionCookie(cookie.name, '', { ...cookie, maxAge: 0 }));
  const actorOf = (request: FastifyRequest): AuditContext =>
    accounts.contextOf(sessionOf(request).email, clientOf(request));

  api.decorateRequest('accountSession', null);
  strictJsonBodies(api);
  api.setNotFoundHandler(async () => {
    throw new DomainError('NOT_FOUND', 'no such endpoint');
  });
  api.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (request.method !== 'GET' && request.method !== 'HEAD') checkOrigin(request, publicUrl);
  });

  // Public: sign-in, and the invitation's password setup, which signs the person in as well.
  api.post('/session', async (request, reply) => {
    const { token, session } = await accounts.signIn(request.body, clientOf(request));
    setSession(reply, token, session);
    return success(door.view(session));
  });
  api.post('/setup', async (request, reply) => {
    const { token, session } = await accounts.acceptInvitation(request.body, clientOf(request));
    setSession(reply, token, session);
    return success(door.view(session));
  });
  // A sign-in with a passkey alone (WebAuthn, a discoverable credential chosen in the browser).
  api.post('/session/passkey/options', async (request) => {
    parseInput(emptyBody, request.body);
    return success(await accounts.passkeyAuthenticationOptions());
  });
  api.post('/session/passkey', async (request, reply) => {
    const { token, session } = await accounts.signInWithPasskey(request.body, clientOf(request));
    setSession(reply, token, session);
    return success(door.view(session));
  });

  await api.register(async (auth) => {
    gate(auth, door, cookie.name, clearSession);
    selfRoutes(auth, door, actorOf, clearSession);
    authenticated(auth, actorOf);
  });
}

/**
 * Every route of the authenticated scope says what it needs, in the access table alone: a route
 * missing from it stops the server from starting; a request is checked before its body is read.
 */
function gate<R extends string, C extends string>(
  auth: FastifyInstance,
  door: Door<R, C>,
  cookieName: string,
  clearSession: (reply: FastifyReply) => unknown,
): void {
  const { access, accounts } = door;
  auth.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const key = routeKey(method, route.url, route.prefix);
      const capability = access.routes[key];
      if (capability === undefined) {
        if (PUBLIC_ROUTES.includes(key)) throw new Error(`${key} is public: register it outside the session scope`);
        throw new Error(`${accounts.audience.name} route ${key} has no entry in its route table (${access.file})`);
      }
      route.config = { ...route.config, capability, accountRoute: key };
    }
  });
  auth.addHook('onRequest', async (request, reply) => {
    const token = readCookie(request.headers.cookie, cookieName);
    const session = token ? await accounts.session(token) : undefined;
    if (!session) {
      if (token) clearSession(reply);
      throw signInFirst();
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const presented = request.headers[CSRF_HEADER];
      if (typeof presented !== 'string' || !sameToken(presented, session.csrfToken)) {
        throw new DomainError('CSRF_REJECTED', `state-changing requests need the session's ${CSRF_HEADER} header`);
      }
    }
    request.accountSession = session;
    const { capability, accountRoute } = request.routeOptions.config;
    if (capability === undefined || accountRoute === undefined) throw new DomainError('NOT_FOUND', 'no such endpoint');
    const factor = session.secondFactor;
    if (factor.pending && !BEFORE_SECOND_FACTOR.includes(accountRoute)) {
      throw new DomainError(
        'SECOND_FACTOR_REQUIRED',
        'enter the code of your authenticator app (or a recovery code) first',
      );
    }
    if (factor.required && !factor.enabled && !WITHOUT_REQUIRED_SECOND_FACTOR.includes(accountRoute)) {
      throw new DomainError(
        'SECOND_FACTOR_REQUIRED',
        accounts.audience.secondFactor === 'mandatory'
          ? 'an operator needs a second factor: set up an authenticator app or a passkey first'
          : 'your merchant requires a second factor: set up an authenticator app first',
      );
    }
    if (!allows(access, session.role as R, capability as C)) {
      throw new DomainError('FORBIDDEN', refusalReason(access, session.role as R, capability as C));
    }
    if (
      factor.enabled &&
      access.stepUp.includes(accountRoute) &&
      (factor.checkedAt === null || door.now() - factor.checkedAt > STEP_UP_MS)
    ) {
      throw new DomainError('STEP_UP_REQUIRED', accountErrors.STEP_UP_REQUIRED.message);
    }
  });
}

/** The person's own account: the session, their sessions, password, second factor and passkeys. */
function selfRoutes<R extends string, C extends string>(
  auth: FastifyInstance,
  door: Door<R, C>,
  actorOf: (request: FastifyRequest) => AuditContext,
  clearSession: (reply: FastifyReply) => unknown,
): void {
  const { accounts } = door;
  const mine = (request: FastifyRequest) => sessionOf(request) as AccountSession<R>;

  auth.get('/session', async (request) => success(door.view(mine(request))));
  auth.post('/session/logout', async (request, reply) => {
    await accounts.signOut(mine(request), actorOf(request));
    clearSession(reply);
    return success({ signedOut: true });
  });

  auth.get('/sessions', async (request) => success(await accounts.sessions(mine(request))));
  auth.post('/sessions/:sessionId/end', async (request) => {
    const { sessionId } = parseInput(sessionParam, request.params);
    parseInput(emptyBody, request.body);
    await accounts.endSession(mine(request), sessionId, actorOf(request));
    return success(await accounts.sessions(mine(request)));
  });
  auth.post('/password', async (request) =>
    success(await accounts.changePassword(mine(request), request.body, actorOf(request))),
  );

  // The second factor: the sign-in's code (and step-up's), setting up TOTP, removing it.
  auth.post('/session/second-factor', async (request) => {
    await accounts.checkSecondFactor(mine(request), request.body, clientOf(request));
    return success({ checked: true });
  });
  auth.post('/session/second-factor/options', async (request) => {
    parseInput(emptyBody, request.body);
    return success(await accounts.passkeyAuthenticationOptions(mine(request)));
  });
  auth.get('/second-factor', async (request) => success(await accounts.secondFactorStatus(mine(request))));
  auth.get('/passkeys', async (request) => success(await accounts.passkeys(mine(request))));
  auth.post('/passkeys/options', async (request) => {
    parseInput(emptyBody, request.body);
    return success(await accounts.passkeyRegistrationOptions(mine(request)));
  });
  auth.post('/passkeys', async (request) =>
    success(await accounts.registerPasskey(mine(request), request.body, clientOf(request))),
  );
  auth.post('/passkeys/:passkeyId/remove', async (request) => {
    const { passkeyId } = parseInput(passkeyParam, request.params);
    return success(await accounts.removePasskey(mine(request), passkeyId, clientOf(request)));
  });
  auth.post('/second-factor/totp', async (request) => {
    parseInput(emptyBody, request.body);
    return success(await accounts.startTotp(mine(request), actorOf(request)));
  });
  auth.post('/second-factor/totp/confirm', async (request) =>
    success(await accounts.confirmTotp(mine(request), request.body, clientOf(request))),
  );
  auth.post('/second-factor/remove', async (request) => {
    await accounts.removeSecondFactor(mine(request), request.body, clientOf(request));
    return success({ removed: true });
  });
}
