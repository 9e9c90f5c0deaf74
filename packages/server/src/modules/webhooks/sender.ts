import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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

const MAX_AGENTS = 256;
const agents = new Map<string, HttpAgent>();

/**
 * A keep-alive agent per pinned destination (scheme, host name, checked address, port): its
 * sockets only ever lead to the address the guard approved, and a busy merchant's deliveries
 * reuse connections instead of opening one per attempt. The oldest agent goes past 256.
 */
function agentFor(destination: Destination): HttpAgent {
  const { url, address } = destination;
  const key = `${url.protocol}//${url.hostname}@${address}:${url.port}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
    agents.set(key, agent); // most recently used last
    return agent;
  }
  const options = { keepAlive: true, maxSockets: 16, maxFreeSockets: 16, timeout: 30_000 };
  agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, HttpAgent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
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
        agent: agentFor(destination),
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (complete: boolean) => {
          const retryAfterMs =
            res.statusCode === 429 || res.statusCode === 503
              ? parseRetryAfter(res.headers['retry-after'], options.now())
              : undefined;
          finish({
            statusCode: res.statusCode ?? 0,
            excerpt: Buffer.concat(chunks).subarray(0, options.excerptBytes).toString('utf8'),
            ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          });
          // A fully read answer leaves the socket to its agent for the next delivery; a large
          // one is cut off once the excerpt is full, and that connection goes with it.
          if (!complete) res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (size < options.excerptBytes) chunks.push(chunk);
          size += chunk.length;
          // The status is what counts; stop reading a large answer once the excerpt is full.
          if (size >= options.excerptBytes) done(false);
        });
        res.on('end', () => done(true));
        res.on('error', (error) => finish({ statusCode: res.statusCode ?? 0, error: error.message }));
      },
    );
    const total = setTimeout(() => {
      req.destroy(new Error(`no answer within ${options.totalTimeoutMs} ms`));
    }, options.totalTimeoutMs);
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already.
      if (!socket.connecting) return;
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
