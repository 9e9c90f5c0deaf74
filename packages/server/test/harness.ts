/**
 * Test harness: a real platform on loopback over a real database (in-memory PGlite, or a fresh
 * PostgreSQL database per platform when TEST_DATABASE_URL is set), real merchants with real
 * keys, and signed, sealed requests built with the protocol package.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  boxPublicKeyFrom,
  generateSigningKey,
  type SigningKey,
  signReadRequest,
  signWriteRequest,
} from '@paygate/protocol';
import pg from 'pg';
import { type Config, parseConfig } from '../src/config.js';
import type { Db } from '../src/db/db.js';
import { onboardingView } from '../src/modules/admin/routes.js';
import { type Platform, startPlatform } from '../src/platform.js';
import type { ServiceOptions } from '../src/services.js';
import { embeddedTemplate, postgresTemplate } from './templates.js';

export type DatabaseKind = 'pglite' | 'postgres';

/** The databases storage suites run on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function databases(): DatabaseKind[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * A fresh PostgreSQL database on the TEST_DATABASE_URL server, already migrated (copied from a
 * template migrated once: see templates.ts); dropped by `drop()`.
 */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const template = await postgresTemplate(base);
  const name = `paygate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A fixed master key for tests (never used outside them). */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7);

export interface TestPlatform extends Platform {
  readonly config: Config;
  /** Milliseconds the injected clock is ahead of real time; tests move it with `advance`. */
  advance(ms: number): void;
  /** The error-level (and worse) lines the platform logged so far, parsed. */
  errorLogs(): readonly Record<string, unknown>[];
  /** Everything the platform logged, as written (every level only with `captureLog`). */
  logText(): string;
}

export interface TestPlatformOptions extends ServiceOptions {
  readonly database?: DatabaseKind;
  /** Use this PostgreSQL URL (shared between instances) instead of a fresh database. */
  readonly databaseUrl?: string;
  readonly env?: Record<string, string>;
  readonly config?: Partial<Config>;
  /**
   * An error-level log line means a fault of ours (a 500, a failed worker step), so `close()`
   * fails when the platform logged one. Tests that provoke such a fault on purpose set this.
   */
  readonly expectErrorLogs?: boolean;
  /** Log at every level (trace) and keep every line raw, for tests of what never reaches the log. */
  readonly captureLog?: boolean;
}

/** A pino destination keeping the lines at level error (50) and above. */
function errorLogCapture() {
  const lines: Record<string, unknown>[] = [];
  /** Every line as written (only with `captureLog`: the logger then writes every level). */
  const raw: string[] = [];
  let pending = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      raw.push(chunk.toString());
      pending += chunk.toString();
      let end: number;
      while ((end = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (typeof parsed.level === 'number' && parsed.level >= 50) lines.push(parsed);
        } catch {
          lines.push({ level: 50, msg: `unparsable log line: ${line}` });
        }
      }
      callback();
    },
  });
  return { stream, lines, raw };
}

/** Starts a platform on 127.0.0.1 with a random port; `close()` also drops its database. */
export async function startTestPlatform(options: TestPlatformOptions = {}): Promise<TestPlatform> {
  let drop: (() => Promise<void>) | undefined;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl && options.database === 'postgres') {
    const fresh = await freshPostgres();
    databaseUrl = fresh.url;
    drop = fresh.drop;
  }
  let offset = 0;
  const now = options.now ?? (() => Date.now() + offset);
  const config = parseConfig(
    { PORT: '0', PAYGATE_WORKERS: 'false', LOG_LEVEL: 'silent', ...options.env },
    {
      dataDir: 'memory://',
      databaseUrl,
      masterKey: TEST_MASTER_KEY.toString('base64'),
      adminToken: 'test-admin-token-0123456789abcdef',
      ...options.config,
    },
  );
  const errors = errorLogCapture();
  // The embedded database starts from a migrated dump (templates.ts) instead of migrating.
  const loadDataDir = databaseUrl ? undefined : await embeddedTemplate();
  const platform = await startPlatform(config, {
    ...options,
    ...(loadDataDir ? { loadDataDir } : {}),
    now,
    masterKey: TEST_MASTER_KEY,
    logger: { level: options.captureLog ? 'trace' : 'error', stream: errors.stream },
  });
  return {
    ...platform,
    config: platform.services.config,
    advance(ms: number) {
      offset += ms;
    },
    errorLogs: () => errors.lines,
    logText: () => errors.raw.join(''),
    async close() {
      await platform.close();
      await drop?.();
      if (errors.lines.length > 0 && !options.expectErrorLogs) {
        const shown = errors.lines.map((line) => JSON.stringify(line)).join('\n');
        throw new Error(`the platform logged ${errors.lines.length} error-level line(s) (a fault of ours):\n${shown}`);
      }
    },
  };
}

/** A merchant onboarded on a test platform, holding its own private key. */
export interface TestMerchant {
  readonly accessKey: string;
  readonly key: SigningKey;
  readonly bodyKey: { keyId: string; publicKey: Buffer };
  readonly webhookKeys: { keyid: string; publicKey: string }[];
}

export async function createMerchant(platform: Platform, name = 'Test shop'): Promise<TestMerchant> {
  const key = generateSigningKey();
  const { accessKey } = await platform.services.merchants.create(name, key.publicKey.toString('base64'));
  const view = await onboardingView(platform.services, accessKey);
  const bodyPublic = boxPublicKeyFrom(view.bodyKey.publicKey);
  if (!bodyPublic.ok) throw new Error('bad body key');
  return {
    accessKey,
    key,
    bodyKey: { keyId: view.bodyKey.keyId, publicKey: bodyPublic.value },
    webhookKeys: view.webhookKeys,
  };
}

export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly body: { msg: string; data?: T; errors?: { field: string; message: string }[]; [key: string]: unknown };
  readonly headers: Headers;
}

async function toResponse<T>(response: Response): Promise<ApiResponse<T>> {
  return {
    status: response.status,
    body: (await response.json()) as ApiResponse<T>['body'],
    headers: response.headers,
  };
}

/** Builds a signed, sealed POST (headers and exact body bytes) without sending it. */
export function buildWrite(merchant: TestMerchant, path: string, payload: unknown, clockMs = Date.now()) {
  return signWriteRequest(
    {
      path,
      plaintext: Buffer.from(JSON.stringify(payload)),
      bodyKey: merchant.bodyKey,
      idempotencyKey: randomUUID(),
    },
    { accessKey: merchant.accessKey, key: merchant.key, created: Math.floor(clockMs / 1000), nonce: randomUUID() },
  );
}

/** Builds signed GET headers for `path?query` without sending it. */
export function buildRead(merchant: TestMerchant, path: string, query?: string, clockMs = Date.now()) {
  return signReadRequest(
    { path, query },
    { accessKey: merchant.accessKey, key: merchant.key, created: Math.floor(clockMs / 1000), nonce: randomUUID() },
  );
}

/** Sends a signed, sealed POST to the platform. */
export async function post<T = unknown>(platform: Platform, merchant: TestMerchant, path: string, payload: unknown) {
  const signed = buildWrite(merchant, path, payload, platform.services.now());
  return toResponse<T>(
    await fetch(platform.url + path, { method: 'POST', headers: signed.headers, body: new Uint8Array(signed.body) }),
  );
}

/** Sends a signed GET to the platform; `query` is the raw query string without `?`. */
export async function get<T = unknown>(platform: Platform, merchant: TestMerchant, path: string, query?: string) {
  const signed = buildRead(merchant, path, query, platform.services.now());
  const target = query === undefined ? path : `${path}?${query}`;
  return toResponse<T>(await fetch(platform.url + target, { headers: signed.headers }));
}

/** A valid payment create body; override fields as needed. */
export function paymentInput(overrides: Record<string, unknown> = {}) {
  return {
    merchantOrderNo: `M-${randomUUID().slice(0, 18)}`,
    currency: 'BRL',
    amount: '125.50',
    paymentMethod: { code: 'PIX' },
    webhookUrl: 'https://merchant.example/webhook/payment',
    attach: 'cart=8812',
    ...overrides,
  };
}

/** Counts rows of a table (to prove a refused request wrote nothing). */
export async function count(platform: Platform, table: string): Promise<number> {
  const result = await platform.services.db.query<{ n: bigint }>(`SELECT count(*)::bigint AS n FROM ${table}`);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * `db`, with the text of every statement sent through it pushed to `statements` (how many a
 * service sends), and its parameters to `sentParams` when given.
 */
export function countingDb(db: Db, statements: string[], sentParams?: (readonly unknown[])[]): Db {
  return Object.assign(Object.create(db) as Db, {
    query: (sql: Parameters<Db['query']>[0], params?: readonly unknown[]) => {
      statements.push(typeof sql === 'string' ? sql : sql.text);
      sentParams?.push(params ?? []);
      return db.query(sql, params);
    },
  });
}
