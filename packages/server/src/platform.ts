import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { createServer } from 'node:net';
import { type Config, withPort } from './config.js';
import { openDatabase } from './db/db.js';
import { migrate } from './db/migrate.js';
import { adminToken } from './local-state.js';
import { createServices, type ServiceOptions, type Services } from './services.js';
import { startDispatcher } from './worker/dispatcher.js';
import { startSweeper } from './worker/sweeper.js';

/** A started platform: its server, its services, and how to stop it gracefully. */
export interface Platform {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Opens the database, applies migrations, ensures platform keys, builds the app, starts the
 * background workers and listens. Used by `main.ts` and by tests that want a real server.
 */
export async function startPlatform(
  requested: Config,
  options: ServiceOptions & { logger?: boolean; sweepIntervalMs?: number } = {},
): Promise<Platform> {
  // Port 0 means any free port: pick it now, so that the links the services build carry it.
  const config = requested.port === 0 ? withPort(requested, await freePort(requested.host)) : requested;
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  await migrate(db);
  const services = createServices(config, db, options);
  await services.platformKeys.ensure();
  const app = await buildApp(services, { adminToken: adminToken(config), logger: options.logger ?? true });
  const stops: (() => Promise<void>)[] = [];
  if (config.runWorkers) {
    stops.push(startSweeper(services, app.log, options.sweepIntervalMs));
    stops.push(startDispatcher(services.webhooks, app.log, { concurrency: config.webhookConcurrency }));
  }
  const address = await app.listen({ host: config.host, port: config.port });
  const url = address.replace('[::1]', '127.0.0.1');
  return {
    app,
    services,
    url,
    async close() {
      await app.close();
      for (const stop of stops) await stop();
      await db.close();
    },
  };
}

/** A port free on `host` right now (the listen that follows takes it, or fails loudly). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
