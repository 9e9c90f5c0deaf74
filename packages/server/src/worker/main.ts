import { ConfigError, parseConfig } from '../config.js';
import { lockEmbedded, openDatabase } from '../db/db.js';
import { ensureSchema } from '../db/migrate.js';
import { traced } from '../observability/traced-db.js';
import { startTracing } from '../observability/tracing.js';
import { createServices } from '../services.js';
import pino from 'pino';
import { startDispatcher, workerId } from './dispatcher.js';
import { serveWorkerMetrics } from './metrics-server.js';
import { startSweeper } from './sweeper.js';
import { configuredChannels, startPoller } from '../modules/channels/polling.js';
import { startSepaChannels } from '../modules/channels/sepa-sftp/loop.js';

/**
 * `npx paygate worker`: the background work as its own process, against the same PostgreSQL as
 * the servers (any number of workers): the webhook dispatcher (each event claimed by one worker
 * at a time) and the sweeper (expiring payments, purging spent nonces; rows taken with SKIP
 * LOCKED, so workers share it). With `PAYGATE_WORKER_METRICS_PORT` it serves `/metrics` and
 * `/healthz` for Prometheus.
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseConfig(env);
  if (!config.databaseUrl) {
    // Say who owns the embedded database when someone does: that is the process to stop or to use.
    lockEmbedded(config, 'paygate worker')?.release();
    throw new ConfigError(
      'paygate worker needs DATABASE_URL: the embedded database belongs to the server process, which runs its own dispatcher',
    );
  }
  const log = pino({ level: config.logLevel });
  const tracing = startTracing('paygate-worker', env);
  const opened = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    retryWindowMs: config.databaseRetryMs,
    onRetry: (error, attempts) =>
      log.warn(
        { err: { message: (error as Error).message }, attempts },
        'database statement retried (lost connection or read-only)',
      ),
    onConnectionError: (error) =>
      log.warn({ err: { message: error.message } }, 'database connection lost; the pool replaces it'),
  });
  const db = traced(opened); // spans per statement (tracing on) and after-commit metrics
  await ensureSchema(db, {
    migrate: config.autoMigrate,
    waitMs: config.schemaWaitMs,
    onWait: (pending) => log.info({ pending }, 'waiting for `paygate migrate`'),
  });
  const services = createServices(config, db);
  // A worker signs webhooks: a master key that cannot open the platform keys stops it here, with
  // the same one line as the server, instead of failing every delivery.
  await services.platformKeys.verifyMasterKey();
  const worker = workerId();
  const concurrency = config.webhookConcurrency;
  const stopDispatcher = startDispatcher(services.webhooks, log, { concurrency, worker });
  const stopSweeper = startSweeper(services, log);
  const stopPoller = startPoller(services, log, { channel: configuredChannels(services) });
  const stopSepa = startSepaChannels(services, { log, metrics: services.metrics });
  const metricsServer =
    config.workerMetricsPort === undefined
      ? undefined
      : await serveWorkerMetrics(services.metrics, config.host, config.workerMetricsPort);
  const stop = async () => {
    await metricsServer?.close();
    await Promise.all([stopDispatcher(), stopSweeper(), stopPoller(), stopSepa()]);
  };
  // The handlers come before the announcement: whoever reads it may stop the worker at once.
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    log.info({ worker }, 'paygate worker stopping: finishing the deliveries in flight');
    // Deliveries still running at the deadline are not lost: their leases run out and another
    // worker claims them again (delivery is at least once; receivers deduplicate by eventId).
    const finished = await Promise.race([
      stop().then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), config.shutdownTimeoutMs).unref()),
    ]);
    if (!finished) log.warn({ worker }, 'shutdown timeout: deliveries still in flight are left to their leases');
    await db.close().catch(() => {});
    await tracing.shutdown().catch(() => {});
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
  log.info({ worker, concurrency, metricsPort: config.workerMetricsPort }, 'paygate worker started');
  if (config.webhookExtraCa) {
    log.info(
      { file: config.webhookExtraCa.file, certificates: config.webhookExtraCa.certificates.length },
      'webhook delivery also trusts the certificates in PAYGATE_WEBHOOK_EXTRA_CA',
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runWorker().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
