/**
 * Test helpers: the shared protocol vectors, loopback HTTP servers that record or script what
 * they answer (a recorder, and a proxy in front of the real platform that can fail on purpose),
 * and clients for test merchants.
 */
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PaygateClient, type PaygateClientOptions } from '@paygate/merchant';
import type { Platform } from '../../server/src/platform.js';
import type { TestMerchant } from '../../server/test/harness.js';

/** The shared protocol vectors, loaded once by the protocol package's tests (the shared copy first). */
export { type Vectors, vectors } from '../../protocol/test/vectors.js';

/** One request as a loopback server received it: nothing decoded. */
export interface Recorded {
  readonly method: string;
  /** The request target as received (path and raw query). */
  readonly target: string;
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

/** The first value of a header in a recorded request. */
export function header(recorded: Recorded, name: string): string | undefined {
  for (let i = 0; i < recorded.rawHeaders.length; i += 2) {
    if ((recorded.rawHeaders[i] as string).toLowerCase() === name) return recorded.rawHeaders[i + 1];
  }
  return undefined;
}

/** What a scripted server does with one request. */
export type Action =
  | {
      readonly kind: 'reply';
      readonly status: number;
      readonly body: string;
      readonly headers?: Record<string, string>;
    }
  /** Forwards to the upstream; with `answer`, the upstream's answer is dropped and this status sent instead. */
  | { readonly kind: 'forward'; readonly answer?: number }
  | { readonly kind: 'destroy' }
  | { readonly kind: 'hang' };

export interface ScriptedServer {
  readonly url: string;
  readonly received: Recorded[];
  /** Actions for the next requests, in turn; then `fallback`. */
  script(...actions: Action[]): void;
  close(): Promise<void>;
}

/**
 * A loopback server that records every request and answers by script: a reply, forwarding to
 * `upstream` (a transparent proxy: same target, headers and body bytes), dropping the
 * connection, or never answering.
 */
export async function startScriptedServer(fallback: Action, upstream?: string): Promise<ScriptedServer> {
  const queue: Action[] = [];
  const received: Recorded[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        target: req.url ?? '/',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      received.push(recorded);
      const action = queue.shift() ?? fallback;
      switch (action.kind) {
        case 'reply':
          res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
          res.end(action.body);
          return;
        case 'destroy':
          req.socket.destroy();
          return;
        case 'hang':
          hanging.add(res);
          return;
        case 'forward': {
          if (!upstream) throw new Error('no upstream to forward to');
          const headers: Record<string, string> = {};
          for (let i = 0; i < req.rawHeaders.length; i += 2) {
            const name = (req.rawHeaders[i] as string).toLowerCase();
            if (name !== 'host' && name !== 'connection') headers[name] = req.rawHeaders[i + 1] as string;
          }
          const forwarded = httpRequest(
            new URL(recorded.target, upstream),
            { method: recorded.method, headers },
            (answer) => {
              if (action.answer !== undefined) {
                answer.resume();
                answer.on('end', () => {
                  res.writeHead(action.answer as number, { 'content-type': 'text/plain' });
                  res.end('the answer was lost');
                });
                return;
              }
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
            },
          );
          forwarded.on('error', () => res.destroy());
          forwarded.end(recorded.body);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    script: (...actions) => void queue.push(...actions),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Client options for a test merchant of a test platform. */
export function clientOptions(baseUrl: string, merchant: TestMerchant): PaygateClientOptions {
  return {
    baseUrl,
    accessKey: merchant.accessKey,
    privateKey: merchant.key.secretKey,
    bodyKey: { keyId: merchant.bodyKey.keyId, publicKey: merchant.bodyKey.publicKey },
  };
}

/** A client for a test merchant, talking to the platform directly. */
export function clientFor(platform: Platform, merchant: TestMerchant, extra: Partial<PaygateClientOptions> = {}) {
  return new PaygateClient({ ...clientOptions(platform.url, merchant), retryDelayMs: 1, ...extra });
}

/** Runs the platform's webhook dispatcher step until nothing is due; returns how many steps delivered. */
export async function deliverAll(platform: Platform): Promise<number> {
  let delivered = 0;
  for (;;) {
    const outcome = await platform.services.webhooks.deliverNext('merchant-sdk-test');
    if (outcome === 'idle') return delivered;
    if (outcome === 'delivered') delivered++;
  }
}

/** Sends a recorded request again, byte for byte, to another server (optionally altered). */
export async function replay(
  recorded: Recorded,
  baseUrl: string,
  alter: { target?: string; body?: Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers = new Headers();
  for (let i = 0; i < recorded.rawHeaders.length; i += 2) {
    const name = (recorded.rawHeaders[i] as string).toLowerCase();
    if (!['host', 'connection', 'content-length', 'user-agent'].includes(name)) {
      headers.append(name, recorded.rawHeaders[i + 1] as string);
    }
  }
  for (const [name, value] of Object.entries(alter.headers ?? {})) headers.set(name, value);
  const response = await fetch(baseUrl + (alter.target ?? recorded.target), {
    method: recorded.method,
    headers,
    body: new Uint8Array(alter.body ?? recorded.body),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, body: { text } };
  }
}
