import assert from 'node:assert/strict';
import { it } from 'node:test';
import { boxKeyPairFrom, contentDigest, openEnvelope, parseEnvelope, publicKeyFrom, verify } from '@paygate/protocol';
import { openApiDocument } from '../src/openapi/document.js';
import { WORKED_EXAMPLE } from '../src/openapi/signing.js';

// The body key's secret half from the shared protocol vectors (test data, not in the reference).
const BODY_SECRET_KEY = 'Q+RTxyJzi12lTJg1MSP9T4CM7wDN9YtgCeDosF+ArN0=';

it("the reference's worked example verifies: digest, Ed25519 signature over the base, and the envelope opens to the plaintext", () => {
  const body = Buffer.from(WORKED_EXAMPLE.body);
  assert.equal(contentDigest(body), WORKED_EXAMPLE.headers['content-digest']);
  const key = publicKeyFrom(WORKED_EXAMPLE.merchantPublicKeyBase64);
  assert.ok(key.ok);
  const signatureOf = (header: string) => Buffer.from(header.slice('merchant=:'.length, -1), 'base64');
  assert.ok(verify(WORKED_EXAMPLE.signatureBase, signatureOf(WORKED_EXAMPLE.signature), key.value));
  assert.ok(verify(WORKED_EXAMPLE.read.signatureBase, signatureOf(WORKED_EXAMPLE.read.signature), key.value));
  assert.ok(
    WORKED_EXAMPLE.signatureBase.endsWith(
      `"@signature-params": ${WORKED_EXAMPLE.signatureInput.slice('merchant='.length)}`,
    ),
  );
  const pair = boxKeyPairFrom(Buffer.from(BODY_SECRET_KEY, 'base64'));
  assert.ok(pair.ok);
  const envelope = parseEnvelope(body, WORKED_EXAMPLE.headers['content-encryption']);
  assert.ok(envelope.ok);
  const opened = openEnvelope(envelope.value, (keyId) => (keyId === WORKED_EXAMPLE.bodyKeyId ? pair.value : undefined));
  assert.ok(opened.ok);
  assert.equal(opened.value.toString('utf8'), WORKED_EXAMPLE.plaintext);
});

it('the recipe is shown once, in info.description, and the security scheme points to it', () => {
  const document = openApiDocument() as {
    info: { description: string };
    components: { securitySchemes: { merchantSignature: { description: string } } };
  };
  const text = JSON.stringify(document);
  assert.equal(text.split('## Signing requests').length, 2);
  assert.match(document.info.description, /## Signing requests/);
  assert.match(document.components.securitySchemes.merchantSignature.description, /Signing requests/);
});
