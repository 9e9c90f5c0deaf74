/**
 * Building blocks of the OpenAPI 3.1 operations. Each module describes its own endpoints in
 * `modules/<noun>/openapi.ts`, referring to the component schemas generated from `@paygate/wire`
 * by `$ref`; `openapi/document.ts` assembles them, and `npm run openapi` writes
 * `packages/server/openapi.json` (a test keeps the committed file equal to this source).
 */
export type Schema = Record<string, unknown>;
export type PathItem = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** `{"msg":"SUCCESS","data": <schema>}`. */
export const successOf = (data: Schema): Schema => ({
  type: 'object',
  required: ['msg', 'data'],
  properties: { msg: { const: 'SUCCESS' }, data },
});

export const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});

/** Responses every merchant endpoint can give besides its success. */
export const COMMON_ERRORS = {
  '400': errorResponse('VALIDATION_FAILED with field errors'),
  '401': {
    description: 'UNAUTHORIZED: any authentication failure, always the same body',
    content: { 'application/json': { schema: ref('Unauthorized') } },
  },
  '413': errorResponse('PAYLOAD_TOO_LARGE: wire body over 2 MiB or plaintext over 1 MiB'),
  '429': errorResponse('RATE_LIMITED'),
  '500': errorResponse('INTERNAL_ERROR'),
};

export const errorCodes = (codes: Record<string, string>) =>
  Object.fromEntries(Object.entries(codes).map(([status, description]) => [status, errorResponse(description)]));

/** A signed POST whose body is the sealed-box envelope around `plaintext`. */
export function writeOperation(options: {
  summary: string;
  description?: string;
  tags: string[];
  plaintext: Schema;
  data: Schema;
  errors?: Record<string, string>;
}): Record<string, unknown> {
  return {
    summary: options.summary,
    ...(options.description ? { description: options.description } : {}),
    tags: options.tags,
    security: [{ merchantSignature: [] }],
    parameters: WRITE_HEADERS,
    requestBody: {
      required: true,
      description: 'The sealed-box envelope. The schema under x-plaintext is the JSON sealed inside it.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            allOf: [ref('Envelope')],
            properties: {
              ciphertext: {
                description: 'Opened with the platform body key, the sealed box is this JSON (contentSchema).',
                contentSchema: options.plaintext,
              },
            },
          },
        },
      },
      'x-plaintext': options.plaintext,
    },
    responses: {
      '200': { description: 'SUCCESS', content: { 'application/json': { schema: successOf(options.data) } } },
      ...errorCodes(options.errors ?? {}),
      ...COMMON_ERRORS,
    },
  };
}

/** A signed GET with public query parameters. */
export function readOperation(options: {
  summary: string;
  description?: string;
  tags: string[];
  /** The query parameters, generated from the wire's query schema (`queryParameters`). */
  query: Schema[];
  data: Schema;
  errors?: Record<string, string>;
}): Record<string, unknown> {
  return {
    summary: options.summary,
    ...(options.description ? { description: options.description } : {}),
    tags: options.tags,
    security: [{ merchantSignature: [] }],
    parameters: [...READ_HEADERS, ...options.query],
    responses: {
      '200': { description: 'SUCCESS', content: { 'application/json': { schema: successOf(options.data) } } },
      ...errorCodes(options.errors ?? {}),
      ...COMMON_ERRORS,
    },
  };
}

const header = (name: string, description: string, example?: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string', ...(example ? { example } : {}) },
});

const SIGNATURE_HEADERS = [
  header('Merchant-Access-Key', 'The access key; selects the merchant public key', 'ak_test_3f9c2e71d04b8a56'),
  header(
    'Signature-Input',
    '`merchant=(<covered components>);created=…;expires=…;nonce="<uuid v4>";alg="ed25519"` (see Signing requests)',
  ),
  header('Signature', '`merchant=:<base64 Ed25519 signature>:`'),
];

export const WRITE_HEADERS = [
  header('Content-Type', 'application/json', 'application/json'),
  header('Content-Encryption', 'sealedbox-v1-x25519-xsalsa20poly1305', 'sealedbox-v1-x25519-xsalsa20poly1305'),
  header('Content-Digest', '`sha-256=:<base64 SHA-256 of the wire body>:`'),
  header(
    'Idempotency-Key',
    'UUID v4, required by the protocol because the signature covers it, and used for tracing only: creates are deduplicated by merchantOrderNo alone, so a retry may carry a new key.',
  ),
  ...SIGNATURE_HEADERS,
];

export const READ_HEADERS = SIGNATURE_HEADERS;

export const page = (item: Schema): Schema => ({
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: { items: { type: 'array', items: item }, nextCursor: { type: ['string', 'null'] } },
});
