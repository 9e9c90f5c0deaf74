import type { LookupFunction } from 'node:net';
import tls from 'node:tls';
import { type Dispatcher, Pool } from 'undici';
import type { Destination } from '../../http/ssrf.js';

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
  /** Certificates trusted for https receivers besides the default ones (`PAYGATE_WEBHOOK_EXTRA_CA`). */
  readonly extraCa?: readonly string[] | undefined;
}

/** Parses Retry-After (delay seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const MAX_POOLS = 256;
const pools = new Map<string, Pool>();

/** Resolves every lookup of a connection to the address the guard checked, whatever DNS says now. */
function pinnedLookup({ address, family }: Destination): LookupFunction {
  return (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    } else {
      callback(null, address, family);
    }
  };
}

/**
 * A keep-alive connection pool per pinned destination (scheme, host name, checked address, port):
 * its connections only ever lead to the address the guard approved, TLS still verifies the
 * certificate against the URL's host name, and a busy merchant's deliveries reuse connections
 * instead of opening one per attempt. Past 256 pools the least recently used one is closed once
 * its deliveries in flight are done.
 */
function poolFor(destination: Destination, connectTimeoutMs: number, extraCa: readonly string[] | undefined): Pool {
  const { url, address } = destination;
  const key = `${url.protocol}//${url.hostname}@${address}:${url.port}/${connectTimeoutMs}/${extraCa ? 'extra-ca' : ''}`;
  let pool = pools.get(key);
  if (pool) {
    pools.delete(key);
    pools.set(key, pool); // most recently used last
    return pool;
  }
  pool = new Pool(url.origin, {
    connections: 16,
    // undici checks the connect timeout on a coarse timer: it fires up to about half a second late.
    connect: {
      timeout: connectTimeoutMs,
      lookup: pinnedLookup(destination),
      // The extra CA adds to the trusted roots (Node's defaults, NODE_EXTRA_CA_CERTS included); it
      // replaces none, and TLS still checks the certificate against the URL's host name.
      ...(extraCa ? { ca: [...defaultCa(), ...extraCa] } : {}),
    },
  });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
    pools.delete(oldestKey);
    oldest.close().catch(() => {});
  }
  return pool;
}

/** The roots Node trusts by default: its bundled ones and NODE_EXTRA_CA_CERTS's. */
function defaultCa(): string[] {
  return typeof tls.getCACertificates === 'function' ? tls.getCACertificates('default') : [...tls.rootCertificates];
}

const firstValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

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
  return new Promise((resolve) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode: number | undefined;
    let retryAfterMs: number | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      resolve({ ...result, latencyMs: Math.round(performance.now() - started) });
    };
    const answered = () =>
      finish({
        statusCode: statusCode ?? 0,
        excerpt: Buffer.concat(chunks).subarray(0, options.excerptBytes).toString('utf8'),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    // Covers the wait for a connection, the connect, the request and the answer's first bytes.
    const total = setTimeout(() => {
      const error = new Error(`no answer within ${options.totalTimeoutMs} ms`);
      finish({ error: error.message });
      controller?.abort(error);
    }, options.totalTimeoutMs);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        // Timed out while waiting for a connection: never sent.
        if (settled) started.abort(new Error('abandoned'));
      },
      onResponseStart(_controller, status, responseHeaders) {
        statusCode = status;
        if (status === 429 || status === 503) {
          retryAfterMs = parseRetryAfter(firstValue(responseHeaders['retry-after']), options.now());
        }
      },
      onResponseData(response, chunk) {
        if (size < options.excerptBytes) chunks.push(chunk);
        size += chunk.length;
        // The status is what counts: a large answer is cut off once the excerpt is full, and
        // its connection goes with it. A fully read one leaves its connection to the pool.
        if (size >= options.excerptBytes) {
          answered();
          response.abort(new Error('excerpt full'));
        }
      },
      onResponseEnd: answered,
      onResponseError(_controller, error) {
        const reason =
          (error as { code?: string }).code === 'UND_ERR_CONNECT_TIMEOUT'
            ? `no connection within ${options.connectTimeoutMs} ms`
            : error.message;
        finish(statusCode !== undefined ? { statusCode, error: reason } : { error: reason });
      },
    };
    try {
      poolFor(destination, options.connectTimeoutMs, options.extraCa).dispatch(
        {
          method: 'POST',
          path: destination.url.pathname + destination.url.search,
          headers: { ...headers, 'user-agent': 'Paygate-Webhooks/1' },
          body,
        },
        handler,
      );
    } catch (error) {
      finish({ error: error instanceof Error ? error.message : String(error) });
    }
  });
}
