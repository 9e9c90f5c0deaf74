import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { type AppOptions, buildApp } from './app.js';
import { type Config, withPort } from './config.js';
import { lockEmbedded, openDatabase } from './db/db.js';
import { writeError } from './http/errors.js';
import { traced } from './observability/traced-db.js';
import { ensureSchema } from './db/migrate.js';
import { adminToken } from './local-state.js';
import { createServices, type ServiceOptions, type Services } from './services.js';
import { startDispatcher } from './worker/dispatcher.js';
import { startSweeper } from './worker/sweeper.js';
import { configuredChannels, startPoller } from './modules/channels/polling.js';
import { startChannels } from './modules/channels/prepare.js';
import { startSepaChannels } from './modules/channels/sepa-sftp/loop.js';

/** A started platform: its server, its services, and how to stop it gracefully. */
export interface Platform {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly url: string;
  /** This instance's id (`srv_…`, new at every start): `Paygate-Server-Id` of the operator API. */
  readonly serverId: string;
  /** True from the start of a shutdown: `/readyz` answers 503 so that balancers move away. */
  readonly draining: boolean;
  /**
   * Stops the way a load balancer needs it to: `/readyz` fails at once while requests are still
   * served for `drainMs`; then the port closes, requests in flight finish (each answer carrying
   * `Connection: close`) and the workers finish their deliveries, all within `timeoutMs`; then the
   * database closes. Defaults come from the configuration.
   */
  shutdown(options?: { drainMs?: number; timeoutMs?: number }): Promise<void>;
  /** Stops at once (no drain); what tests use. */
  close(): Promise<void>;
}

/** The options of {@link startPlatform} beyond the services' own. */
export interface PlatformOptions extends ServiceOptions {
  readonly logger?: AppOptions['logger'];
  readonly sweepIntervalMs?: number;
  /** The embedded database only: start from this dump instead of an empty database (tests). */
  readonly loadDataDir?: Blob;
}

/**
 * Binds the port, opens the database, makes sure the schema is the one this build needs, ensures
 * platform keys, builds the app, starts the background workers and starts answering. Used by
 * `main.ts` and by tests that want a real server.
 */
export async function startPlatform(requested: Config, options: PlatformOptions = {}): Promise<Platform> {
  // The embedded database's directory has one owner: a second platform (or a command opening the
  // database) is refused before it binds a port or reads a file there.
  const lock = lockEmbedded(requested, 'paygate server');
  // The port is bound first, in one step, so that port 0 ("any free port") is decided by the
  // kernel and the links the services build carry the port actually held. Until the app is
  // ready, anything that connects is told so.
  let handle = (_request: IncomingMessage, response: ServerResponse) => {
    writeError(response, 'NOT_READY', { headers: { connection: 'close' }, retryAfterSeconds: 1 });
  };
  const server = createServer((request, response) => handle(request, response));
  try {
    await listen(server, requested.host, requested.port);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const config = requested.port === 0 ? withPort(requested, (server.address() as AddressInfo).port) : requested;
  const serverId = `srv_${randomBytes(8).toString('hex')}`;

  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let app: FastifyInstance | undefined;
  try {
    // Until the app's logger exists, connection errors are reported through this one.
    const logger: { current: Pick<FastifyBaseLogger, 'warn'> } = { current: console };
    db = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      lock,
      retryWindowMs: config.databaseRetryMs,
      onRetry: (error, attempts) =>
        logger.current.warn(
          { err: { message: (error as Error).message }, attempts },
          'database statement retried (lost connection or read-only)',
        ),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      onConnectionError: (error) =>
        logger.current.warn({ err: { message: error.message } }, 'database connection lost; the pool replaces it'),
    });
    db = traced(db); // spans per statement (tracing on) and after-commit metrics
    await ensureSchema(db, { migrate: config.autoMigrate, waitMs: config.schemaWaitMs });
    const services = createServices(config, db, options);
    // A key the platform makes for itself is the audit trail's `system` actor's doing.
    await services.platformKeys.ensure((tx, { keyId, kind }) =>
      services.audit.record(
        tx,
        { actor: { kind: 'system' } },
        { action: 'platform-key.created', merchant: null, object: keyId, detail: { kind } },
      ),
    );
    let draining = false;
    let closing = false;
    app = await buildApp(services, {
      adminToken: adminToken(config),
      serverId,
      logger: options.logger ?? true,
      lifecycle: { isDraining: () => draining, isClosing: () => closing },
      serverFactory: (fastifyHandler) => {
        handle = fastifyHandler;
        return server;
      },
    });
    logger.current = app.log;
    await app.ready();

    const stops: (() => Promise<void>)[] = [startChannels(services.channels, app.log)];
    if (config.runWorkers) {
      stops.push(startSweeper(services, app.log, options.sweepIntervalMs));
      stops.push(startPoller(services, app.log, { channel: configuredChannels(services) }));
      stops.push(startSepaChannels(services, { log: app.log, metrics: services.metrics }));
      stops.push(startDispatcher(services.webhooks, app.log, { concurrency: config.webhookConcurrency }));
    }
    const started = app;
    const opened = db;
    let stopped: Promise<void> | undefined;
    const shutdown = (limits: { drainMs?: number; timeoutMs?: number } = {}) => {
      stopped ??= (async () => {
        const drainMs = limits.drainMs ?? config.shutdownDrainMs;
        const timeoutMs = limits.timeoutMs ?? config.shutdownTimeoutMs;
        draining = true;
        if (drainMs > 0) {
          started.log.info({ drainMs }, 'draining: /readyz now fails, requests are still served');
          await delay(drainMs);
        }
        const deadline = Date.now() + timeoutMs;
        closing = true;
        await closeServer(server, started, deadline);
        await started.close();
        await bounded(Promise.all(stops.map((stop) => stop())), deadline - Date.now());
        await opened.close();
      })();
      return stopped;
    };
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return {
      app,
      services,
      url: `http://${host === '[::1]' ? '127.0.0.1' : host}:${address.port}`,
      serverId,
      get draining() {
        return draining;
      },
      shutdown,
      close: () => shutdown({ drainMs: 0 }),
    };
  } catch (error) {
    server.close();
    server.closeAllConnections();
    await app?.close().catch(() => {});
    await db?.close().catch(() => {});
    lock?.release();
    throw error;
  }
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Stops accepting connections, lets requests in flight finish (their answers close the
 * connection, since the app marks them while closing) and closes keep-alive connections as soon
 * as they are idle; at the deadline whatever is left is cut.
 */
async function closeServer(server: Server, app: FastifyInstance, deadline: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const finished = await bounded(closed, deadline - Date.now());
  clearInterval(sweep);
  if (!finished) {
    app.log.warn('shutdown timeout: closing the connections still open');
    server.closeAllConnections();
    await closed;
  }
}

/** Waits for `work` at most `ms`; true when it finished in time. */
async function bounded(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([work.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
