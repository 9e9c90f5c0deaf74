import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isBic, normalizeIban } from '@paygate/iso20022';
import { ConfigError, envDuration, envInteger, envPort, envText } from '@paygate/simulator-kit';
import { type CustomerSettings, REPORTS, STATUS_REPORTS } from './model.js';

export { ConfigError };

/** The account the customer (the platform) pays out from: the `debtor` of its `pain.001` files. */
export interface Account {
  readonly name: string;
  readonly iban: string;
  readonly bic: string;
}

/** The bank's settings, parsed once from the environment and frozen. */
export interface BankConfig {
  readonly host: string;
  /** The SFTP server (SSH, public-key authentication only). */
  readonly sftpPort: number;
  /** The test controls: plain HTTP JSON. */
  readonly controlPort: number;
  readonly dataDir: string;
  /** The platform's OpenSSH public key file: the one key allowed in. */
  readonly authorizedKeyFile: string;
  /** The private key file shown in the channel snippet (the platform's, matching the authorized key), if known. */
  readonly privateKeyFile?: string;
  /** The customer's SSH user name. */
  readonly username: string;
  /** The customer's account (its IBAN and BIC go into the snippet as `debtor`). */
  readonly account: Account;
  /** How long after a file is taken its transfers are booked. */
  readonly bookAfterMs: number;
  /** How often the bank looks for uploaded files and due bookings. */
  readonly tickMs: number;
  /** The channel's `batchEvery` and `pollEvery` in the snippet. */
  readonly batchEvery: string;
  readonly pollEvery: string;
  /** An SFTP session idle this long (no request) is ended. */
  readonly idleTimeoutMs: number;
  /** What the customer has the bank send at first start (the control changes it later). */
  readonly customer: CustomerSettings;
  /** The length of the bank's day: a statement (camt.053) is written at the end of each. */
  readonly dayMs: number;
  /** The account's balance before its first statement, in cents. */
  readonly openingBalanceCents: number;
  readonly logLevel: string;
}

/** A test IBAN (valid length and mod-97 check) and a test BIC (location code ending in 0) of no real bank. */
export const DEFAULT_ACCOUNT: Account = Object.freeze({
  name: 'Paygate Payouts',
  iban: 'DE75512108001245126199',
  bic: 'PGBKDEF0XXX',
});

const DURATION = /^[0-9]+(ms|s|m|h)$/;

export function parseConfig(env: NodeJS.ProcessEnv): BankConfig {
  const authorizedKeyFile = env.BANK_AUTHORIZED_KEY;
  if (authorizedKeyFile === undefined || authorizedKeyFile === '') {
    throw new ConfigError(
      "BANK_AUTHORIZED_KEY is required: the platform's OpenSSH public key file (e.g. ~/.ssh/paygate_bank.pub), the one key allowed to log in",
    );
  }
  const iban = env.BANK_ACCOUNT_IBAN ? normalizeIban(env.BANK_ACCOUNT_IBAN) : DEFAULT_ACCOUNT.iban;
  if (iban === undefined)
    throw new ConfigError(`BANK_ACCOUNT_IBAN must be a valid IBAN, got "${env.BANK_ACCOUNT_IBAN}"`);
  const bic = env.BANK_ACCOUNT_BIC || DEFAULT_ACCOUNT.bic;
  if (!isBic(bic)) throw new ConfigError(`BANK_ACCOUNT_BIC must be a BIC (8 or 11 characters), got "${bic}"`);
  const username = env.BANK_USERNAME || 'paygate';
  if (!/^[a-z_][a-z0-9_.-]{0,31}$/i.test(username)) {
    throw new ConfigError(`BANK_USERNAME must be a user name of letters, digits, _ . -, got "${username}"`);
  }
  for (const name of ['BANK_BATCH_EVERY', 'BANK_POLL_EVERY']) {
    const value = env[name];
    if (value && !DURATION.test(value)) throw new ConfigError(`${name} must be a duration such as 60s, got "${value}"`);
  }
  const choice = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const value = env[name] || fallback;
    if (!values.includes(value as T)) throw new ConfigError(`${name} must be ${values.join(', ')}; got "${value}"`);
    return value as T;
  };
  const batchBooking = choice('BANK_BATCH_BOOKING', ['true', 'false'], 'false') === 'true';
  const opening = env.BANK_OPENING_BALANCE || '0.00';
  const openingMatch = /^(-?)(0|[1-9][0-9]{0,12})(?:\.([0-9]{1,2}))?$/.exec(opening);
  if (openingMatch === null) {
    throw new ConfigError(`BANK_OPENING_BALANCE must be a EUR amount such as 1000.00 (or -50.00), got "${opening}"`);
  }
  const openingCents =
    (openingMatch[1] === '-' ? -1 : 1) *
    (Number(openingMatch[2]) * 100 + Number((openingMatch[3] ?? '').padEnd(2, '0')));
  if (envDuration(env, 'BANK_DAY', 86_400_000) < 1_000) {
    throw new ConfigError(`BANK_DAY must be at least 1s (the length of the bank's day), got "${env.BANK_DAY}"`);
  }
  const keyPath = resolve(authorizedKeyFile);
  const privateKeyFile = env.BANK_PRIVATE_KEY_FILE
    ? resolve(env.BANK_PRIVATE_KEY_FILE)
    : keyPath.endsWith('.pub') && existsSync(keyPath.slice(0, -4))
      ? keyPath.slice(0, -4)
      : undefined;
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    sftpPort: envPort(env, 'BANK_SFTP_PORT', 2222),
    controlPort: envPort(env, 'BANK_PORT', 9400),
    dataDir: resolve(env.BANK_DATA_DIR || '.paygate-bank'),
    authorizedKeyFile: keyPath,
    ...(privateKeyFile !== undefined ? { privateKeyFile } : {}),
    username,
    account: Object.freeze({ name: envText(env, 'BANK_ACCOUNT_NAME', DEFAULT_ACCOUNT.name, 70), iban, bic }),
    bookAfterMs: envDuration(env, 'BANK_BOOK_AFTER', 2_000),
    tickMs: envInteger(env, 'BANK_TICK_MS', 200, 10, 60_000),
    batchEvery: env.BANK_BATCH_EVERY || '60s',
    pollEvery: env.BANK_POLL_EVERY || '60s',
    idleTimeoutMs: envDuration(env, 'BANK_IDLE_TIMEOUT', 600_000),
    customer: Object.freeze({
      reports: choice('BANK_REPORTS', REPORTS, 'notifications'),
      batchBooking,
      statusReports: choice('BANK_STATUS_REPORTS', STATUS_REPORTS, 'final'),
    }),
    dayMs: envDuration(env, 'BANK_DAY', 86_400_000),
    openingBalanceCents: openingCents,
    logLevel: env.LOG_LEVEL || 'info',
  });
}
