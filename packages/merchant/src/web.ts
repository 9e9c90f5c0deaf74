/**
 * The Paygate merchant SDK's webhook verification for edge runtimes and browsers (Cloudflare
 * Workers, Vercel Edge, Deno, Bun): {@link WebhookVerifier} as in `@paygate/merchant`, with the
 * same options, checks, errors and hints, over `@paygate/protocol/web` (WebCrypto and noble, no
 * Node built-in, no Buffer). Bodies are `Uint8Array`s. {@link WebhookVerifier.verifyRequest}
 * takes a Fetch API `Request` as such runtimes hand it. Requests are signed with
 * `@paygate/protocol/web` (`signWriteRequest`, `signReadRequest`).
 *
 * @packageDocumentation
 */
import { type HeaderPair, type ReceivedWebhook, verifyWebhook, type WebhookVerifierDeps } from '@paygate/protocol/web';
import {
  type IncomingWebhook,
  type ProtocolWebhookResult,
  type VerifiedEventOf,
  WebhookVerifierBase,
} from './webhook-verifier.js';

export { PaygateConfigError, WebhookVerificationError } from './errors.js';
export { parseWebhookEvent, type WebhookEvent } from './events.js';
export { PublishedWebhookKeys, type PublishedWebhookKeysOptions, WEBHOOK_KEYS_PATH } from './published-keys.js';
export {
  type IncomingHeaders,
  type IncomingWebhook,
  memoryNonceGuard,
  type ProtocolWebhookResult,
  splitTarget,
  type VerifiedEventOf,
  type WebhookVerifierOptions,
} from './webhook-verifier.js';
export { loadWebhookKeys, type WebhookKey } from './webhook-keys.js';

/** A webhook that passed every check, with its event parsed and its raw body bytes. */
export type VerifiedEvent = VerifiedEventOf<Uint8Array>;

/**
 * Verifies Paygate webhooks through `@paygate/protocol/web`'s `verifyWebhook`, in the
 * specification's order (Content-Digest over the raw body, Webhook-Event-Id against the body's
 * eventId, the time window and parameters, the keyid, the Ed25519 signature, the replay guard),
 * then parses the verified bytes into a typed event.
 *
 * @example
 * ```ts
 * const verifier = new WebhookVerifier({ webhookKeys: onboarding.webhookKeys });
 * export default {
 *   async fetch(request: Request) {
 *     const { event } = await verifier.verifyRequest(request); // throws WebhookVerificationError
 *     return new Response(null, { status: 204 });
 *   },
 * };
 * ```
 */
export class WebhookVerifier extends WebhookVerifierBase<Uint8Array> {
  protected override checkWebhook(
    webhook: ReceivedWebhook,
    deps: WebhookVerifierDeps,
  ): Promise<ProtocolWebhookResult<Uint8Array>> {
    return verifyWebhook(webhook, deps);
  }

  /**
   * {@link WebhookVerifier.verify} for a Fetch API `Request`: reads its raw body once and takes
   * the path and query from `request.url` (behind a proxy that rewrites URLs, call `verify` with
   * the target as the platform sent it).
   *
   * @throws {@link WebhookVerificationError} naming the check that failed.
   */
  async verifyRequest(request: Request): Promise<VerifiedEvent> {
    const url = new URL(request.url);
    const headers: HeaderPair[] = [];
    request.headers.forEach((value, name) => headers.push([name, value]));
    const webhook: IncomingWebhook = {
      method: request.method,
      target: `${url.pathname}${url.search}`,
      headers,
      body: new Uint8Array(await request.arrayBuffer()),
    };
    return this.verify(webhook);
  }
}
