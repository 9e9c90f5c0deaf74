import { MAX_WIRE_BODY_BYTES, type VerificationStep, verifyRequest } from '@paygate/protocol';
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { isRefusal } from '../db/db.js';
import { NonceRefused, type RequestNonce } from '../db/request-nonce.js';
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
  /**
   * The request's nonce, on a route that records it with its business (see NonceMode); recorded
   * before the route ran on every other route.
   */
  readonly nonce: RequestNonce | undefined;
  /** For the refusal's record when the nonce turns out used before. */
  readonly accessKey: string;
  readonly signatureBase: string;
}

/**
 * When a route's request nonce is recorded (the route's `config.nonce`; by default before the route
 * runs, a round trip and a commit of its own):
 * - `in-write`: by the write's own statement or transaction, first (`nonceOf` hands it to the
 *   service); a replay's business never runs. A route that ends without recording it (a
 *   validation failure before any statement) has it recorded alone before it answers.
 * - `with-read`: in the same flight as the route's reads (its statement leaves in the same turn);
 *   the answer waits for it, and a replay's rows are never serialized. Only for routes that read.
 */
export type NonceMode = 'in-write' | 'with-read';

declare module 'fastify' {
  interface FastifyRequest {
    authenticated: Authenticated | null;
  }
  interface FastifyContextConfig {
    nonce?: NonceMode;
  }
}

/**
 * The authenticated request's nonce for its write to record (routes with `config.nonce` set),
 * undefined when it was recorded already.
 */
export function nonceOf(request: FastifyRequest): RequestNonce | undefined {
  const nonce = request.authenticated?.nonce;
  return nonce?.pending ? nonce : undefined;
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

  /** The answer to every authentication failure: the step to the log, the metrics and the sandbox's record. */
  const refuse = (
    request: FastifyRequest,
    failure: { step: VerificationStep; reason: string; accessKey?: string | undefined; signatureBase?: string },
  ): never => {
    const { step, reason, accessKey, signatureBase } = failure;
    services.metrics.authFailure(step);
    request.log.info({ auth: { step, reason, accessKey } }, 'request refused: UNAUTHORIZED');
    if (services.config.environment === 'sandbox') {
      const { path } = rawTarget(request);
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
  };
  /** Requests that took a token of the rate limiter (a replay found later gives it back). */
  const charged = new WeakSet<FastifyRequest>();
  const refuseReplay = (request: FastifyRequest, accessKey: string | undefined, signatureBase: string | undefined) => {
    // The token it took goes back: a replay is not counted against the merchant.
    if (accessKey !== undefined && charged.delete(request)) limiter.giveBack(accessKey);
    return refuse(request, {
      step: 'nonce',
      reason: 'the nonce was used before',
      accessKey,
      ...(signatureBase !== undefined ? { signatureBase } : {}),
    });
  };
  /** Records `nonce` now (alone, batched per turn); a replay is refused as at verification. */
  const settle = async (request: FastifyRequest, nonce: RequestNonce, accessKey: string, signatureBase: string) => {
    try {
      await nonce.settle();
    } catch (error) {
      if (error instanceof NonceRefused) refuseReplay(request, accessKey, signatureBase);
      throw error;
    }
  };

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
          // Recorded below: before the route, with its write, or with its read (NonceMode).
          consumeNonce: 'caller',
          lookupBodyKey: (keyId) => services.platformKeys.bodyKeyPair(keyId),
        },
      );
      if (verified.ok) span.setAttribute('paygate.auth.outcome', 'ok');
      else span.setAttributes({ 'paygate.auth.outcome': 'refused', 'paygate.auth.step': verified.error.step });
      return verified;
    });
    if (!result.ok) {
      const { accessKey, signatureBase, tooLarge, nonce } = result.error;
      // Past the signature (the envelope): the nonce is recorded as verification always did before
      // opening it, and a replay is refused as such.
      const merchant =
        nonce && accessKey !== undefined ? await services.merchants.findByAccessKey(accessKey) : undefined;
      if (nonce && merchant && !(await services.nonces.consume(merchant.id, nonce.value, nonce.expires))) {
        refuseReplay(request, accessKey, signatureBase);
      }
      if (tooLarge) {
        throw new DomainError('PAYLOAD_TOO_LARGE', 'the sealed plaintext exceeds 1 MiB');
      }
      return refuse(request, result.error);
    }
    const { merchant, accessKey, params, plaintext, signatureBase } = result.value;
    const nonce = services.nonces.pending(merchant.id, params.nonce, params.expires);
    const mode = request.routeOptions.config.nonce;
    const deferred =
      (mode === 'in-write' && result.value.kind === 'write') || (mode === 'with-read' && result.value.kind === 'read');
    if (!deferred) await settle(request, nonce, accessKey, signatureBase);
    // With the read: its statement leaves in the same turn as the route's reads (the answer waits
    // for it in the route's wrapper, below).
    else if (mode === 'with-read') nonce.settle().catch(() => {});
    request.authenticated = { merchant, plaintext, nonce: deferred ? nonce : undefined, accessKey, signatureBase };
    if (limiter.take(accessKey)) charged.add(request);
    else {
      // A replay is refused as such, not counted against the merchant.
      if (deferred) await settle(request, nonce, accessKey, signatureBase);
      throw new DomainError('RATE_LIMITED', 'too many requests for this merchant; retry later', [], {
        retryAfterSeconds: limiter.retryAfterSeconds(),
      });
    }
  };

  /**
   * The route, with its nonce decided before it answers (routes with `config.nonce`): a replay is
   * 401 whatever the route did, and its answer (rows read, a business error) is never serialized.
   */
  const decidingNonce = (handler: RouteHandlerMethod): RouteHandlerMethod =>
    async function (this: FastifyInstance, request, reply) {
      const authenticated = request.authenticated;
      let value: unknown;
      let failure: { readonly error: unknown } | undefined;
      try {
        value = await handler.call(this, request, reply);
      } catch (error) {
        failure = { error };
      }
      const nonce = authenticated?.nonce;
      if (nonce && authenticated) {
        const { accessKey, signatureBase } = authenticated;
        if (failure?.error instanceof NonceRefused || nonce.refused) refuseReplay(request, accessKey, signatureBase);
        if (nonce.pending && (failure === undefined || isRefusal(failure.error))) {
          // A route that answers must have recorded its nonce; a business refusal before any
          // statement (validation) has it recorded now, so that a replay is 401 as before.
          if (failure === undefined && request.routeOptions.config.nonce === 'in-write') {
            request.log.error('the route answered without recording its request nonce');
          }
          await settle(request, nonce, accessKey, signatureBase);
        }
      }
      if (failure) throw failure.error;
      return value;
    };
  api.addHook('onRoute', (route) => {
    if (route.config?.nonce !== undefined) route.handler = decidingNonce(route.handler);
  });

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
