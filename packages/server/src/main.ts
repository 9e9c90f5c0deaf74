import { DirectoryInUseError } from '@paygate/dir-lock';
import { ConfigError, parseConfig } from './config.js';
import { MasterKeyError } from './crypto/master-key.js';
import { SchemaError } from './db/migrate.js';
import { databaseStartFailure } from './db/start-failure.js';
import { adminTokenSource, writeServerInfo } from './local-state.js';
import { startTracing } from './observability/tracing.js';
import { nodeEndOfLifeWarning } from './node-support.js';
import { startPlatform } from './platform.js';

/** `npm start`: parse config once, start, and stop gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const tracing = startTracing('paygate-api');
  const platform = await startPlatform(config);
  // Before anything announces the server: a supervisor that reads "paygate listening" and
  // stops it at once must reach this handler, not the default one that kills by the signal.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    platform.app.log.info({ signal }, 'shutting down');
    try {
      await platform.shutdown();
      await tracing.shutdown().catch(() => {});
      platform.app.log.info('stopped');
      process.exit(0);
    } catch (error) {
      platform.app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  writeServerInfo(config, {
    url: platform.url,
    pid: process.pid,
    environment: config.environment,
    serverId: platform.serverId,
  });
  const base = platform.services.config.publicUrl;
  const token = adminTokenSource(config);
  platform.app.log.info(
    {
      url: platform.url,
      environment: config.environment,
      database: config.databaseUrl ? 'postgres' : 'pglite',
      api: `${base}/api/v1`,
      portal: `${base}/portal`,
      docs: `${base}/docs`,
      operatorToken: token,
    },
    'paygate listening',
  );
  platform.app.log.info(
    `the merchant API is at ${base}/api/v1, the portal at ${base}/portal, the API reference at ${base}/docs; ` +
      `npx paygate takes the operator token from ${token}`,
  );
  if (config.environment === 'production' && config.databaseUrl === undefined) {
    // Said once, at start: the operator chose this (PAYGATE_EMBEDDED_PRODUCTION=true).
    platform.app.log.warn(
      { dataDir: config.dataDir },
      'production on the embedded database: one process, no replica or failover; take backups with npx paygate backup --out FILE (docs/operations.md, "The embedded database")',
    );
  }
  if (config.webhookExtraCa) {
    platform.app.log.info(
      { file: config.webhookExtraCa.file, certificates: config.webhookExtraCa.certificates.length },
      'webhook delivery also trusts the certificates in PAYGATE_WEBHOOK_EXTRA_CA',
    );
  }
  const endOfLife = nodeEndOfLifeWarning(process.version, new Date());
  if (endOfLife) platform.app.log.warn({ node: process.version }, endOfLife);
}

main().catch((error: unknown) => {
  const database = databaseStartFailure(error, process.env.DATABASE_URL || undefined);
  const oneLine =
    error instanceof ConfigError ||
    error instanceof SchemaError ||
    error instanceof DirectoryInUseError ||
    error instanceof MasterKeyError;
  if (database) console.error(`paygate: ${database}`);
  else console.error(oneLine ? `paygate: ${error.message}` : error);
  process.exit(1);
});
