import { resolve } from 'node:path';
import { ConfigError } from '@paygate/simulator-kit';

export { ConfigError };

/** The simulator's settings, parsed once from the environment and frozen. */
export interface SimulatorConfig {
  readonly host: string;
  readonly port: number;
  readonly secret: string;
  readonly dataDir: string;
  /** Base of the payer page links; defaults to http://HOST:PORT. */
  readonly publicUrl?: string;
  readonly autoCompleteMs: number;
  readonly chargeTtlMs: number;
  readonly feeBps: number;
  readonly tickMs: number;
  readonly batch: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly notifyTimeoutMs: number;
  readonly logLevel: string;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be a whole number${min > 0 ? ` of at least ${min}` : ''}, got "${raw}"`);
  }
  return Number(raw);
}

export function parseConfig(env: NodeJS.ProcessEnv): SimulatorConfig {
  const secret = env.PSP_SECRET;
  if (secret === undefined || secret === '') {
    throw new ConfigError(
      'PSP_SECRET is required (the secret shared with the platform channel that uses this simulator)',
    );
  }
  const port = integer(env, 'PSP_PORT', 9100);
  if (port > 65_535) throw new ConfigError(`PSP_PORT must be a port number, got "${port}"`);
  const publicUrl = env.PSP_PUBLIC_URL?.replace(/\/+$/, '');
  if (publicUrl !== undefined && publicUrl !== '' && !/^https?:\/\/[^/]+/.test(publicUrl)) {
    throw new ConfigError(`PSP_PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
  }
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    port,
    secret,
    dataDir: resolve(env.PSP_DATA_DIR || '.paygate-psp'),
    ...(publicUrl ? { publicUrl } : {}),
    autoCompleteMs: integer(env, 'PSP_AUTO_COMPLETE', 0),
    chargeTtlMs: integer(env, 'PSP_CHARGE_TTL', 86_400_000, 1),
    feeBps: integer(env, 'PSP_FEE_BPS', 0),
    tickMs: integer(env, 'PSP_TICK_MS', 250, 10),
    batch: integer(env, 'PSP_NOTIFY_BATCH', 20, 1),
    retryBaseMs: integer(env, 'PSP_RETRY_BASE_MS', 1_000, 1),
    retryMaxMs: integer(env, 'PSP_RETRY_MAX_MS', 600_000, 1),
    notifyTimeoutMs: integer(env, 'PSP_NOTIFY_TIMEOUT_MS', 5_000, 1),
    logLevel: env.LOG_LEVEL || 'info',
  });
}
