import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { httpUrl } from './http/url.js';
import { type ChannelSettings, loadChannelsFile } from './channel-settings.js';
import { DEFAULT_FEES, type FeeSchedule, feesJson } from './fees.js';
import { parseDuration } from './duration.js';

/** Where the platform runs: keys, access keys and data of one never work in the other. */
export type Environment = 'sandbox' | 'production';

/** The platform's configuration, parsed and validated once, then frozen and passed in. */
export interface Config {
  readonly environment: Environment;
  readonly host: string;
  readonly port: number;
  /** Base URL the platform is reached at (cashier links, portal). */
  readonly publicUrl: string;
  /**
   * PAYGATE_PUBLIC_URL when given: the server the served OpenAPI document names. Without it the
   * document names a relative server, the address it was loaded from.
   */
  readonly publicUrlGiven: string | undefined;
  /** Embedded database and local state (master key, admin token) live here. */
  readonly dataDir: string;
  /** A PostgreSQL URL; when absent the embedded PGlite database in `dataDir` is used. */
  readonly databaseUrl: string | undefined;
  /**
   * `PAYGATE_EMBEDDED_PRODUCTION`: production may run on the embedded database (one process, no
   * replica; backed up with `paygate backup`). Without it production needs `DATABASE_URL`.
   */
  readonly embeddedProduction: boolean;
  /** Connections each process keeps to PostgreSQL at most. */
  readonly databasePoolSize: number;
  /** Milliseconds to wait for a new PostgreSQL connection before failing. */
  readonly databaseConnectTimeoutMs: number;
  /** Milliseconds a statement may run before PostgreSQL cancels it (0: no limit). */
  readonly databaseStatementTimeoutMs: number;
  /** Milliseconds a statement that committed nothing is retried after a lost connection or on a standby (0: never). */
  readonly databaseRetryMs: number;
  /** Whether an instance applies missing migrations itself when it starts (otherwise it waits). */
  readonly autoMigrate: boolean;
  /** With `autoMigrate` off, how long an instance waits for `paygate migrate` before giving up. */
  readonly schemaWaitMs: number;
  /** On SIGTERM: how long `/readyz` fails while requests are still served, so a balancer moves away. */
  readonly shutdownDrainMs: number;
  /** On SIGTERM, after draining: how long in-flight requests and deliveries may take to finish. */
  readonly shutdownTimeoutMs: number;
  /** 32-byte key that encrypts platform private keys at rest; base64. */
  readonly masterKey: string | undefined;
  /** The master key being rotated away from (`PAYGATE_MASTER_KEY_PREVIOUS`): opens, never seals. */
  readonly masterKeyPrevious: string | undefined;
  /** Token for the operator API; generated into the data directory when absent. */
  readonly adminToken: string | undefined;
  /** Delays between webhook delivery attempts, in milliseconds. */
  readonly webhookRetrySchedule: readonly number[];
  /** Whether webhooks may go to loopback and private addresses. */
  readonly webhookAllowPrivate: boolean;
  /**
   * `PAYGATE_WEBHOOK_EXTRA_CA`: certificates (PEM) trusted for webhook receivers besides the
   * default ones, and the file they came from; none unless set.
   */
  readonly webhookExtraCa: { readonly file: string; readonly certificates: readonly string[] } | undefined;
  /** Deliveries each dispatcher process runs at once. */
  readonly webhookConcurrency: number;
  /** How long a PENDING payment waits for its payer, in milliseconds. */
  readonly paymentExpiryMs: number;
  /** A channel-routed order left PENDING or PROCESSING this long is queried at its channel (`PAYGATE_CHANNEL_POLL_AFTER`). */
  readonly channelPollAfterMs: number;
  /** The configured channels (`PAYGATE_CHANNELS`), validated at start-up; the built-in sandbox channel is not listed. */
  readonly channels: readonly ChannelSettings[];
  /** Requests per second each merchant may make (bursts up to twice that); 0 turns limiting off. */
  readonly rateLimitPerSecond: number;
  /** Whether to run the webhook dispatcher and sweepers inside the server process. */
  readonly runWorkers: boolean;
  /** `npx paygate worker` serves `/metrics` and `/healthz` on this port (on HOST) when set. */
  readonly workerMetricsPort: number | undefined;
  /** The rate table: pay-in fees per currency and method, payout fees per currency (`PAYGATE_FEES`). */
  readonly fees: FeeSchedule;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * The SMTP server portal invitations are sent through (`PAYGATE_SMTP_URL`, e.g.
   * `smtps://user:pass@mail.example:465`); without it the setup link only goes to the log.
   */
  readonly smtpUrl: string | undefined;
  /** The sender of those emails (`PAYGATE_SMTP_FROM`). */
  readonly smtpFrom: string;
}

