import {
  collectHeaders,
  type HeaderPair,
  parseSignatureInput,
  type RawHeaders,
  type ReceivedWebhook,
  type Result,
  type SignatureParams,
  WEBHOOK_PROFILE,
  type WebhookVerificationFailure,
  type WebhookVerifierDeps,
} from '@paygate/protocol/web';
import { PaygateConfigError, WebhookVerificationError } from './errors.js';
import { parseWebhookEvent, type WebhookEvent } from './events.js';
import { PublishedWebhookKeys, type PublishedWebhookKeysOptions } from './published-keys.js';
import { loadWebhookKeys, type WebhookKey } from './webhook-keys.js';

// The webhook verifier of both SDK entries: `WebhookVerifier` of `@paygate/merchant` (webhook.ts,
// on the protocol's Node entry) and of `@paygate/merchant/web` (web.ts, on its web entry), which
// differ only in the protocol function that checks a webhook and in the type of the body bytes.
// No Node built-in and no Buffer here.

/** Headers in any of the forms HTTP libraries hand out. */
export type IncomingHeaders = RawHeaders | Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A webhook exactly as it arrived: nothing decoded, nothing parsed. */
export interface IncomingWebhook {
  /** Request method; a webhook is a POST (checked when given). */
  readonly method?: string;
  /**
   * The request target as received: path and raw query, e.g. `/webhook/payment?tenant=eu`
   * (Node's `req.url`, Express's `req.originalUrl`). An absolute URL is accepted too.
   */
  readonly target: string;
  /**
   * The headers. Node's `req.rawHeaders` is best: it keeps repeated headers visible, and a
   * repeated signature header is refused.
   */
  readonly headers: IncomingHeaders;
  /** The raw body bytes, exactly as received. */
  readonly body: Uint8Array;
}

/**
 * A webhook that passed every check, with its event parsed; `VerifiedEvent` of each entry names
 * its body type.
 */
export interface VerifiedEventOf<Body extends Uint8Array> {
  /** The typed event. */
  readonly event: WebhookEvent;
  /** The verified raw body bytes (a Buffer from `@paygate/merchant`, a Uint8Array from `@paygate/merchant/web`). */
  readonly body: Body;
  /** The keyid of the platform key that signed it. */
  readonly keyid: string;
}

/** How to verify webhooks. */
export interface WebhookVerifierOptions {
  /**
   * The platform webhook public keys by keyid, as onboarding prints them:
   * `[{ keyid: 'wk_test_…', publicKey: '<base64 raw 32 bytes>' }]`. List every key the portal
   * shows as active: during a rotation the platform may sign with either. Give these,
   * `publishedKeys`, or both (a keyid listed here is used as given).
   */
  readonly webhookKeys?: readonly WebhookKey[];
  /**
   * Fetch the keys from the platform's published endpoint (`GET /.well-known/paygate/webhook-keys`)
   * and cache them, following rotations by itself: a {@link PublishedWebhookKeys}, or its
   * options (`{ baseUrl }` at least).
   */
  readonly publishedKeys?: PublishedWebhookKeys | PublishedWebhookKeysOptions;
  /** The clock, milliseconds since the epoch (default `Date.now`). */
  readonly clock?: () => number;
  /**
   * The replay guard: resolves `true` when the nonce is new (store it until `expires`, Unix
   * seconds), `false` for a replay, which is refused (check `nonce`). By default each verifier
   * keeps the nonces it saw in memory until they expire ({@link memoryNonceGuard}); give a shared
   * store (a database table, Redis `SET NX EX`) when several processes receive webhooks. The
   * platform signs every attempt afresh, so a real delivery never repeats a nonce.
   */
  readonly consumeNonce?: (nonce: string, expires: number) => boolean | Promise<boolean>;
}

/**
 * A replay guard in this process's memory: `true` the first time a nonce is seen, `false` until
 * it expires. Nonces are forgotten once their signature's `expires` has passed (after that the
 * time window refuses the request anyway), so memory holds at most 300 s of deliveries.
 */
