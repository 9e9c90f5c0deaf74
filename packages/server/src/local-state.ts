import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';

/** Where a running server tells the operator command line how to reach it. */
export interface ServerInfo {
  readonly url: string;
  readonly pid: number;
  readonly environment: string;
  /** The instance's id, as its operator API answers name it (`Paygate-Server-Id`). */
  readonly serverId?: string;
}

const SERVER_FILE = 'server.json';
const TOKEN_FILE = 'admin.token';

/** Where the operator token comes from: `PAYGATE_ADMIN_TOKEN`, or the file in the data directory. */
export function adminTokenSource(config: Config): string {
  return config.adminToken ? 'PAYGATE_ADMIN_TOKEN' : join(config.dataDir, TOKEN_FILE);
}

/** The operator API token: `PAYGATE_ADMIN_TOKEN`, or one generated into the data directory (0600). */
export function adminToken(config: Config): string {
  if (config.adminToken) return config.adminToken;
  const file = join(config.dataDir, TOKEN_FILE);
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

export function writeServerInfo(config: Config, info: ServerInfo): void {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(config.dataDir, SERVER_FILE), `${JSON.stringify(info)}\n`, { mode: 0o600 });
}

export function readServerInfo(config: Config): ServerInfo | undefined {
  try {
    return JSON.parse(readFileSync(join(config.dataDir, SERVER_FILE), 'utf8')) as ServerInfo;
  } catch {
    return undefined;
  }
}
