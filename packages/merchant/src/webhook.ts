import { type ReceivedWebhook, verifyWebhook, type WebhookVerifierDeps } from '@paygate/protocol';
import { type ProtocolWebhookResult, type VerifiedEventOf, WebhookVerifierBase } from './webhook-verifier.js';

export {
  type IncomingHeaders,
  type IncomingWebhook,
  memoryNonceGuard,
  type ProtocolWebhookResult,
  splitTarget,
  type VerifiedEventOf,
  type WebhookVerifierOptions,
} from './webhook-verifier.js';

/** A webhook that passed every check, with its event parsed and its raw body bytes. */
export type VerifiedEvent = VerifiedEventOf<Buffer>;

/**
 * Verifies Paygate webhooks through `@paygate/protocol`'s `verifyWebhook`, in the
 * specification's order: Content-Digest over the raw body, Webhook-Event-Id against the body's
 * eventId, the signature's time window and parameters, the keyid, the Ed25519 signature over the
 * base rebuilt from the path and raw query as received; then parses the verified bytes into a
 * typed event.
 *
 * Framework adapters (`nodeWebhookHandler`, `@paygate/merchant/express`,
 * `@paygate/merchant/fastify`) read the raw body themselves and call this. On edge runtimes,
 * `@paygate/merchant/web` has the same class over the protocol's web entry.
 */
export class WebhookVerifier extends WebhookVerifierBase<Buffer> {
  protected override checkWebhook(
    webhook: ReceivedWebhook,
    deps: WebhookVerifierDeps,
  ): Promise<ProtocolWebhookResult<Buffer>> {
    return verifyWebhook(webhook, deps);
  }
}
