import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildSimulator } from '../src/app.js';
import { NonceCache, sign, verify } from '../src/auth.js';
import type { SimulatorConfig } from '../src/config.js';

export const SECRET = 'test-secret-0123456789abcdef';

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-psp-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function testConfig(dataDir: string, overrides: Partial<SimulatorConfig> = {}): SimulatorConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    secret: SECRET,
    dataDir,
    autoCompleteMs: 0,
    chargeTtlMs: 86_400_000,
    feeBps: 0,
    tickMs: 20,
    batch: 20,
    retryBaseMs: 50,
    retryMaxMs: 200,
    notifyTimeoutMs: 2_000,
    logLevel: 'silent',
    ...overrides,
  };
}

/** A running simulator on a fresh data dir; `stop()` closes it and removes the dir. */
export async function startSimulator(overrides: Partial<SimulatorConfig> = {}, dataDir?: string) {
  const temp = dataDir ? undefined : tempDir();
  const config = testConfig(dataDir ?? (temp as { dir: string }).dir, overrides);
  const simulator = buildSimulator(config, { log: pino({ level: 'silent' }) });
  const url = await simulator.listen();
  return {
    simulator,
    url,
    config,
    call: (method: string, path: string, body?: unknown, secret = SECRET) => call(url, method, path, body, secret),
    control: (path: string, body: unknown) => control(url, path, body),
    stop: async () => {
      await simulator.close();
      temp?.remove();
    },
  };
}

export type Started = Awaited<ReturnType<typeof startSimulator>>;

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/** A signed call to the simulator's API, as the platform's connector makes it. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  secret = SECRET,
): Promise<Answer> {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const headers = sign(secret, { method, path, body: raw }, { now: Date.now(), nonce: randomUUID() });
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(raw ? { 'content-type': 'application/json' } : {}) },
    ...(raw ? { body: raw } : {}),
  });
  return answer(response);
}

export async function control(base: string, path: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return answer(response);
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

export interface Received {
  path: string;
  raw: string;
  body: { id: string; type: string; object: Record<string, unknown> };
  verified: boolean;
}

/**
 * A loopback notification receiver: verifies each request with the shared secret, records it,
 * and answers with the next status from `statuses` (then 200).
 */
export async function startReceiver(statuses: number[] = []) {
  const received: Received[] = [];
  const attempts: Received[] = [];
  const nonces = new NonceCache();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const result = verify(
        SECRET,
        { method: request.method ?? 'POST', path: request.url ?? '/', body: raw, headers: request.headers },
        { now: Date.now(), nonceSeen: nonces.seen },
      );
      const record: Received = {
        path: request.url ?? '',
        raw: raw.toString('utf8'),
        body: JSON.parse(raw.toString('utf8')) as Received['body'],
        verified: result.ok,
      };
      attempts.push(record);
      const status = statuses.shift() ?? 200;
      if (status >= 200 && status < 300 && result.ok) received.push(record);
      response.writeHead(result.ok ? status : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/channels/psp/notifications`,
    received,
    attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;
/** A platform-shaped order number, unique per test run. */
export const orderNo = (prefix: 'P' | 'W') =>
  `${prefix}${String(Date.now()).padStart(13, '0')}${String(++counter).padStart(5, '0')}`;
