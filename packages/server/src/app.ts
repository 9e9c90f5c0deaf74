import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { DomainError } from './errors.js';
import { errorHandler, success } from './http/errors.js';
import { clientErrorHandler, headerLimits } from './http/header-limits.js';
import { merchantApiScope } from './http/merchant-api.js';
import { ulid } from './ids.js';
import { adminRoutes } from './modules/admin/routes.js';
import { backofficeApiRoutes } from './modules/backoffice/routes.js';
import { balanceRoutes } from './modules/balances/routes.js';
import { cashierRoutes } from './modules/cashier/routes.js';
import { channelRoutes } from './modules/channels/routes.js';
import { docsRoutes } from './modules/reference/routes.js';
import { ledgerRoutes } from './modules/ledger/routes.js';
import { paymentRoutes } from './modules/payments/routes.js';
import { payoutRoutes } from './modules/payouts/routes.js';
import { portalApiRoutes } from './modules/portal/routes.js';
import { backofficeStaticRoutes, portalStaticRoutes } from './modules/portal/static.js';
import { feeRoutes } from './modules/fees/routes.js';
import { sandboxRoutes } from './modules/sandbox/routes.js';
import { eventRoutes } from './modules/webhooks/routes.js';
import { metricsRoutes } from './modules/metrics/routes.js';
import { publishedKeyRoutes } from './modules/platform-keys/routes.js';
import { observeHttp } from './observability/http.js';
import type { Db } from './db/db.js';
import type { Services } from './services.js';

export interface AppOptions {
  /** Bearer token of the operator API; without one the operator API is not mounted. */
  readonly adminToken?: string | undefined;
  /**
   * This instance's id (`srv_…`, new at every start), sent as `Paygate-Server-Id` on every
   * operator API answer and written to `server.json`: the command line tells by it that the
   * server it reached is not the one whose token it holds.
   */
  readonly serverId?: string | undefined;
  /** A pino destination or `false` to log nothing (tests). */
  readonly logger?: boolean | { level: string; stream?: NodeJS.WritableStream };
  /** The portal web app's build directory (default: packages/portal/dist). */
  readonly portalDir?: string;
  /** The back office web app's build directory (default: packages/portal/dist-backoffice). */
  readonly backofficeDir?: string;
  /** Where the instance is in its life: draining fails `/readyz`; closing ends each connection after its answer. */
  readonly lifecycle?: { isDraining(): boolean; isClosing(): boolean };
  /** Serves through this server (the platform binds its port before the app exists). */
  readonly serverFactory?: FastifyServerOptions['serverFactory'];
}

/** How long `/readyz` waits for the database (a balancer's health check times out soon after). */
const READY_CHECK_MS = 1_500;
/** How long one answer of the database check serves `/readyz` (balancers ask several times a second). */
export const READY_CACHE_MS = 1_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** What `/readyz` found the database to be; `detail` goes to the log only. */
type DatabaseState = { kind: 'writable' } | { kind: 'read-only' } | { kind: 'unreachable'; detail: string };

/**
 * Checks the database for `/readyz`: it must answer and take writes. A primary demoted by a
 * failover or switchover, a standby behind a misrouting balancer and a read-only session take
 * only reads, and an instance on one would fail every write. One check serves every caller for
 * READY_CACHE_MS.
 */
function databaseCheck(db: Db): () => Promise<DatabaseState> {
  let last: { at: number; state: Promise<DatabaseState> } | undefined;
  return () => {
    if (last === undefined || Date.now() - last.at >= READY_CACHE_MS) {
      last = {
        at: Date.now(),
        state: withTimeout(db.acceptsWrites(), READY_CHECK_MS).then(
          (writable): DatabaseState => ({ kind: writable ? 'writable' : 'read-only' }),
          (error: unknown): DatabaseState => ({ kind: 'unreachable', detail: (error as Error).message }),
        ),
      };
    }
    return last.state;
  };
}

const OPENAPI_PATH = join(import.meta.dirname, '../openapi.json');

/**
 * The committed document names a relative server (the address it was loaded from); with
 * PAYGATE_PUBLIC_URL it names that address instead, for readers of the document elsewhere.
 */
function withServer(document: string, publicUrl: string | undefined): string {
  if (publicUrl === undefined) return document;
  const parsed = JSON.parse(document) as Record<string, unknown>;
  return `${JSON.stringify({ ...parsed, servers: [{ url: publicUrl, description: 'This platform' }] }, null, 2)}\n`;
}

