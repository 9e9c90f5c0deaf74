import { resolve } from 'node:path';
import { ConfigError, envInteger as integer, envPort, envText as text } from '@paygate/simulator-kit';

export { ConfigError };

/** The simulator's settings, parsed once from the environment and frozen. */
export interface SimulatorConfig {
  readonly host: string;
  /** The API Pix and the token endpoint: HTTPS with client certificates only. */
  readonly port: number;
  /** The test controls: plain HTTP JSON POSTs, on their own port so they work while the API is "down". */
  readonly controlPort: number;
  readonly dataDir: string;
  /** Access token lifetime in seconds. */
  readonly tokenTtlS: number;
  /** The receiving account's name and city in the BR Codes (at most 25 and 15 characters). */
  readonly merchantName: string;
  readonly merchantCity: string;
  readonly tickMs: number;
  readonly batch: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly notifyTimeoutMs: number;
  readonly logLevel: string;
}

export function parseConfig(env: NodeJS.ProcessEnv): SimulatorConfig {
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    port: envPort(env, 'PIX_PORT', 9200),
    controlPort: envPort(env, 'PIX_CONTROL_PORT', 9201),
    dataDir: resolve(env.PIX_DATA_DIR || '.paygate-pix'),
    tokenTtlS: integer(env, 'PIX_TOKEN_TTL', 3_600, 1),
    merchantName: text(env, 'PIX_MERCHANT_NAME', 'PAYGATE SANDBOX', 25),
    merchantCity: text(env, 'PIX_MERCHANT_CITY', 'SAO PAULO', 15),
    tickMs: integer(env, 'PIX_TICK_MS', 250, 10),
    batch: integer(env, 'PIX_NOTIFY_BATCH', 20, 1),
    retryBaseMs: integer(env, 'PIX_RETRY_BASE_MS', 1_000, 1),
    retryMaxMs: integer(env, 'PIX_RETRY_MAX_MS', 600_000, 1),
    notifyTimeoutMs: integer(env, 'PIX_NOTIFY_TIMEOUT_MS', 5_000, 1),
    logLevel: env.LOG_LEVEL || 'info',
  });
}
