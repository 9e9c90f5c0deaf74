import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { pino } from 'pino';
import { createSimulator } from '../src/app.js';
import type { TlsFiles } from '../src/certs.js';
import type { SimulatorConfig } from '../src/config.js';

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-pix-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function testConfig(dataDir: string, overrides: Partial<SimulatorConfig> = {}): SimulatorConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    controlPort: 0,
    dataDir,
    tokenTtlS: 3_600,
    merchantName: 'PAYGATE TEST',
    merchantCity: 'RECIFE',
    tickMs: 20,
    batch: 20,
    retryBaseMs: 50,
    retryMaxMs: 200,
    notifyTimeoutMs: 2_000,
    logLevel: 'silent',
    ...overrides,
  };
}

/** A clock the test moves: `advance(ms)` jumps ahead (token expiry, charge expiry). */
export function testClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms: number) => void (offset += ms) };
}

export interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface ClientTls {
  readonly cert?: string;
  readonly key?: string;
  readonly ca: string;
}

export const clientTls = (files: TlsFiles): ClientTls => ({
  cert: readFileSync(files.clientCert, 'utf8'),
  key: readFileSync(files.clientKey, 'utf8'),
  ca: readFileSync(files.caCert, 'utf8'),
});

/** One HTTPS request as the platform makes it (client certificate, the simulator's CA alone trusted). */
export function httpsCall(
  base: string,
  tls: ClientTls,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        method,
        ca: tls.ca,
        ...(tls.cert !== undefined ? { cert: tls.cert, key: tls.key } : {}),
        agent: false,
        headers: {
          ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}),
          ...options.headers,
        },
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The platform's side: a token from the token endpoint, then JSON calls to the API with it. */
export function pixClient(url: string, tls: ClientTls, clientId: string, clientSecret: string) {
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const client = {
    token: (form = 'grant_type=client_credentials', authorization = basic) =>
      httpsCall(url, tls, 'POST', '/oauth/token', {
        body: form,
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      }),
    accessToken: async (scope?: string) => {
      const answer = await client.token(
        `grant_type=client_credentials${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`,
      );
      if (answer.status !== 200) throw new Error(`token: ${answer.status} ${answer.text}`);
      return answer.body.access_token as string;
    },
    call: (method: string, path: string, token: string | undefined, body?: unknown, timeoutMs?: number) =>
      httpsCall(url, tls, method, `/api/v2${path}`, {
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        headers: {
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      }),
  };
  return client;
}

export async function control(base: string, path: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: {}, text, body: parsed };
}

/** A running in-process simulator on a fresh data directory; `stop()` closes it and removes the directory. */
export async function startSimulator(
  overrides: Partial<SimulatorConfig> = {},
  options: { clock?: () => number; dataDir?: string } = {},
) {
  const temp = options.dataDir ? undefined : tempDir();
  const config = testConfig(options.dataDir ?? (temp as { dir: string }).dir, overrides);
  const simulator = await createSimulator(config, {
    log: pino({ level: 'silent' }),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  await simulator.listen();
  const tls = clientTls(simulator.tls);
  const client = pixClient(simulator.url, tls, simulator.credentials.clientId, simulator.credentials.clientSecret);
  return {
    simulator,
    tls,
    client,
    pixKey: simulator.credentials.pixKey,
    control: (path: string, body: unknown) => control(simulator.controlUrl, path, body),
    stop: async () => {
      await simulator.close();
      temp?.remove();
    },
  };
}
export type Started = Awaited<ReturnType<typeof startSimulator>>;

export interface Callback {
  readonly path: string;
  readonly raw: string;
  readonly body: { pix: Record<string, unknown>[] };
  /** The subject CN of the client certificate the simulator presented (https receivers). */
  readonly peer?: string;
}

/**
 * A callback receiver: plain HTTP, or HTTPS requiring a client certificate signed by `tls.ca`
 * (then using `tls.cert`/`tls.key` as its server certificate). Answers each request with the next
 * of `statuses` (then 200); a status of 0 holds the request open and never answers.
 */
export async function startReceiver(statuses: number[] = [], tls?: { cert: string; key: string; ca: string }) {
  const received: Callback[] = [];
  const attempts: Callback[] = [];
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const socket = request.socket as TLSSocket;
      const peer = tls ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined;
      const record: Callback = {
        path: request.url ?? '',
        raw,
        body: JSON.parse(raw) as Callback['body'],
        ...(peer !== undefined ? { peer } : {}),
      };
      attempts.push(record);
      const status = statuses.shift() ?? 200;
      if (status === 0) return; // hold it: the sender is mid-notification
      if (status >= 200 && status < 300) received.push(record);
      response.writeHead(status).end();
    });
  };
  const server: Server = tls
    ? (createHttpsServer(
        { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true },
        handler,
      ) as unknown as Server)
    : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/channels/pix/notifications`,
    received,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let counter = 0;
/** A fresh txid of 32 letters and digits. */
export const newTxid = () => `PG${String(Date.now()).padStart(15, '0')}${String(++counter).padStart(15, '0')}`;

export const cobBody = (chave: string, original = '10.00', expiracao = 900) => ({
  calendario: { expiracao },
  valor: { original },
  chave,
});
