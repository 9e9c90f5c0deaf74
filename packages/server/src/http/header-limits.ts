import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, unauthorized } from '../errors.js';
import { ulid } from '../ids.js';
import { type ErrorCode, rawErrorResponse } from './errors.js';

/** Header lines a request may carry, every line counted (Host included); more is 431. */
export const MAX_HEADER_FIELDS = 100;

/**
 * Bytes of request head a request may carry, as node counts them: the request target plus every
 * header name and value (separators and line ends not counted). More is 431.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Headers that decide where a request goes and where its body ends. A repeat of any of them is
 * a malformed HTTP message (RFC 9112 §3.2 requires 400 for a repeated Host; node's own parser
 * already answers most Content-Length and Transfer-Encoding conflicts with 400 before any route
 * is known), so it is 400 on every path, the merchant API included: the request is refused
 * before it is addressed to any API, and the answer tells nothing about credentials.
 */
const FRAMING = new Set(['host', 'content-length', 'transfer-encoding']);

/**
 * Headers node reduces to their first line, silently discarding the others (node's documented
 * list for `message.headers`): a repeat must be refused, or what we read is not what was sent.
 */
const SINGLE_VALUED = new Set([
  'age',
  'authorization',
  'content-type',
  'etag',
  'expires',
  'from',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/**
 * The merchant API's authentication refuses a repeat of its own signed headers itself (a 401
 * request-shape failure, recorded among the sandbox's rejected requests); left to it.
 */
const LEFT_TO_AUTHENTICATION = new Set(['content-type']);

/** Whether the request is under the merchant API (the same test as the error handler's). */
const underMerchantApi = (request: FastifyRequest) => (request.raw.url ?? '').startsWith('/api/');

/**
 * How many times each header of interest occurs, over every raw line whatever its case; undefined
 * when each occurs at most once and Host exactly once (the common request: nothing allocated).
 */
function countLines(rawHeaders: readonly string[]): Map<string, number> | undefined {
  let hosts = 0;
  let repeated = false;
  let seen: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    if (name === 'host') {
      if (++hosts > 1) repeated = true;
    } else if (FRAMING.has(name) || SINGLE_VALUED.has(name)) {
      if (seen === undefined) seen = [name];
      else if (seen.includes(name)) repeated = true;
      else seen.push(name);
    }
  }
  if (hosts === 1 && !repeated) return undefined;
  const counts = new Map<string, number>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    if (FRAMING.has(name) || SINGLE_VALUED.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/**
 * Enforces the header rules on every request, before routing decides anything: node keeps every
 * header line (no silent cap), the hook counts them, and checks single-valued headers over the
 * raw lines. Call before any route is registered.
 */
export function headerLimits(app: FastifyInstance): void {
  // The server may come from a serverFactory (platform.ts), so the limits are set on it rather
  // than passed to createServer: node reads these fields per connection and per request.
  const server = app.server as Server & { maxHeaderSize?: number; requireHostHeader?: boolean };
  // Node's default (2000) keeps roughly the first thousand lines and drops the rest unseen.
  // No cap here: MAX_HEADER_BYTES bounds the lines, and the hook refuses more than the limit.
  server.maxHeadersCount = 0;
  // Node refuses a head once its count *reaches* maxHeaderSize; one more makes exactly
  // MAX_HEADER_BYTES acceptable, as documented. Set here so NODE_OPTIONS cannot move it.
  server.maxHeaderSize = MAX_HEADER_BYTES + 1;
  // Node would answer a missing Host with a bodiless 400; the hook answers it in our JSON shape.
  server.requireHostHeader = false;

  // A callback hook, not an async one: it runs on every request before routing, and the common
  // request (each header once, one Host) passes it without a promise or an allocation.
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw.rawHeaders;
    const fields = raw.length / 2;
    if (fields > MAX_HEADER_FIELDS) {
      request.log.info({ header: { fields } }, 'request refused: REQUEST_HEADER_FIELDS_TOO_LARGE');
      return done(
        new DomainError(
          'REQUEST_HEADER_FIELDS_TOO_LARGE',
          `the request has ${fields} header fields; at most ${MAX_HEADER_FIELDS} are accepted`,
        ),
      );
    }
    const counts = countLines(raw);
    const coding = request.raw.headers['transfer-encoding'];
    if (counts === undefined && coding === undefined) return done();
    try {
      refuseBadHead(request, reply, counts, coding);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
}

/** The rest of the hook's rules, for a head with a repeated or missing header or a transfer coding. */
function refuseBadHead(
  request: FastifyRequest,
  reply: FastifyReply,
  counts: Map<string, number> | undefined,
  coding: string | undefined,
): void {
  if (counts !== undefined) {
    const hosts = counts.get('host') ?? 0;
    // HTTP/1.0 may omit Host; HTTP/1.1 must send exactly one.
    let reason = hosts === 0 && request.raw.httpVersion === '1.1' ? 'the request has no Host header' : undefined;
    for (const name of FRAMING) {
      if ((counts.get(name) ?? 0) > 1) reason ??= `header ${name} is repeated`;
    }
    if (reason !== undefined) {
      request.log.info({ header: { reason } }, 'request refused: BAD_REQUEST');
      reply.header('connection', 'close');
      throw new DomainError('BAD_REQUEST', reason);
    }
  }

  // RFC 9112 §6.1: a transfer coding the server does not understand is a 501. Node decodes
  // `chunked` only; anything before it (`gzip, chunked`) would reach us still encoded.
  if (coding !== undefined && coding.trim() === '') {
    reply.header('connection', 'close');
    throw new DomainError('BAD_REQUEST', 'Transfer-Encoding is empty');
  }
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
    request.log.info({ header: { transferEncoding: coding } }, 'request refused: NOT_IMPLEMENTED');
    reply.header('connection', 'close');
    throw new DomainError('NOT_IMPLEMENTED', 'only the chunked transfer coding is supported');
  }
  if (counts === undefined) return;

  const merchantApi = underMerchantApi(request);
  for (const name of SINGLE_VALUED) {
    if ((counts.get(name) ?? 0) < 2) continue;
    if (!merchantApi) {
      request.log.info({ header: { reason: `header ${name} is repeated` } }, 'request refused: BAD_REQUEST');
      throw new DomainError('BAD_REQUEST', `header ${name} is repeated`);
    }
    // Under the merchant API before authentication, the spec makes a repeated single-valued
    // header a request-shape failure: the same bare 401 as every authentication failure.
    if (LEFT_TO_AUTHENTICATION.has(name)) continue;
    request.log.info(
      { auth: { step: 'shape', reason: `header ${name} is repeated` } },
      'request refused: UNAUTHORIZED',
    );
    throw unauthorized();
  }
}

/** Sockets already answered: node reports a parse error again for each later chunk of data. */
const answered = new WeakSet<Socket>();

/** How long an answered connection may stay half-open for the client to read the answer. */
const LINGER_MS = 2000;

/**
 * Fastify's `clientErrorHandler`: answers what node's parser refused before any request existed
 * in our JSON shape with a request id — 431 for a head over MAX_HEADER_BYTES, 408 for a request
 * timeout, 400 for anything else — then ends the connection gracefully (a bare destroy could
 * reset it while the client still sends, losing the answer).
 */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  const [code, message]: [ErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['REQUEST_HEADER_FIELDS_TOO_LARGE', `the request target and headers exceed ${MAX_HEADER_BYTES} bytes`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', 'the request was not received in time']
        : ['BAD_REQUEST', 'the request is malformed'];
  const requestId = `req_${ulid(Date.now())}`;
  this.log.info({ requestId, err: { code: error.code, message: error.message } }, `client error answered: ${code}`);

  // As node's own default: never write into a response already under way on this connection.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    socket.end(rawErrorResponse(code, message, requestId));
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  } else {
    socket.destroy();
  }
}
