import { parseConfig } from '../config.js';
import { openDatabase } from '../db/db.js';
import { migrate } from '../db/migrate.js';
import { createServices } from '../services.js';
import pino from 'pino';
import { startDispatcher, workerId } from './dispatcher.js';

/**
 * `npx paygate worker`: the webhook dispatcher as its own process, against the same PostgreSQL
 * as the servers (any number of workers; each event is claimed by one at a time).
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseConfig(env);
  if (!config.databaseUrl) {
    throw new Error(
      'paygate worker needs DATABASE_URL: the embedded database belongs to the server process, which runs its own dispatcher',
    );
  }
  const log = pino({ level: config.logLevel });
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  await migrate(db);
  const services = createServices(config, db);
  const worker = workerId();
  const concurrency = config.webhookConcurrency;
  const stop = startDispatcher(services.webhooks, log, { concurrency, worker });
  log.info({ worker, concurrency }, 'paygate worker started');
  const shutdown = async () => {
    log.info({ worker }, 'paygate worker stopping');
    await stop();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runWorker().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
