import { openApiComponents } from '@paygate/wire';
import { balancePaths } from '../modules/balances/openapi.js';
import { channelPaths } from '../modules/channels/openapi.js';
import { ledgerPaths } from '../modules/ledger/openapi.js';
import { paymentPaths } from '../modules/payments/openapi.js';
import { platformKeyPaths } from '../modules/platform-keys/openapi.js';
import { payoutPaths } from '../modules/payouts/openapi.js';
import { feePaths } from '../modules/fees/openapi.js';
import { webhookDeliveries, webhookPaths } from '../modules/webhooks/openapi.js';
import type { PathItem } from './common.js';
import { withExamples } from './merge-examples.js';
import { SIGNING_RECIPE } from './signing.js';

const paths: Record<string, PathItem> = {
  ...paymentPaths,
  ...payoutPaths,
  ...balancePaths,
  ...feePaths,
  ...ledgerPaths,
  ...webhookPaths,
  ...platformKeyPaths,
  ...channelPaths,
};

/** One sidebar entry each, in this order (the deliveries to merchants are the document's webhooks). */
const TAGS = [
  { name: 'Payments', description: 'Payment orders: money in, paid by the payer at the cashier or through a channel.' },
  { name: 'Payouts', description: 'Payout orders: money out to a payee, reserved at create and sent once confirmed.' },
  { name: 'Balances', description: 'Available and reserved balances, and the ledger postings behind them.' },
  { name: 'Rates', description: 'The fee table: pay-in fee per currency and method, payout fee per currency.' },
  {
    name: 'Events',
    description:
      'The webhook events of your orders and their delivery attempts, a resend, and the published keys webhooks are signed with.',
  },
  {
    name: 'Sandbox',
    description: 'Sandbox only (404 in production): act as the channel, or check your webhook receiver.',
  },
  { name: 'Channels', description: 'Called by payment channels, not by merchants.' },
];

/**
 * The OpenAPI 3.1 document of the merchant API. Its component schemas are generated from the
 * wire schemas (`@paygate/wire`), which the server also validates requests with and types its
 * answers by; the operations here refer to them by `$ref` only.
 */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Paygate merchant API',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Every request is signed (RFC 9421, Ed25519, label merchant) and every POST body is a libsodium sealed box inside the four-field envelope, with an RFC 9530 Content-Digest: see **Signing requests** below. Responses are `{"msg":"SUCCESS","data":…}` or `{"msg":"<CODE>",…}`; every response carries a Request-Id header. Business JSON is read strictly: a member an operation does not define (a misspelt `returnURL`, say) is refused with 400 VALIDATION_FAILED and one error naming each such member, and every field error is a sentence naming the field and what it takes.\n\n' +
        SIGNING_RECIPE,
    },
    // Relative: the platform this document was loaded from. A platform started with
    // PAYGATE_PUBLIC_URL serves its document with that address instead (app.ts).
    servers: [{ url: '/', description: 'This platform' }],
    tags: TAGS,
    components: {
      securitySchemes: {
        merchantSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'Signature',
          description:
            'RFC 9421 signature with the merchant Ed25519 key. Writes cover @method @path content-type content-encryption content-digest idempotency-key merchant-access-key; reads cover @method @path @query merchant-access-key. expires - created ≤ 300 s; nonce is a one-time UUID v4. The parameters created, expires, nonce and alg each appear once, in any order, with any optional whitespace RFC 8941 allows (keyid and others are refused); @signature-params is their canonical serialization in the order sent, so third-party RFC 9421 signers interoperate. The full recipe with a worked example is under **Signing requests** in the introduction.',
        },
      },
      schemas: openApiComponents(),
    },
    ...withExamples(paths, webhookDeliveries),
  };
}

/** The document as committed in `packages/server/openapi.json`. */
export const openApiJson = () => `${JSON.stringify(openApiDocument(), null, 2)}\n`;
