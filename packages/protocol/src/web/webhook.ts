import type { HeaderPair } from '../headers.js';
import { ok, type Result } from '../result.js';
import type { SignatureParams } from '../signature-input.js';
import {
  checkWebhook,
  type ReceivedWebhook,
  type WebhookVerificationFailure,
  type WebhookVerifierDeps,
} from '../webhook-core.js';
import { verifyContentDigest } from './digest.js';
import { verify } from './keys.js';

/** A webhook that passed every check: its raw body bytes, its eventId and keyid. */
export interface VerifiedWebhook {
  readonly body: Uint8Array;
  readonly eventId: string;
  readonly keyid: string;
  readonly params: SignatureParams;
}

/**
 * Verifies a webhook as the specification orders it, as the Node entry's `verifyWebhook` does
 * and with the same failures: Content-Digest over the raw body; Webhook-Event-Id equal to the
 * body's eventId; the time window (refused when now > expires, now < created - 300, or
 * expires - created > 300) and nonce format; keyid selecting a known key; the Ed25519 signature
 * over the rebuilt base (as strict as libsodium); then the optional nonce replay guard.
 */
export async function verifyWebhook(
  webhook: ReceivedWebhook,
  deps: WebhookVerifierDeps,
): Promise<Result<VerifiedWebhook, WebhookVerificationFailure>> {
  const checked = await checkWebhook(webhook, deps, { verifyContentDigest, verify });
  return checked.ok ? ok({ body: Uint8Array.from(webhook.body), ...checked.value }) : checked;
}

/**
 * {@link verifyWebhook} for a Fetch API `Request`, as edge runtimes and service workers receive
 * it: reads the raw body once, and takes the path and query from `request.url`. The `Headers`
 * class joins repeated headers with commas; a repeated signature header then fails to parse,
 * and a repeated Content-Digest fails to match.
 */
export async function verifyWebhookRequest(
  request: Request,
  deps: WebhookVerifierDeps,
): Promise<Result<VerifiedWebhook, WebhookVerificationFailure>> {
  const url = new URL(request.url);
  const headers: HeaderPair[] = [];
  request.headers.forEach((value, name) => headers.push([name, value]));
  return verifyWebhook(
    {
      method: request.method,
      path: url.pathname,
      query: url.search === '' ? undefined : url.search.slice(1),
      headers,
      body: new Uint8Array(await request.arrayBuffer()),
    },
    deps,
  );
}
