import { parseConfig } from '../config.js';
import { type Db, openDatabase } from '../db/db.js';

/**
 * The database of a direct-database command (`migrate`, `reconcile`): the configuration from
 * `env`, one connection. The embedded database is opened as `command`, so that while a server
 * owns its data directory the command is refused with one line naming that server's pid. The
 * caller closes it.
 */
export async function openCommandDatabase(env: NodeJS.ProcessEnv, command: string): Promise<Db> {
  const config = parseConfig(env);
  return openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    owner: command,
  });
}
