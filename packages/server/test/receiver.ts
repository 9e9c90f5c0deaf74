/**
 * A merchant's webhook receiver on loopback for tests: records every request exactly as it
 * arrived (method, raw path and query, raw headers with duplicates, body bytes) and answers
 * with whatever the test scripts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSignatureInput, type RawHeaders, verifyWebhook, WEBHOOK_PROFILE } from '@paygate/protocol';

/** One request as the receiver saw it. */
export interface Received {
  readonly method: string;
  readonly path: string;
  readonly query: string | undefined;
  readonly headers: RawHeaders;
  readonly body: Buffer;
  /** Wall-clock arrival, for ordering only. */
  readonly at: number;
}

/** How the receiver answers one request. */
export interface Reply {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Milliseconds to wait before answering. */
  readonly delayMs?: number;
  /** Never answer (the socket stays open until the client gives up). */
  readonly hang?: boolean;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Answers the next requests with these replies, in turn; then with `fallback`. */
  script(...replies: Reply[]): void;
  fallback: Reply;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(fallback: Reply = { status: 200, body: 'ok' }): Promise<Receiver> {
  const queue: Reply[] = [];
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const open = new Set<ServerResponse>();
  const receiver = {
    url: '',
    received,
    fallback,
    script: (...replies: Reply[]) => void queue.push(...replies),
    waitFor(count: number, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close: async () => {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = req.url ?? '/';
      const mark = target.indexOf('?');
      received.push({
        method: req.method ?? '',
        path: mark < 0 ? target : target.slice(0, mark),
        query: mark < 0 ? undefined : target.slice(mark + 1),
        headers: req.rawHeaders,
        body: Buffer.concat(chunks),
        at: Date.now(),
      });
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const reply = queue.shift() ?? receiver.fallback;
      if (reply.hang) {
        open.add(res);
        return;
      }
      const answer = () => {
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** A header of a received request (the first of its name). */
export function headerOf(request: Received, name: string): string | undefined {
  const raw = request.headers as readonly string[];
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === name) return raw[i + 1];
  }
  return undefined;
}

/** The nonce a received webhook was signed with. */
export function nonceOf(request: Received): string {
  const parsed = parseSignatureInput(headerOf(request, 'signature-input') ?? '', WEBHOOK_PROFILE);
  if (!parsed.ok) throw new Error(`bad Signature-Input: ${parsed.error.reason}`);
  return parsed.value.nonce;
}

/** Verifies a received webhook with the protocol package, as a merchant would. */
export function verifyReceived(request: Received, keys: { keyid: string; publicKey: string }[], nowMs: number) {
  return verifyWebhook(
    { method: request.method, path: request.path, query: request.query, headers: request.headers, body: request.body },
    {
      now: Math.floor(nowMs / 1000),
      publicKeys: new Map(keys.map((key) => [key.keyid, Buffer.from(key.publicKey, 'base64')])),
    },
  );
}
