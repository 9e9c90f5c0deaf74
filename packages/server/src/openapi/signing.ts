/**
 * The signing recipe shown once in the reference (info.description), with a worked example taken
 * from the shared protocol vectors (packages/protocol/test/fixtures/protocol-vectors.json); a test
 * checks that the example verifies with @paygate/protocol.
 */

/** Test keys and one signed write and read from the protocol vectors. Never use these keys. */
export const WORKED_EXAMPLE = {
  accessKey: 'ak_test_3f9c2e71d04b8a56',
  merchantSeedBase64: 'JKzsZDw2DYvRHNqNrlbcVlvsZU46t2cI/HFNKXJ+0uY=',
  merchantPublicKeyBase64: 'LjRmSHH+b7SugXO0u7ETcxRhcGWiv8hlRNXotmCWeQ8=',
  bodyKeyId: 'bk_vectors_1',
  bodyPublicKeyBase64: 'sGB8XonhA/4T2ChuR/DYjWtCSR5ATy/fWgdCMos2hzk=',
  plaintext:
    '{"merchantOrderNo":"M-20260101-0001","currency":"BRL","amount":"125.50","paymentMethod":{"code":"PIX"},"webhookUrl":"https://merchant.example/webhook/payment","attach":"cart=8812"}',
  body: '{"version":1,"alg":"sealedbox-v1-x25519-xsalsa20poly1305","keyId":"bk_vectors_1","ciphertext":"1sP6CC6l+1tbgXQwxzDxZsm+QQWF+WSp89O6H7kCL0bwkABTAnQwu8ONWtvjkvFQFnU/xP+K/TrmHR246PpcmkHpSdVgVAL96arCN12gG/NiF0WWLn5AY9erxSFMzPfLxl3f0lPoa2zC0KjpcUlSIwgOJoLVKRXVj2Wdkua7nyfA6UnV9rm+6609DzXH9Mc6GREpROF0F5eW57VowpZiU1UA6pn4u/h8+gt0COp56P9LQIcFaEKx3PpghG8kDH5LN/RgUp1K67de80HQ98jHRZHhKRIiA6k6NILXeocX6sMpNkPp"}',
  headers: {
    'content-type': 'application/json',
    'content-encryption': 'sealedbox-v1-x25519-xsalsa20poly1305',
    'content-digest': 'sha-256=:BzRUToBQ5YIO9yMnBqwcaoTmt4QFpC0ckqedMzqJlz8=:',
    'idempotency-key': '7b0c3f64-2a9e-4d1b-9c55-0e6f2f8a1d37',
    'merchant-access-key': 'ak_test_3f9c2e71d04b8a56',
  },
  signatureInput:
    'merchant=("@method" "@path" "content-type" "content-encryption" "content-digest" "idempotency-key" "merchant-access-key");created=1767225600;expires=1767225900;nonce="c1d2e3f4-5a6b-4c7d-8e9f-0a1b2c3d4e5f";alg="ed25519"',
  signatureBase:
    '"@method": POST\n"@path": /api/v1/payments\n"content-type": application/json\n"content-encryption": sealedbox-v1-x25519-xsalsa20poly1305\n"content-digest": sha-256=:BzRUToBQ5YIO9yMnBqwcaoTmt4QFpC0ckqedMzqJlz8=:\n"idempotency-key": 7b0c3f64-2a9e-4d1b-9c55-0e6f2f8a1d37\n"merchant-access-key": ak_test_3f9c2e71d04b8a56\n"@signature-params": ("@method" "@path" "content-type" "content-encryption" "content-digest" "idempotency-key" "merchant-access-key");created=1767225600;expires=1767225900;nonce="c1d2e3f4-5a6b-4c7d-8e9f-0a1b2c3d4e5f";alg="ed25519"',
  signature: 'merchant=:u3szeeNyZ+xvknu9ta7T6cTRUFhO5gXlhYE2A1JECkdJkIeSV2NHpnB1KIsfxScm3VSE1XXqv4RR6JaW9g57AA==:',
  read: {
    pathAndQuery: '/api/v1/payments?orderNo=P202601010000001',
    signatureInput:
      'merchant=("@method" "@path" "@query" "merchant-access-key");created=1767225600;expires=1767225900;nonce="0f8e7d6c-5b4a-4392-8a1b-2c3d4e5f6a7b";alg="ed25519"',
    signatureBase:
      '"@method": GET\n"@path": /api/v1/payments\n"@query": ?orderNo=P202601010000001\n"merchant-access-key": ak_test_3f9c2e71d04b8a56\n"@signature-params": ("@method" "@path" "@query" "merchant-access-key");created=1767225600;expires=1767225900;nonce="0f8e7d6c-5b4a-4392-8a1b-2c3d4e5f6a7b";alg="ed25519"',
    signature: 'merchant=:/Tv/AHbd5owdkmxJN7r+0WnEA9UQeqdBKYjSxPb6O5JCZWjmBpK6xEyYVRhsYPtT8UUQf4BO0kkZOoLWEPsTCg==:',
  },
} as const;

