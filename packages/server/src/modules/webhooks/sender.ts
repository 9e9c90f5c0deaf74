import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Destination } from './destination.js';

/** What one delivery attempt came to. */
export interface SendResult {
  readonly statusCode?: number;
  /** At most `excerptBytes` of the answer, as text. */
  readonly excerpt?: string;
  readonly error?: string;
  readonly latencyMs: number;
  /** Retry-After of a 429 or 503, in milliseconds. */
  readonly retryAfterMs?: number;
}

export interface SendOptions {
  readonly connectTimeoutMs: number;
  readonly totalTimeoutMs: number;
  readonly excerptBytes: number;
  readonly now: () => number;
}

/** Parses Retry-After (delay seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * POSTs the body to the pinned destination. Redirects are not followed (a 3xx is just a
 * status); connect and total time are bounded; only the first bytes of the answer are read.
 */
export function send(
  destination: Destination,
  headers: Record<string, string>,
  body: Buffer,
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  // Connect to the address the guard checked, whatever DNS would say now.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: destination.address, family: destination.family },
      ]);
    } else {
      callback(null, destination.address, destination.family);
    }
  };
  const request = destination.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      resolve({ ...result, latencyMs: latency() });
    };
    const req = request(
      destination.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length), 'user-agent': 'Paygate-Webhooks/1' },
        lookup: pinned,
        agent: false,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const retryAfterMs =
            res.statusCode === 429 || res.statusCode === 503
              ? parseRetryAfter(res.headers['retry-after'], options.now())
              : undefined;
          finish({
            statusCode: res.statusCode ?? 0,
            excerpt: Buffer.concat(chunks).subarray(0, options.excerptBytes).toString('utf8'),
            ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          });
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (size < options.excerptBytes) chunks.push(chunk);
          size += chunk.length;
          // The status is what counts; stop reading a large answer once the excerpt is full.
          if (size >= options.excerptBytes) done();
        });
        res.on('end', done);
        res.on('error', (error) => finish({ statusCode: res.statusCode ?? 0, error: error.message }));
      },
    );
    const total = setTimeout(() => {
      req.destroy(new Error(`no answer within ${options.totalTimeoutMs} ms`));
    }, options.totalTimeoutMs);
    req.on('socket', (socket) => {
      const connect = setTimeout(
        () => req.destroy(new Error(`no connection within ${options.connectTimeoutMs} ms`)),
        options.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(connect));
      socket.once('secureConnect', () => clearTimeout(connect));
      socket.once('close', () => clearTimeout(connect));
    });
    req.on('error', (error) => finish({ error: error.message }));
    req.end(body);
  });
}
