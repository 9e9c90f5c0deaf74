import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/db.js';
import { DomainError, type ErrorCode } from '../errors.js';

/** The HTTP status of each business failure code (decisions.md, Responses). */
const STATUS: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_FAILED: 400,
  ORDER_NOT_FOUND: 404,
  EVENT_NOT_FOUND: 404,
  NOT_FOUND: 404,
  DUPLICATE_ORDER: 409,
  INVALID_STATE: 409,
  INSUFFICIENT_BALANCE: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  BAD_REQUEST: 400,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  NOT_IMPLEMENTED: 501,
  CHANNEL_UNAVAILABLE: 503,
};

/** `{"msg": "SUCCESS", "data": …}`. */
export const success = <T>(data: T) => ({ msg: 'SUCCESS' as const, data });

/** The authentication failure body: the same for every cause. */
export const UNAUTHORIZED = Object.freeze({ msg: 'UNAUTHORIZED' });

/** Maps domain and framework errors to `{msg, …}` bodies; anything unexpected is a logged 500. */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof DomainError) {
    const body: Record<string, unknown> = { msg: error.code, message: error.message };
    if (error.fieldErrors.length > 0) body.errors = error.fieldErrors;
    return reply.code(STATUS[error.code]).send(body);
  }
  if (error instanceof DatabaseUnavailableError) {
    // Not a fault of ours nor of the caller's: the database is away. The caller may retry (every
    // write is idempotent on its business key, so a create that did commit is found again).
    request.log.warn({ err: { message: error.message } }, 'database unavailable');
    return reply
      .code(503)
      .header('retry-after', '1')
      .send({ msg: 'SERVICE_UNAVAILABLE', message: 'the service is briefly unavailable; retry shortly' });
  }
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return reply.code(413).send({ msg: 'PAYLOAD_TOO_LARGE', message: 'the body exceeds 2 MiB' });
  }
  const status = (error as FastifyError).statusCode;
  // Under the merchant API, a request the framework cannot even read failed authentication's
  // first step (request shape): the same 401 as every other authentication failure.
  if (
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    request.url.startsWith('/api/') &&
    !request.authenticated
  ) {
    request.log.info({ auth: { step: 'shape', reason: error.message } }, 'request refused: UNAUTHORIZED');
    return reply.code(401).send(UNAUTHORIZED);
  }
  if (status !== undefined && status >= 400 && status < 500) {
    request.log.info({ err: { code, message: error.message } }, 'malformed request');
    return reply.code(400).send({ msg: 'BAD_REQUEST', message: 'the request is malformed' });
  }
  request.log.error({ err: error }, 'unhandled error');
  return reply.code(500).send({ msg: 'INTERNAL_ERROR' });
}