export function memoryNonceGuard(clock: () => number = Date.now): (nonce: string, expires: number) => boolean {
  const seen = new Map<string, number>();
  return (nonce, expires) => {
    const now = Math.floor(clock() / 1000);
    // Oldest first (expires grows with arrival, near enough): stop at the first still live.
    for (const [old, until] of seen) {
      if (until >= now) break;
      seen.delete(old);
    }
    if (seen.has(nonce)) return false;
    seen.set(nonce, expires);
    return true;
  };
}

/** Splits a request target into its raw path and raw query (undefined when there is no `?`). */
export function splitTarget(target: string): { path: string; query: string | undefined } {
  let rest = target;
  // Absolute form (`POST http://host/path`): keep only the path and query, raw.
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(rest);
  if (absolute) rest = rest.slice(absolute[0].length) || '/';
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const mark = rest.indexOf('?');
  return mark < 0 ? { path: rest, query: undefined } : { path: rest.slice(0, mark), query: rest.slice(mark + 1) };
}

function toRawHeaders(headers: IncomingHeaders): RawHeaders {
  if (Array.isArray(headers)) return headers as RawHeaders;
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    const pairs: HeaderPair[] = [];
    (headers as Headers).forEach((value, name) => pairs.push([name, value]));
    return pairs;
  }
  const pairs: HeaderPair[] = [];
  for (const [name, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (value === undefined) continue;
    if (typeof value === 'string') pairs.push([name, value]);
    else for (const one of value) pairs.push([name, one]);
  }
  return pairs;
}

const HINTS: Readonly<Record<WebhookVerificationFailure['check'], string>> = {
  shape:
    'This is not a Paygate webhook delivery as sent: a POST with Content-Type, Content-Digest, Webhook-Event-Id, Signature-Input and Signature, each once.',
  digest:
    'The body bytes are not the ones the platform signed. Verify the raw request body exactly as received: a body that was parsed and re-serialized (express.json(), a framework JSON parser, a logging middleware) never matches.',
  'event-id': 'The Webhook-Event-Id header must equal the eventId in the body; the delivery was altered.',
  'signature-input':
    'The Signature-Input is malformed or outside its time window (signatures live 300 s). If it expired, check this server’s clock, or whether the delivery was held up or replayed.',
  keyid:
    'No configured webhook key has this keyid. Add every key onboarding or the portal lists under webhookKeys (after a platform key rotation there is a new one).',
  signature:
    'The Ed25519 signature does not verify over the signature base rebuilt from this request. Either the path or query differ from the webhookUrl the platform called (a proxy or router that rewrites the URL; use the target as received), or the public key configured for this keyid is not the platform’s.',
  nonce: 'This exact delivery (same nonce) was seen before: a replay. The platform signs every attempt afresh.',
};

/** What a protocol entry's `verifyWebhook` answers, with its body type. */
export type ProtocolWebhookResult<Body extends Uint8Array> = Result<
  { readonly body: Body; readonly eventId: string; readonly keyid: string; readonly params: SignatureParams },
  WebhookVerificationFailure
>;

/**
 * The verifier both entries' `WebhookVerifier` extend: keys, published keys, replay guard, hints
 * and event parsing, over the protocol entry's `verifyWebhook` each passes in.
 */
export abstract class WebhookVerifierBase<Body extends Uint8Array> {
  readonly #keys: ReadonlyMap<string, Uint8Array>;
  readonly #published: PublishedWebhookKeys | undefined;
  #lastPublished: ReadonlyMap<string, Uint8Array> = new Map();
  readonly #clock: () => number;
  readonly #consumeNonce: NonNullable<WebhookVerifierOptions['consumeNonce']>;

