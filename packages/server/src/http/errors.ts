import { STATUS_CODES, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/db.js';
import {
  commonErrors,
  declareErrors,
  DomainError,
  type ErrorCode,
  type ErrorSpec,
  type FieldError,
} from '../errors.js';
import { channelErrors } from '../modules/channels/errors.js';
import { payoutErrors } from '../modules/payouts/errors.js';
import { accountErrors } from '../modules/accounts/errors.js';
import { portalErrors } from '../modules/portal/errors.js';
import { webhookErrors } from '../modules/webhooks/errors.js';

/** The HTTP layer's own answers, on any path and before any route decides anything. */
export const httpErrors = declareErrors({
  /** A malformed HTTP message: a repeated single-valued header, a missing Host, a body that is not JSON. */
  BAD_REQUEST: { status: 400, message: 'the request is malformed', kind: 'transport' },
  REQUEST_TIMEOUT: { status: 408, message: 'the request was not received in time', kind: 'transport' },
  /** A wire body over 2 MiB, or a sealed plaintext over 1 MiB (decisions.md, Responses). */
  PAYLOAD_TOO_LARGE: { status: 413, message: 'the body exceeds 2 MiB', kind: 'business' },
  /** Over the per-merchant rate (http/rate-limit.ts); Retry-After says when to come back. */
  RATE_LIMITED: { status: 429, message: 'too many requests for this merchant; retry later', kind: 'business' },
  /** Too many header lines, or a request head over its size limit (http/header-limits.ts). */
  REQUEST_HEADER_FIELDS_TOO_LARGE: {
    status: 431,
    message: 'the request target and headers are too large',
    kind: 'transport',
  },
  /** A transfer coding other than chunked (RFC 9112 §6.1). */
  NOT_IMPLEMENTED: { status: 501, message: 'only the chunked transfer coding is supported', kind: 'transport' },
  /** The database is away; every write is idempotent on its business key, so a retry is safe. */
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'the service is briefly unavailable; retry shortly',
    kind: 'transport',
  },
  /** `/readyz` while the instance drains or its database does not answer; any path before the app is built. */
  NOT_READY: { status: 503, message: 'the instance is not ready', kind: 'transport' },
});

declare module '../errors.js' {
  interface ErrorDeclarations {
    http: typeof httpErrors;
  }
}

type Merged<P extends readonly object[]> = P extends readonly [infer H, ...infer R extends readonly object[]]
  ? H & Merged<R>
  : unknown;

/** One object of every module's declarations; a code declared by two modules is refused. */
export function mergeCatalogue<const P extends readonly Readonly<Record<string, ErrorSpec>>[]>(
  ...parts: P
): Readonly<Merged<P>> {
  const merged: Record<string, ErrorSpec> = {};
  for (const part of parts) {
    for (const [code, spec] of Object.entries(part)) {
      if (code in merged) throw new Error(`error code ${code} is declared twice`);
      merged[code] = spec;
    }
  }
  return Object.freeze(merged) as Readonly<Merged<P>>;
}

/**
 * The error catalogue: every failure any scope answers (merchant API, portal, cashier, operator
 * API, channel notifications, health), with its status. Modules declare their own; this is the
 * only place that turns a code into an HTTP status.
 */
export const CATALOGUE = mergeCatalogue(
  commonErrors,
  httpErrors,
  payoutErrors,
  webhookErrors,
  channelErrors,
  accountErrors,
  portalErrors,
);

export type { ErrorCode };

/** True when A and B are the same set of codes; the assignment below fails to compile otherwise. */
type SameCodes<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The catalogue merges every declaration that `ErrorCode` knows of, and nothing else. */
const everyDeclarationMerged: SameCodes<keyof typeof CATALOGUE, ErrorCode> = true;
void everyDeclarationMerged;

/** Every catalogue code, in declaration order (for schemas and documentation). */
export const ERROR_CODES = Object.keys(CATALOGUE) as readonly ErrorCode[];

/** The codes the merchant API's OpenAPI document lists (all but the portal's and operator's own). */
export const MERCHANT_API_ERROR_CODES = ERROR_CODES.filter((code) => CATALOGUE[code].kind !== 'private');

/** The HTTP status of a code. */
export const statusOf = (code: ErrorCode): number => CATALOGUE[code].status;

