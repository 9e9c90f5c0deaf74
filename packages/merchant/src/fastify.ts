/**
 * The Fastify adapter: `import { fastifyWebhook } from '@paygate/merchant/fastify'`.
 *
 * @module
 */
import type { FastifyPluginAsync } from 'fastify';
import { answerWebhook, MAX_WEBHOOK_BODY_BYTES, type WebhookHandlerOptions } from './http.js';

/** Options of {@link fastifyWebhook}. */
export interface FastifyWebhookOptions extends WebhookHandlerOptions {
  /** The route path(s) receiving webhooks, e.g. `/webhook/payment` (under the plugin's prefix). */
  readonly path: string | readonly string[];
}

/**
 * A Fastify plugin serving POST webhook routes. It registers, in its own encapsulated scope,
 * a content-type parser that keeps the body as raw bytes, so the application's JSON parser
 * never touches webhook bodies; it verifies against the request target as received
 * (`request.raw.url`).
 *
 * @example
 * ```ts
 * await app.register(fastifyWebhook, {
 *   path: ['/webhook/payment', '/webhook/payout'],
 *   verifier,
 *   onEvent: (event) => inbox.process(event),
 * });
 * ```
 */
export const fastifyWebhook: FastifyPluginAsync<FastifyWebhookOptions> = async (app, options) => {
  // This plugin is deliberately not wrapped with fastify-plugin: these parsers stay in its scope.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BODY_BYTES }, (_request, body, done) =>
    done(null, body),
  );
  const paths = typeof options.path === 'string' ? [options.path] : options.path;
  for (const path of paths) {
    app.post(path, async (request, reply) => {
      const answer = await answerWebhook(options, {
        method: request.raw.method ?? request.method,
        target: request.raw.url ?? request.url,
        headers: request.raw.rawHeaders,
        body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
  }
};

export type { WebhookHandlerOptions } from './http.js';