/**
 * The platform's HTTP server over already-built services: the merchant API under `/api/v1`
 * (authenticated), the operator API under `/admin/v1` (bearer token), health and the OpenAPI
 * document. `main.ts` only parses config, listens and handles signals.
 */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const logger =
    options.logger === false || options.logger === undefined
      ? false
      : {
          level: options.logger === true ? services.config.logLevel : options.logger.level,
          ...(typeof options.logger === 'object' && options.logger.stream ? { stream: options.logger.stream } : {}),
          // Never log query strings (they may carry identifiers) or signature material.
          serializers: {
            req: (req: { method?: string; url?: string; id?: string }) => ({
              method: req.method,
              path: (req.url ?? '').split('?')[0],
            }),
          },
          redact: ['req.headers.signature', 'req.headers["signature-input"]', 'req.headers.authorization'],
        };

  const app = Fastify({
    logger,
    genReqId: () => `req_${ulid(Date.now())}`,
    requestIdHeader: false,
    exposeHeadRoutes: false,
    return503OnClosing: true,
    clientErrorHandler,
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
  });
  app.setErrorHandler(errorHandler);
  // Unknown paths outside /api/v1 answer in the platform's shape too (the merchant API scope has its own).
  app.setNotFoundHandler(async () => {
    throw new DomainError('NOT_FOUND', 'no such path');
  });
  headerLimits(app);
  observeHttp(app, services.metrics);
  const lifecycle = options.lifecycle;
  // A callback hook (no promise per answer).
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('Request-Id', request.id);
    // While the instance closes, every answer ends its connection: the client's next request
    // opens a new one, which the balancer sends to an instance that stays.
    if (lifecycle?.isClosing()) reply.header('connection', 'close');
    done(null, payload);
  });

  app.get('/healthz', async () => success({ status: 'ok' }));
  const checkDatabase = databaseCheck(services.db);
  app.get('/readyz', async (request) => {
    if (lifecycle?.isDraining()) throw new DomainError('NOT_READY', 'the instance is draining');
    const database = await checkDatabase();
    if (database.kind === 'writable') return success({ status: 'ready', environment: services.config.environment });
    if (database.kind === 'read-only') {
      request.log.warn('not ready: the database takes only reads');
      throw new DomainError('NOT_READY', 'the database takes only reads');
    }
    request.log.warn({ err: { message: database.detail } }, 'not ready: the database does not answer');
    throw new DomainError('NOT_READY', 'the database does not answer');
  });
  const openapi = withServer(readFileSync(OPENAPI_PATH, 'utf8'), services.config.publicUrlGiven);
  app.get('/openapi.json', { exposeHeadRoute: true }, async (_request, reply) =>
    reply.type('application/json').send(openapi),
  );
  docsRoutes(app);
  publishedKeyRoutes(app, services);
  metricsRoutes(app, services);

  await app.register(
    async (api) =>
      merchantApiScope(api, services, (scope) => {
        paymentRoutes(scope, services);
        payoutRoutes(scope, services);
        balanceRoutes(scope, services);
        feeRoutes(scope, services);
        ledgerRoutes(scope, services);
        eventRoutes(scope, services);
        if (services.config.environment === 'sandbox') sandboxRoutes(scope, services);
      }),
    { prefix: '/api/v1' },
  );

  // Channel notifications: outside the merchant API's authentication (each channel signs its own).
  await app.register(async (channels) => channelRoutes(channels, services));

  // The merchant portal: its web app under /portal, its cookie-session API under /portal/api, and
  // the cashier page at each payment's cashierUrl (the sandbox's; in production only the payer's
  // code of a Pix channel's payment).
  portalStaticRoutes(app, options.portalDir);
  await app.register(async (portal) => portalApiRoutes(portal, services), { prefix: '/portal/api' });
  await app.register(async (cashier) => cashierRoutes(cashier, services));

  // The back office, for the platform's operators: its web app under /backoffice, its
  // cookie-session API under /backoffice/api (a portal session opens nothing there, nor a
  // back-office session anything in the portal).
  backofficeStaticRoutes(app, options.backofficeDir);
  await app.register(async (backoffice) => backofficeApiRoutes(backoffice, services), { prefix: '/backoffice/api' });

  if (options.adminToken) {
    const token = options.adminToken;
    const serverId = options.serverId;
    await app.register(async (admin) => adminRoutes(admin, services, token, serverId), { prefix: '/admin/v1' });
  }
  return app;
}
