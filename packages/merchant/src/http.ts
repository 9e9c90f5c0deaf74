import type { IncomingMessage, ServerResponse } from 'node:http';
import { InboxBusyError, RawBodyUnavailableError, WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './events.js';
import type { IncomingWebhook, WebhookVerifier } from './webhook.js';

/** Largest webhook body the adapters read (webhook bodies are a few hundred bytes). */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** What a verified event comes with besides the event itself. */
export interface EventContext {
  /** The verified raw body bytes. */
  readonly body: Buffer;
  /** The keyid of the platform key that signed it. */
  readonly keyid: string;
}

/**
 * Handles one verified event. Resolve once the event is processed or durably accepted (the
 * adapter then answers 200); throw to have the platform retry it later (the adapter answers 500).
 * Typically `(event) => inbox.process(event)`.
 */
export type EventHandler = (event: WebhookEvent, context: EventContext) => unknown;

/** Options shared by every webhook adapter. */
export interface WebhookHandlerOptions {
  /** Verifies deliveries (holds the platform webhook keys). */
  readonly verifier: WebhookVerifier;
  /** Processes each verified event. */
  readonly onEvent: EventHandler;
  /**
   * Told about every refused delivery and every handler failure, with the error (a
   * {@link WebhookVerificationError} names the failed check). Default: one line on stderr.
   */
  readonly onError?: (error: unknown) => void;
}

/** The HTTP answer to one delivery. */
export interface WebhookAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** A small JSON text; the platform keeps its first bytes in the delivery's attempt log. */
  readonly body: string;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): WebhookAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

const defaultOnError = (error: unknown) =>
  console.error(`[paygate] webhook: ${error instanceof Error ? error.message : String(error)}`);

/**
 * Verifies one delivery, hands the event to `onEvent` and says how to answer: 200 once
 * processed; 401 when verification failed (the body names the check, which the platform shows in
 * the delivery's attempt log); 422 when an authentic body is not a known event; 503 with
 * Retry-After while another delivery of the same event is in progress; 500 when the handler
 * failed or the raw body was not available. Every non-2xx answer makes the platform retry.
 * Never throws.
 */
export async function answerWebhook(
  options: WebhookHandlerOptions,
  incoming: IncomingWebhook | (() => Promise<IncomingWebhook>),
): Promise<WebhookAnswer> {
  const onError = options.onError ?? defaultOnError;
  try {
    const webhook = typeof incoming === 'function' ? await incoming() : incoming;
    const { event, body, keyid } = await options.verifier.verify(webhook);
    await options.onEvent(event, { body, keyid });
    return json(200, { received: true, eventId: event.eventId });
  } catch (error) {
    onError(error);
    if (error instanceof WebhookVerificationError) {
      const status = error.check === 'payload' ? 422 : 401;
      return json(status, { error: 'WEBHOOK_REFUSED', check: error.check, reason: error.reason });
    }
    if (error instanceof InboxBusyError) {
      return json(
        503,
        { error: 'IN_PROGRESS', eventId: error.eventId },
        { 'retry-after': String(error.retryAfterSeconds) },
      );
    }
    if (error instanceof RawBodyUnavailableError) return json(500, { error: 'RAW_BODY_UNAVAILABLE' });
    return json(500, { error: 'HANDLER_FAILED' });
  }
}

/** A Node request that something else may have read already (Express adds `body`). */
export type MaybeParsedRequest = IncomingMessage & { body?: unknown; originalUrl?: string };

/**
 * Reads a request's raw body bytes. A Buffer left by a raw-body parser (`express.raw()`) is
 * used as is; a body another parser consumed (an object or a string in `req.body`, or an
 * ended stream) cannot be verified and is refused with {@link RawBodyUnavailableError}.
 */
export async function readRawBody(req: MaybeParsedRequest, limit = MAX_WEBHOOK_BODY_BYTES): Promise<Buffer> {
  if (Buffer.isBuffer(req.body)) return req.body;
  if (req.body !== undefined || req.readableEnded) {
    throw new RawBodyUnavailableError(
      'the webhook body was already read and parsed by another middleware (typically express.json() or ' +
        'express.urlencoded()/text()), so its exact bytes are gone and the signature cannot be checked. ' +
        'Register the Paygate webhook route before app.use(express.json()), or mount the JSON parser only on the ' +
        'routes that need it.',
    );
  }
  return readStream(req, limit);
}

/**
 * The stream's bytes, read with listeners (an async iterator costs a receiver several times as
 * much per request). Past `limit` the request is destroyed and refused; one that closes before
 * its end (the sender gave up) is refused too.
 */
function readStream(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) {
        done();
        req.destroy();
        reject(new RawBodyUnavailableError(`the webhook body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onClose = () => {
      done();
      reject(new RawBodyUnavailableError('the request closed before its body ended'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The delivery as a Node request carries it: method, target as received, raw headers, raw body. */
export async function incomingFromNode(req: MaybeParsedRequest, target = req.url ?? '/'): Promise<IncomingWebhook> {
  return { method: req.method ?? '', target, headers: req.rawHeaders, body: await readRawBody(req) };
}

/** Writes an answer to a Node response. */
export function writeAnswer(res: ServerResponse, answer: WebhookAnswer): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

/**
 * A `node:http` request listener for a webhook URL: reads the raw body itself, verifies, calls
 * `onEvent`, answers.
 *
 * @example
 * ```ts
 * const handle = nodeWebhookHandler({ verifier, onEvent: (event) => inbox.process(event) });
 * createServer((req, res) => (req.url?.startsWith('/webhook/') ? handle(req, res) : notFound(res))).listen(3000);
 * ```
 */
export function nodeWebhookHandler(
  options: WebhookHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => writeAnswer(res, await answerWebhook(options, () => incomingFromNode(req)));
}
