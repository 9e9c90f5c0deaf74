import { MAX_WIRE_BODY_BYTES, verifyRequest } from '@paygate/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError, unauthorized, validationFailed } from '../errors.js';
import type { Merchant } from '../modules/merchants/service.js';
import { inSpan } from '../observability/tracing.js';
import type { Services } from '../services.js';
import { RateLimiter } from './rate-limit.js';
import { parseStrictJson } from './strict-json.js';

/** What authentication established about a request. */
export interface Authenticated {
  readonly merchant: Merchant;
  /** Decrypted business JSON bytes (POST only). */
  readonly plaintext: Buffer | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    authenticated: Authenticated | null;
  }
}

/** The request target split as received: raw path and raw query (undefined when no `?`). */
export function rawTarget(request: FastifyRequest): { path: string; query: string | undefined } {
  const url = request.raw.url ?? '';
  const mark = url.indexOf('?');
  return mark < 0 ? { path: url, query: undefined } : { path: url.slice(0, mark), query: url.slice(mark + 1) };
}

const ORDER_NUMBER = { payments: /^P[0-9]{18}$/, payouts: /^W[0-9]{18}$/ } as const;

/**
 * The 404 message for a REST-style read of one order, `/api/v1/payments/{id}` or
 * `/api/v1/payouts/{id}` (a path no route has): where that read is, with the order number when
 * the id is one (nothing else the caller sent is echoed). Undefined for any other path.
 */
export function restStyleHint(path: string): string | undefined {
  const match = /^\/api\/v1\/(payments|payouts)\/([^/]+)\/?$/.exec(path);
  if (!match) return undefined;
  const noun = match[1] as 'payments' | 'payouts';
  const id = match[2] as string;
  const query = ORDER_NUMBER[noun].test(id)
    ? `?orderNo=${id}`
    : `?orderNo=${noun === 'payments' ? 'P' : 'W'}… or ?merchantOrderNo=…`;
  return `no such endpoint: read a ${noun.slice(0, -1)} with GET /api/v1/${noun}${query}`;
}

/** The authenticated merchant; only callable inside the merchant API scope. */
export function merchantOf(request: FastifyRequest): Merchant {
  if (!request.authenticated) throw new Error('merchantOf called outside the authenticated scope');
  return request.authenticated.merchant;
}

/**
 * The decrypted business JSON of a write request, parsed strictly (a member name given twice is
 * VALIDATION_FAILED naming it); a non-object is VALIDATION_FAILED.
 */
export function businessBody(request: FastifyRequest): Record<string, unknown> {
  const plaintext = request.authenticated?.plaintext;
  if (!plaintext) throw new Error('businessBody called on a request without a sealed body');
  let parsed: unknown;
  try {
    parsed = parseStrictJson(plaintext.toString('utf8'));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw validationFailed([{ field: 'body', message: 'the decrypted body is not JSON' }]);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw validationFailed([{ field: 'body', message: 'the decrypted body is not a JSON object' }]);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Registers the merchant-API scope: the raw body read as bytes with a 2 MiB cap, and every
 * request (matched route or not) authenticated before anything else runs. A failure of any
 * kind is the same 401; the reason goes to the log with the request id only.
 */
export function merchantApiScope(
  api: FastifyInstance,
  services: Services,
  registerRoutes: (api: FastifyInstance) => void,
): void {
  api.decorateRequest('authenticated', null);
  const limiter = new RateLimiter(services.config.rateLimitPerSecond, services.now);
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WIRE_BODY_BYTES }, (_request, body, done) =>
    done(null, body),
  );

  const authenticate = async (request: FastifyRequest) => {
    const { path, query } = rawTarget(request);
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    // The span records the outcome and the failing step only: no key, signature or reason text.
    const result = await inSpan('authenticate', {}, async (span) => {
      const verified = await verifyRequest(
        { method: request.raw.method ?? '', path, query, headers: request.raw.rawHeaders, body },
        {
          now: Math.floor(services.now() / 1000),
          lookupMerchant: (accessKey) => services.merchants.findByAccessKey(accessKey),
          consumeNonce: (merchant, nonce, expires) => services.nonces.consume(merchant.id, nonce, expires),
          lookupBodyKey: (keyId) => services.platformKeys.bodyKeyPair(keyId),
        },
      );
      if (verified.ok) span.setAttribute('paygate.auth.outcome', 'ok');
      else span.setAttributes({ 'paygate.auth.outcome': 'refused', 'paygate.auth.step': verified.error.step });
      return verified;
    });
    if (!result.ok) {
      const { step, reason, accessKey, signatureBase, tooLarge } = result.error;
      if (tooLarge) {
        throw new DomainError('PAYLOAD_TOO_LARGE', 'the sealed plaintext exceeds 1 MiB');
      }
      services.metrics.authFailure(step);
      request.log.info({ auth: { step, reason, accessKey } }, 'request refused: UNAUTHORIZED');
      if (services.config.environment === 'sandbox') {
        services.rejectedRequests
          .record({
            accessKey,
            method: request.raw.method ?? '',
            path,
            step,
            reason,
            signatureBase,
            requestId: request.id,
          })
          .catch((error: unknown) => request.log.warn({ err: error }, 'could not record the rejected request'));
      }
      throw unauthorized();
    }
    request.authenticated = { merchant: result.value.merchant, plaintext: result.value.plaintext };
    if (!limiter.take(result.value.accessKey)) {
      throw new DomainError('RATE_LIMITED', 'too many requests for this merchant; retry later', [], {
        retryAfterSeconds: limiter.retryAfterSeconds(),
      });
    }
  };

  // The scope's hook also runs for the scope's not-found handler: unknown paths and methods are
  // authenticated too, so that nothing tells an unauthenticated caller which routes exist. A
  // signed REST-style read of one order (`GET /api/v1/payments/P…`) is told where that read is.
  api.addHook('preHandler', authenticate);
  api.setNotFoundHandler(async (request) => {
    const hint = request.method === 'GET' ? restStyleHint(rawTarget(request).path) : undefined;
    throw new DomainError('NOT_FOUND', hint ?? 'no such endpoint');
  });
  registerRoutes(api);
}