/** `{"msg": "SUCCESS", "data": …}`. */
export const success = <T>(data: T) => ({ msg: 'SUCCESS' as const, data });

/** A failure body: `msg`, then `message` and the field errors when there are any. */
export interface ErrorBody {
  readonly msg: ErrorCode;
  readonly message?: string;
  readonly errors?: readonly FieldError[];
}

/** The body of `code`; without a message, the bare `{"msg": code}`. */
export function errorBody(code: ErrorCode, message?: string, fieldErrors: readonly FieldError[] = []): ErrorBody {
  return {
    msg: code,
    ...(message !== undefined ? { message } : {}),
    ...(fieldErrors.length > 0 ? { errors: fieldErrors } : {}),
  };
}

/** What an answer may add to the body: a Retry-After header. */
interface AnswerOptions {
  readonly retryAfterSeconds?: number | undefined;
}

/**
 * Answers `code` on a Fastify reply, with its catalogue status. Routes and hooks throw a
 * `DomainError` instead; this is for the error handler and the few places that cannot throw.
 */
export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message?: string,
  fieldErrors: readonly FieldError[] = [],
  options: AnswerOptions = {},
): FastifyReply {
  if (options.retryAfterSeconds !== undefined) reply.header('retry-after', String(options.retryAfterSeconds));
  return reply.code(statusOf(code)).send(errorBody(code, message, fieldErrors));
}

/** Sets the status of `code` on a reply whose body is not JSON (an HTML error page). */
export const withErrorStatus = (reply: FastifyReply, code: ErrorCode): FastifyReply => reply.code(statusOf(code));

/** Answers `code` on a raw Node response (before the app exists, or a listener without Fastify). */
export function writeError(
  response: ServerResponse,
  code: ErrorCode,
  options: AnswerOptions & { message?: string; headers?: OutgoingHttpHeaders } = {},
): void {
  response.writeHead(statusOf(code), {
    'content-type': 'application/json',
    ...options.headers,
    ...(options.retryAfterSeconds !== undefined ? { 'retry-after': String(options.retryAfterSeconds) } : {}),
  });
  response.end(JSON.stringify(errorBody(code, options.message)));
}

/**
 * A complete HTTP/1.1 answer of `code` as bytes, for a socket whose request node's parser
 * refused (no response object exists); it closes the connection.
 */
export function rawErrorResponse(code: ErrorCode, message: string, requestId: string): string {
  const status = statusOf(code);
  const json = JSON.stringify(errorBody(code, message));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(json)}\r\n` +
    `Request-Id: ${requestId}\r\n` +
    'Connection: close\r\n\r\n' +
    json
  );
}

/** Maps domain and framework errors to `{msg, …}` bodies; anything unexpected is a logged 500. */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof DomainError) {
    return sendError(reply, error.code, error.bare ? undefined : error.message, error.fieldErrors, {
      retryAfterSeconds: error.retryAfterSeconds,
    });
  }
  if (error instanceof DatabaseUnavailableError) {
    // Not a fault of ours nor of the caller's: the database is away. The caller may retry (every
    // write is idempotent on its business key, so a create that did commit is found again).
    request.log.warn({ err: { message: error.message } }, 'database unavailable');
    return sendError(reply, 'SERVICE_UNAVAILABLE', httpErrors.SERVICE_UNAVAILABLE.message, [], {
      retryAfterSeconds: 1,
    });
  }
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return sendError(reply, 'PAYLOAD_TOO_LARGE', httpErrors.PAYLOAD_TOO_LARGE.message);
  }
  const status = (error as FastifyError).statusCode;
  const clientError = status !== undefined && status >= 400 && status < 500;
  // Under the merchant API, a request the framework cannot even read failed authentication's
  // first step (request shape): the same 401 as every other authentication failure.
  if (clientError && request.url.startsWith('/api/') && !request.authenticated) {
    request.log.info({ auth: { step: 'shape', reason: error.message } }, 'request refused: UNAUTHORIZED');
    return sendError(reply, 'UNAUTHORIZED');
  }
  if (clientError) {
    request.log.info({ err: { code, message: error.message } }, 'malformed request');
    return sendError(reply, 'BAD_REQUEST', httpErrors.BAD_REQUEST.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(reply, 'INTERNAL_ERROR');
}