const fence = (text: string) => `\n\n\`\`\`\n${text}\n\`\`\`\n\n`;

/** Markdown: headers, covered components, signature base, the sealed-box envelope, a worked example. */
export const SIGNING_RECIPE = [
  '## Signing requests',
  'Every request carries `Merchant-Access-Key`, `Signature-Input` and `Signature` (RFC 9421, label `merchant`, Ed25519 over the signature base with the merchant key registered for the access key). Signature parameters: `created` and `expires` (Unix seconds, `expires - created` at most 300, clock skew at most 300 s), `nonce` (a fresh UUID v4, one use) and `alg="ed25519"`; nothing else.',
  '**Covered components.** Writes (POST): `"@method" "@path" "content-type" "content-encryption" "content-digest" "idempotency-key" "merchant-access-key"`. Reads (GET): `"@method" "@path" "@query" "merchant-access-key"`.',
  '**Signature base.** One line per covered component, `"<name>": <value>`, in the order listed, then `"@signature-params": ` followed by the `Signature-Input` value after `merchant=`; lines joined by a single LF, no trailing newline. `@query` is the raw query string with its leading `?`, byte for byte as sent.',
  '**Sealed-box envelope.** A POST body is the business JSON sealed with libsodium `crypto_box_seal` to the platform body key (X25519, published per environment with its `keyId`), sent as `{"version":1,"alg":"sealedbox-v1-x25519-xsalsa20poly1305","keyId":…,"ciphertext":<standard base64>}` with `Content-Type: application/json`, `Content-Encryption: sealedbox-v1-x25519-xsalsa20poly1305` and `Content-Digest: sha-256=:<base64 SHA-256 of the envelope bytes>:` (RFC 9530). Send the envelope bytes exactly as digested and signed. Responses are plain JSON.',
  `**Worked example (test keys from the protocol vectors; never use them).** Access key \`${WORKED_EXAMPLE.accessKey}\`, merchant Ed25519 seed \`${WORKED_EXAMPLE.merchantSeedBase64}\` (public key \`${WORKED_EXAMPLE.merchantPublicKeyBase64}\`), platform body key \`${WORKED_EXAMPLE.bodyKeyId}\` = \`${WORKED_EXAMPLE.bodyPublicKeyBase64}\`. Creating a payment with this business JSON:${fence(WORKED_EXAMPLE.plaintext)}is sent as \`POST /api/v1/payments\` with this body:${fence(WORKED_EXAMPLE.body)}and these headers:${fence(
    [
      ...Object.entries(WORKED_EXAMPLE.headers).map(([name, value]) => `${name}: ${value}`),
      `signature-input: ${WORKED_EXAMPLE.signatureInput}`,
      `signature: ${WORKED_EXAMPLE.signature}`,
    ].join('\n'),
  )}The signature base that was signed:${fence(WORKED_EXAMPLE.signatureBase)}A read, \`GET ${WORKED_EXAMPLE.read.pathAndQuery}\`, signs this base:${fence(WORKED_EXAMPLE.read.signatureBase)}with \`signature-input: ${WORKED_EXAMPLE.read.signatureInput}\` and \`signature: ${WORKED_EXAMPLE.read.signature}\`. The merchant SDK (\`@paygate/merchant\`) does all of this.`,
].join('\n\n');
