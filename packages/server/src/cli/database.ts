import { parseConfig } from '../config.js';
import { type Db, openDatabase } from '../db/db.js';

/**
 * The database of a direct-database command (`migrate`, `reconcile`): the configuration from
 * `env`, one connection. The caller closes it.
 */
export async function openCommandDatabase(env: NodeJS.ProcessEnv): Promise<Db> {
  const config = parseConfig(env);
  return openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
}
