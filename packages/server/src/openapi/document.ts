import { balancePaths, balanceSchemas } from '../modules/balances/openapi.js';
import { channelPaths, channelSchemas } from '../modules/channels/openapi.js';
import { ledgerPaths, ledgerSchemas } from '../modules/ledger/openapi.js';
import { paymentPaths, paymentSchemas } from '../modules/payments/openapi.js';
import { payoutPaths, payoutSchemas } from '../modules/payouts/openapi.js';
import { ratePaths, rateSchemas } from '../modules/rates/openapi.js';
import { webhookDeliveries, webhookPaths, webhookSchemas } from '../modules/webhooks/openapi.js';
import type { PathItem, Schema } from './common.js';
import { SIGNING_RECIPE } from './signing.js';

const schemas: Record<string, Schema> = {
  Envelope: {
    type: 'object',
    additionalProperties: false,
    required: ['version', 'alg', 'keyId', 'ciphertext'],
    description: 'Exactly these four members; unknown or duplicate members and trailing content are refused (401).',
    properties: {
      version: { const: 1 },
      alg: { const: 'sealedbox-v1-x25519-xsalsa20poly1305', description: 'Must equal the Content-Encryption header' },
      keyId: { type: 'string', description: 'Id of the platform body key sealed to' },
      ciphertext: {
        type: 'string',
        contentEncoding: 'base64',
        description: 'Canonical standard base64 of crypto_box_seal output',
      },
    },
  },
  Unauthorized: {
    type: 'object',
    required: ['msg'],
    additionalProperties: false,
    properties: { msg: { const: 'UNAUTHORIZED' } },
  },
  Error: {
    type: 'object',
    required: ['msg'],
    properties: {
      msg: {
        type: 'string',
        enum: [
          'VALIDATION_FAILED',
          'ORDER_NOT_FOUND',
          'EVENT_NOT_FOUND',
          'NOT_FOUND',
          'DUPLICATE_ORDER',
          'INVALID_STATE',
          'INSUFFICIENT_BALANCE',
          'PAYLOAD_TOO_LARGE',
          'RATE_LIMITED',
          'INTERNAL_ERROR',
          'BAD_REQUEST',
          'REQUEST_TIMEOUT',
          'REQUEST_HEADER_FIELDS_TOO_LARGE',
          'NOT_IMPLEMENTED',
          'SERVICE_UNAVAILABLE',
          'NOT_READY',
          'CHANNEL_UNAVAILABLE',
        ],
      },
      message: { type: 'string' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['field', 'message'],
          properties: { field: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
  },
  ...paymentSchemas,
  ...payoutSchemas,
  ...balanceSchemas,
  ...rateSchemas,
  ...ledgerSchemas,
  ...webhookSchemas,
  ...channelSchemas,
};

const paths: Record<string, PathItem> = {
  ...paymentPaths,
  ...payoutPaths,
  ...balancePaths,
  ...ratePaths,
  ...ledgerPaths,
  ...webhookPaths,
  ...channelPaths,
};

/** The OpenAPI 3.1 document of the merchant API. */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Paygate merchant API',
      version: '1.0.0',
      description:
        'Every request is signed (RFC 9421, Ed25519, label merchant) and every POST body is a libsodium sealed box inside the four-field envelope, with an RFC 9530 Content-Digest: see **Signing requests** below. Responses are `{"msg":"SUCCESS","data":…}` or `{"msg":"<CODE>",…}`; every response carries a Request-Id header.\n\n' +
        SIGNING_RECIPE,
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'Local sandbox (npm start)' }],
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
      schemas,
    },
    paths,
    webhooks: webhookDeliveries,
  };
}

/** The document as committed in `packages/server/openapi.json`. */
export const openApiJson = () => `${JSON.stringify(openApiDocument(), null, 2)}\n`;
