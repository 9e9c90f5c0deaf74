/**
 * The Express adapter: `import { expressWebhook } from '@paygate/merchant/express'`.
 *
 * @module
 */
import type { RequestHandler } from 'express';
import { answerWebhook, incomingFromNode, type WebhookHandlerOptions, writeAnswer } from './http.js';

/**
 * An Express handler for a webhook route. It reads the raw body from the request stream itself
 * and verifies against `req.originalUrl` (the path and query as received, even under a mounted
 * router). Register it before `app.use(express.json())`: a body that a JSON parser already
 * consumed cannot be verified, and the handler then answers 500 with `RAW_BODY_UNAVAILABLE`
 * and reports a `RawBodyUnavailableError` that says so. (A Buffer from `express.raw()` is
 * accepted.)
 *
 * @example
 * ```ts
 * const app = express();
 * app.post('/webhook/payment', expressWebhook({ verifier, onEvent: (event) => inbox.process(event) }));
 * app.use(express.json()); // after the webhook route
 * ```
 */
export function expressWebhook(options: WebhookHandlerOptions): RequestHandler {
  return (req, res) => {
    void answerWebhook(options, () => incomingFromNode(req, req.originalUrl)).then((answer) =>
      writeAnswer(res, answer),
    );
  };
}

export type { WebhookHandlerOptions } from './http.js';