/** Durations (`500ms`, `30s`, `5m`), shared with the channels file's settings. */
export { parseDuration };

/**
 * The default delivery schedule: quick retries first, then backing off to every few hours, about
 * three days in all (sum ≈ 73 h over 16 attempts).
 */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [
  '10s',
  '30s',
  '2m',
  '5m',
  '15m',
  '30m',
  '1h',
  '2h',
  '4h',
  '6h',
  '8h',
  '10h',
  '12h',
  '12h',
  '14h',
].map((d) => parseDuration(d) as number);

const durationList = z.string().transform((text, ctx) => {
  const parts = text.split(',').map((part) => parseDuration(part));
  if (parts.length === 0 || parts.some((ms) => ms === undefined || ms <= 0)) {
    ctx.addIssue({ code: 'custom', message: 'a comma-separated list of durations such as 1s,2s,5s' });
    return z.NEVER;
  }
  return parts as number[];
});

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: 'a duration such as 30m' });
    return z.NEVER;
  }
  return ms;
});

const durationOrZero = z.string().transform((text, ctx) => {
  const ms = text.trim() === '0' ? 0 : parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'a duration such as 5s, or 0 for none' });
    return z.NEVER;
  }
  return ms;
});

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const envSchema = z.object({
  PAYGATE_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  // The one URL rule (http/url.ts); the normalized URL is kept.
  PAYGATE_PUBLIC_URL: httpUrl({ httpsOnly: false, maxLength: 2048 }).optional(),
  PAYGATE_DATA_DIR: z.string().min(1).default('.paygate'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
    .optional(),
  PAYGATE_EMBEDDED_PRODUCTION: bool.default(false),
  PAYGATE_DATABASE_POOL: z.coerce.number().int().min(1).max(500).default(20),
  PAYGATE_DATABASE_CONNECT_TIMEOUT: duration.default(5_000),
  PAYGATE_DATABASE_STATEMENT_TIMEOUT: durationOrZero.default(30_000),
  PAYGATE_DATABASE_RETRY: durationOrZero.default(15_000),
  PAYGATE_AUTO_MIGRATE: bool.default(true),
  PAYGATE_SCHEMA_WAIT: duration.default(60_000),
  PAYGATE_SHUTDOWN_DRAIN: durationOrZero.default(5_000),
  PAYGATE_SHUTDOWN_TIMEOUT: duration.default(30_000),
  PAYGATE_MASTER_KEY: z.base64().optional(),
  PAYGATE_MASTER_KEY_FILE: z.string().optional(),
  PAYGATE_MASTER_KEY_PREVIOUS: z.base64().optional(),
  PAYGATE_ADMIN_TOKEN: z.string().min(24).optional(),
  PAYGATE_WEBHOOK_RETRY_SCHEDULE: durationList.optional(),
  PAYGATE_WEBHOOK_ALLOW_PRIVATE: bool.optional(),
  PAYGATE_WEBHOOK_EXTRA_CA: z.string().optional(),
  PAYGATE_PAYMENT_EXPIRY: duration.default(30 * 60_000),
  PAYGATE_CHANNEL_POLL_AFTER: duration.default(60_000),
  PAYGATE_CHANNELS: z.string().optional(),
  PAYGATE_WORKERS: bool.default(true),
  PAYGATE_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  PAYGATE_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(32),
  PAYGATE_FEES: feesJson.optional(),
  PAYGATE_RATE_LIMIT: z.coerce.number().int().min(0).default(500),
  PAYGATE_SMTP_URL: z.url({ protocol: /^smtps?$/, error: 'an smtp:// or smtps:// URL' }).optional(),
  PAYGATE_SMTP_FROM: z.string().min(3).max(254).default('Paygate <no-reply@localhost>'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/**
 * Every environment variable the server reads, in the order of the schema: the README's
 * configuration table lists each of them (test/config-table.test.ts holds the two together).
 */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));

/** Thrown when the environment does not describe a valid configuration. */
export class ConfigError extends Error {}

/**
 * The master key from `PAYGATE_MASTER_KEY_FILE`: base64 of 32 bytes in a file that only its owner
 * can read (like ssh's private keys, a key file that group or others can read is refused).
 */
function readMasterKeyFile(path: string, cwd: string): string {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  const refuse = (problem: string) =>
    new ConfigError(`invalid configuration: PAYGATE_MASTER_KEY_FILE ${file} ${problem}`);
  let mode: number;
  let text: string;
  try {
    mode = statSync(file).mode & 0o777;
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw refuse(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if ((mode & 0o077) !== 0) {
    throw refuse(`is readable by others (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 ${file}`);
  }
  if (!z.base64().safeParse(text).success || Buffer.from(text, 'base64').length !== 32) {
    throw refuse('must hold the base64 of 32 bytes (openssl rand -base64 32)');
  }
  return text;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The certificates of `PAYGATE_WEBHOOK_EXTRA_CA`: a PEM file of one or more certificates, each of
 * which must parse (a file with none, or with a broken one, stops the start).
 */
function readExtraCa(path: string, cwd: string): { file: string; certificates: string[] } {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  const refuse = (problem: string) =>
    new ConfigError(`invalid configuration: PAYGATE_WEBHOOK_EXTRA_CA ${file} ${problem}`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw refuse(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) throw refuse('holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  for (const certificate of certificates) {
    try {
      new X509Certificate(certificate);
    } catch {
      throw refuse('holds a certificate that does not parse');
    }
  }
  return { file, certificates: certificates.map((certificate) => `${certificate}\n`) };
}

/**
 * Parses configuration from environment variables (the names in decisions.md), with `overrides`
 * taking precedence. Relative paths resolve against `cwd`.
 */
export function parseConfig(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<Config> = {},
  cwd = process.cwd(),
): Config {
  const blankless = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(blankless);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  if (e.PAYGATE_MASTER_KEY !== undefined && e.PAYGATE_MASTER_KEY_FILE !== undefined) {
    throw new ConfigError('invalid configuration: set PAYGATE_MASTER_KEY or PAYGATE_MASTER_KEY_FILE, not both');
  }
  const masterKey =
    e.PAYGATE_MASTER_KEY_FILE === undefined ? e.PAYGATE_MASTER_KEY : readMasterKeyFile(e.PAYGATE_MASTER_KEY_FILE, cwd);
  if (e.PAYGATE_ENV === 'production' && masterKey === undefined && overrides.masterKey === undefined) {
    throw new ConfigError(
      'invalid configuration: PAYGATE_MASTER_KEY is required in production: set PAYGATE_MASTER_KEY_FILE to a file holding it (mode 0600), or PAYGATE_MASTER_KEY',
    );
  }
  let channels: readonly ChannelSettings[] = [];
  if (e.PAYGATE_CHANNELS !== undefined && overrides.channels === undefined) {
    try {
      channels = loadChannelsFile(e.PAYGATE_CHANNELS, cwd);
    } catch (error) {
      throw new ConfigError(`invalid configuration: ${(error as Error).message}`, { cause: error });
    }
  }
  const dataDir = isAbsolute(e.PAYGATE_DATA_DIR) ? e.PAYGATE_DATA_DIR : resolve(cwd, e.PAYGATE_DATA_DIR);
  const displayHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const config: Config = {
    environment: e.PAYGATE_ENV,
    host: e.HOST,
    port: e.PORT,
    publicUrl: (e.PAYGATE_PUBLIC_URL ?? `http://${displayHost}:${e.PORT}`).replace(/\/$/, ''),
    publicUrlGiven: e.PAYGATE_PUBLIC_URL?.replace(/\/$/, ''),
    dataDir,
    databaseUrl: e.DATABASE_URL,
    embeddedProduction: e.PAYGATE_EMBEDDED_PRODUCTION,
    databasePoolSize: e.PAYGATE_DATABASE_POOL,
    databaseConnectTimeoutMs: e.PAYGATE_DATABASE_CONNECT_TIMEOUT,
    databaseStatementTimeoutMs: e.PAYGATE_DATABASE_STATEMENT_TIMEOUT,
    databaseRetryMs: e.PAYGATE_DATABASE_RETRY,
    autoMigrate: e.PAYGATE_AUTO_MIGRATE,
    schemaWaitMs: e.PAYGATE_SCHEMA_WAIT,
    shutdownDrainMs: e.PAYGATE_SHUTDOWN_DRAIN,
    shutdownTimeoutMs: e.PAYGATE_SHUTDOWN_TIMEOUT,
    masterKey,
    masterKeyPrevious: e.PAYGATE_MASTER_KEY_PREVIOUS,
    adminToken: e.PAYGATE_ADMIN_TOKEN,
    webhookRetrySchedule: e.PAYGATE_WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_RETRY_SCHEDULE,
    webhookAllowPrivate: e.PAYGATE_WEBHOOK_ALLOW_PRIVATE ?? e.PAYGATE_ENV === 'sandbox',
    webhookExtraCa: e.PAYGATE_WEBHOOK_EXTRA_CA === undefined ? undefined : readExtraCa(e.PAYGATE_WEBHOOK_EXTRA_CA, cwd),
    paymentExpiryMs: e.PAYGATE_PAYMENT_EXPIRY,
    channelPollAfterMs: e.PAYGATE_CHANNEL_POLL_AFTER,
    channels,
    runWorkers: e.PAYGATE_WORKERS,
    workerMetricsPort: e.PAYGATE_WORKER_METRICS_PORT,
    webhookConcurrency: e.PAYGATE_WEBHOOK_CONCURRENCY,
    fees: e.PAYGATE_FEES ?? DEFAULT_FEES,
    rateLimitPerSecond: e.PAYGATE_RATE_LIMIT,
    logLevel: e.LOG_LEVEL,
    smtpUrl: e.PAYGATE_SMTP_URL,
    smtpFrom: e.PAYGATE_SMTP_FROM,
    ...overrides,
  };
  // The embedded database is one process with no replica: production runs on it only when the
  // operator says so (`memory://` is the tests' database, never a deployment's).
  if (
    config.environment === 'production' &&
    config.databaseUrl === undefined &&
    config.dataDir !== 'memory://' &&
    !config.embeddedProduction
  ) {
    throw new ConfigError(
      'invalid configuration: production needs DATABASE_URL (PostgreSQL); to run production on the embedded database (one process, no replica; back it up with paygate backup) set PAYGATE_EMBEDDED_PRODUCTION=true',
    );
  }
  return Object.freeze(config);
}

/**
 * The configuration with a concrete port in place of 0 ("any free port"), and the public URL
 * derived from it when it was derived from port 0, so that cashier and portal links point where
 * the server actually listens.
 */
export function withPort(config: Config, port: number): Config {
  const derived = config.publicUrl.endsWith(':0') ? `${config.publicUrl.slice(0, -2)}:${port}` : config.publicUrl;
  return Object.freeze({ ...config, port, publicUrl: derived });
}