  /** @throws {@link PaygateConfigError} when a key does not load, or neither keys nor `publishedKeys` are given. */
  constructor(options: WebhookVerifierOptions) {
    if (options.publishedKeys === undefined && options.webhookKeys === undefined) {
      throw new PaygateConfigError(
        'WebhookVerifier: give webhookKeys (from onboarding), publishedKeys ({ baseUrl }), or both',
      );
    }
    this.#keys = options.webhookKeys === undefined ? new Map() : loadWebhookKeys(options.webhookKeys);
    this.#published =
      options.publishedKeys === undefined || options.publishedKeys instanceof PublishedWebhookKeys
        ? options.publishedKeys
        : new PublishedWebhookKeys(options.publishedKeys);
    this.#clock = options.clock ?? Date.now;
    this.#consumeNonce = options.consumeNonce ?? memoryNonceGuard(this.#clock);
  }

  /** The protocol entry's `verifyWebhook`. */
  protected abstract checkWebhook(
    webhook: ReceivedWebhook,
    deps: WebhookVerifierDeps,
  ): Promise<ProtocolWebhookResult<Body>>;

  /** The keyids this verifier accepts (with `publishedKeys`: the given ones and those last fetched). */
  get keyids(): string[] {
    return [...new Set([...this.#keys.keys(), ...this.#lastPublished.keys()])];
  }

  /** The keys to verify this webhook with: the given ones, and the published ones for its keyid. */
  async #keysFor(headers: RawHeaders): Promise<ReadonlyMap<string, Uint8Array>> {
    if (!this.#published) return this.#keys;
    const input = collectHeaders(headers).get('signature-input');
    const params = input?.length === 1 ? parseSignatureInput(input[0] as string, WEBHOOK_PROFILE) : undefined;
    const keyid = params?.ok ? params.value.keyid : undefined;
    if (keyid !== undefined && this.#keys.has(keyid)) return this.#keys;
    try {
      this.#lastPublished = await this.#published.keysFor(keyid);
    } catch (error) {
      throw new WebhookVerificationError({
        check: 'keyid',
        reason: `the published webhook keys could not be fetched: ${(error as Error).message}`,
        hint: `Check that ${this.#published.url} is reachable from this server.`,
      });
    }
    return new Map([...this.#lastPublished, ...this.#keys]);
  }

  /**
   * Verifies a webhook and returns its authentic body bytes, unparsed.
   *
   * @throws {@link WebhookVerificationError} naming the check that failed.
   */
  async verifyBytes(webhook: IncomingWebhook): Promise<{
    readonly body: Body;
    readonly eventId: string;
    readonly keyid: string;
    readonly params: SignatureParams;
  }> {
    const { path, query } = splitTarget(webhook.target);
    const headers = toRawHeaders(webhook.headers);
    const publicKeys = await this.#keysFor(headers);
    const result = await this.checkWebhook(
      {
        ...(webhook.method !== undefined ? { method: webhook.method } : {}),
        path,
        query,
        headers,
        body: webhook.body,
      },
      {
        now: Math.floor(this.#clock() / 1000),
        publicKeys,
        consumeNonce: this.#consumeNonce,
      },
    );
    if (result.ok) return result.value;
    const failure = result.error;
    const hint =
      failure.check === 'keyid'
        ? `${HINTS.keyid} Configured keyids: ${this.keyids.join(', ')}${this.#published ? ` (with those published at ${this.#published.url})` : ''}.`
        : failure.check === 'signature-input' && /expired|future/.test(failure.reason)
          ? `${HINTS['signature-input']} This server's clock reads ${Math.floor(this.#clock() / 1000)} (Unix seconds).`
          : HINTS[failure.check];
    throw new WebhookVerificationError({
      check: failure.check,
      reason: failure.reason,
      hint,
      signatureBase: failure.signatureBase,
    });
  }

  /**
   * Verifies a webhook, then parses its body into a typed event.
   *
   * @throws {@link WebhookVerificationError} naming the check that failed (`payload` when an
   * authentic body is not an event this SDK knows).
   */
  async verify(webhook: IncomingWebhook): Promise<VerifiedEventOf<Body>> {
    const verified = await this.verifyBytes(webhook);
    return { event: parseWebhookEvent(verified.body), body: verified.body, keyid: verified.keyid };
  }
}
