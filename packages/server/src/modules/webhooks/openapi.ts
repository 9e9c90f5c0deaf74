import { EventListQuery, queryParameters } from '@paygate/wire';
import { page, type PathItem, readOperation, ref, writeOperation } from '../../openapi/common.js';

const DELIVERY_HEADERS = [
  ['Content-Type', 'application/json'],
  ['Content-Digest', '`sha-256=:<base64 SHA-256 of the body bytes>:`'],
  ['Webhook-Event-Id', 'Equal to eventId in the body'],
  [
    'Signature-Input',
    '`platform=("@method" "@path" "@query" "content-type" "content-digest" "webhook-event-id");created=…;expires=…;nonce="<uuid v4>";keyid="<platform webhook key id>";alg="ed25519"`',
  ],
  ['Signature', '`platform=:<base64 Ed25519 signature>:`'],
].map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } }));

const delivery = (summary: string, body: string) => ({
  post: {
    summary,
    description:
      'Sent to the order’s webhookUrl (the normalized form stored at create or update) when it reaches a final state; @path and @query are that URL’s. Every attempt is signed afresh (new created, expires, nonce) with the active platform webhook key, whose keyid selects it among the published keys; the body and eventId never change. Any non-2xx, timeout or connection error is retried on the schedule (PAYGATE_WEBHOOK_RETRY_SCHEDULE; by default 16 attempts over about three days, with jitter; Retry-After on 429/503 is honoured within it). Redirects are not followed. REFUNDED events stop 24 h after they were created.',
    parameters: DELIVERY_HEADERS,
    // Signed by the platform (Signature above), not by a merchant credential.
    security: [],
    requestBody: { required: true, content: { 'application/json': { schema: ref(body) } } },
    responses: {
      '2xx': { description: 'Processed or durably accepted; anything else is a failed attempt' },
      '4XX': {
        description:
          'Refused, e.g. 401 when verification fails: a failed attempt, retried on the schedule with a fresh signature',
      },
    },
  },
});

/** Deliveries the platform makes to merchants (OpenAPI 3.1 top-level `webhooks`). */
export const webhookDeliveries: Record<string, PathItem> = {
  paymentEvent: delivery('A payment reached a final state', 'PaymentEvent'),
  payoutEvent: delivery('A payout reached a final state, or was returned', 'PayoutEvent'),
};

export const webhookPaths: Record<string, PathItem> = {
  '/api/v1/events': {
    get: readOperation({
      summary: 'List webhook events',
      description:
        'The merchant’s webhook events, newest first, with cursor paging. With orderNo, each event also carries its attemptLog.',
      tags: ['Events'],
      query: queryParameters(EventListQuery),
      data: page(ref('WebhookEvent')),
    }),
  },
  '/api/v1/events/resend': {
    post: writeOperation({
      summary: 'Resend a webhook event',
      description:
        'Delivers the event again with the same eventId and body bytes and a fresh signature. A pending event is made due now; a delivered or failed one gets one more attempt (a failed REFUNDED event too: a deliberate resend is not an automatic retry). The operator command `paygate events resend --event-id EVT` does the same.',
      tags: ['Events'],
      plaintext: ref('ResendEventRequest'),
      data: ref('WebhookEvent'),
      errors: { '404': 'EVENT_NOT_FOUND: no such event of this merchant' },
    }),
  },
  '/api/v1/sandbox/webhooks/check': {
    post: writeOperation({
      summary: 'Sandbox: check your webhook receiver',
      description:
        'Sandbox only (404 in production). The platform fires correctly signed and tampered webhooks at url, one case after another, and answers what each case expected and what your receiver answered. The valid case is a payment.succeeded event (an orderNo no real order has, its own eventId per case) signed with the active platform webhook key for url, exactly as a delivery to url is: a receiver configured from onboarding accepts it with no extra key. The tampered cases are that delivery altered in one way each: Content-Digest of other bytes, body changed after signing, another private key under the platform keyid, an unknown keyid, expired, created in the future, lifetime over 300 s, the same request replayed (the first must be accepted, the second refused), Webhook-Event-Id not the body eventId, a re-serialized body, and missing Signature and/or Signature-Input. A 2xx is accepted, any other status refused; each request waits at most 5 s, and when the valid case gets no answer the rest are not sent. url follows the webhookUrl rules, SSRF guard included: a refused destination is VALIDATION_FAILED (field url) and nothing is sent. Redirects are not followed. `paygate-merchant check-receiver URL` calls this.',
      tags: ['Sandbox'],
      plaintext: ref('CheckReceiverRequest'),
      data: ref('ReceiverCheck'),
    }),
  },
};
