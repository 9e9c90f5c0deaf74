import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boxKeyPairFrom,
  buildSignatureBase,
  contentDigest,
  decodeCanonicalBase64,
  headerPairs,
  openEnvelope,
  openSealedBox,
  parseEnvelope,
  parseSignatureInput,
  publicKeyFrom,
  REQUEST_PROFILE,
  serializeSignature,
  serializeSignatureInput,
  sign,
  signingKeyFrom,
  verifyRequest,
  verifyWebhook,
  WEBHOOK_PROFILE,
  webhookTarget,
} from '@paygate/protocol';
import { vectors } from './vectors.js';

const b64 = (text: string) => Buffer.from(text, 'base64');
const unwrap = <T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  if (!result.ok) assert.fail(`unexpected failure: ${JSON.stringify(result.error)}`);
  return result.value;
};

const merchantKey = unwrap(signingKeyFrom(b64(vectors.keys.merchant.seed_base64)));
const webhookKey = unwrap(signingKeyFrom(b64(vectors.keys.platform_webhook.seed_base64)));
const bodyKey = unwrap(boxKeyPairFrom(b64(vectors.keys.platform_body.secret_key_base64)));

describe('vector keys', () => {
  it('derives the same key pair from seed, 64-byte key and PEM', () => {
    for (const form of [
      b64(vectors.keys.merchant.seed_base64),
      b64(vectors.keys.merchant.full_key_base64),
      vectors.keys.merchant.full_key_base64,
      vectors.keys.merchant.private_key_pem,
    ]) {
      const key = unwrap(signingKeyFrom(form));
      assert.equal(key.publicKey.toString('base64'), vectors.keys.merchant.public_key_base64);
      assert.equal(key.secretKey.toString('base64'), vectors.keys.merchant.full_key_base64);
    }
  });

  it('loads public keys from raw bytes, base64 and PEM SPKI', () => {
    for (const form of [vectors.keys.merchant.public_key_base64, vectors.keys.merchant.public_key_pem]) {
      assert.equal(unwrap(publicKeyFrom(form)).toString('base64'), vectors.keys.merchant.public_key_base64);
    }
    assert.equal(
      unwrap(publicKeyFrom(vectors.keys.platform_webhook.public_key_pem)).toString('base64'),
      vectors.keys.platform_webhook.public_key_base64,
    );
  });

  it('derives the body public key from its secret key', () => {
    assert.equal(bodyKey.publicKey.toString('base64'), vectors.keys.platform_body.public_key_base64);
  });
});

describe('write request vector', () => {
  const w = vectors.write_request;
  const params = unwrap(parseSignatureInput(w.signature_input, REQUEST_PROFILE));

  it('reproduces Content-Digest over the wire body', () => {
    assert.equal(contentDigest(Buffer.from(w.body_utf8, 'utf8')), w.headers['content-digest']);
  });

  it('reproduces Signature-Input, signature base and signature byte for byte', () => {
    assert.equal(serializeSignatureInput(params), w.signature_input);
    const base = unwrap(
      buildSignatureBase({ method: w.method, path: w.path, query: w.query, headers: w.headers }, params),
    );
    assert.equal(base, w.signature_base);
    assert.equal(serializeSignature('merchant', sign(base, merchantKey)), w.signature);
  });

  it('verifies as a whole request and opens to the plaintext', async () => {
    const result = await verifyRequest(
      {
        method: w.method,
        path: w.path,
        query: undefined,
        headers: headerPairs({ ...w.headers, 'signature-input': w.signature_input, signature: w.signature }),
        body: Buffer.from(w.body_utf8, 'utf8'),
      },
      {
        now: vectors.now,
        lookupMerchant: (accessKey) =>
          accessKey === vectors.access_key ? { publicKeys: [b64(vectors.keys.merchant.public_key_base64)] } : undefined,
        consumeNonce: () => true,
        lookupBodyKey: (keyId) => (keyId === vectors.keys.platform_body.keyId ? bodyKey : undefined),
      },
    );
    const verified = unwrap(result);
    assert.equal(verified.kind, 'write');
    assert.equal(verified.plaintext?.toString('utf8'), w.plaintext_utf8);
  });

  it('opens the envelope with the body key', () => {
    const envelope = unwrap(parseEnvelope(Buffer.from(w.body_utf8, 'utf8'), w.headers['content-encryption'] as string));
    assert.equal(envelope.keyId, vectors.keys.platform_body.keyId);
    const plaintext = unwrap(openEnvelope(envelope, () => bodyKey));
    assert.equal(plaintext.toString('utf8'), w.plaintext_utf8);
  });
});

describe('read request vectors', () => {
  for (const r of vectors.read_requests) {
    it(`reproduces and verifies ${r.url_path_and_query}`, async () => {
      const query = r.url_path_and_query.includes('?') ? r.query : undefined;
      const params = unwrap(parseSignatureInput(r.signature_input, REQUEST_PROFILE));
      assert.equal(serializeSignatureInput(params), r.signature_input);
      const base = unwrap(buildSignatureBase({ method: r.method, path: r.path, query, headers: r.headers }, params));
      assert.equal(base, r.signature_base);
      assert.equal(serializeSignature('merchant', sign(base, merchantKey)), r.signature);

      const result = await verifyRequest(
        {
          method: r.method,
          path: r.path,
          query,
          headers: headerPairs({ ...r.headers, 'signature-input': r.signature_input, signature: r.signature }),
          body: Buffer.alloc(0),
        },
        {
          now: vectors.now,
          lookupMerchant: () => ({ publicKeys: [merchantKey.publicKey] }),
          consumeNonce: () => true,
          lookupBodyKey: () => undefined,
        },
      );
      assert.equal(unwrap(result).kind, 'read');
    });
  }
});

describe('webhook vectors', () => {
  for (const v of vectors.webhooks) {
    it(`reproduces and verifies the webhook to ${v.webhook_url}`, async () => {
      const body = Buffer.from(v.body_utf8, 'utf8');
      assert.equal(contentDigest(body), v.headers['content-digest']);
      const params = unwrap(parseSignatureInput(v.signature_input, WEBHOOK_PROFILE));
      assert.equal(serializeSignatureInput(params), v.signature_input);
      const target = webhookTarget(v.webhook_url);
      const base = unwrap(buildSignatureBase({ method: v.method, ...target, headers: v.headers }, params));
      assert.equal(base, v.signature_base);
      assert.equal(serializeSignature('platform', sign(base, webhookKey)), v.signature);

      const result = await verifyWebhook(
        {
          method: 'POST',
          ...target,
          headers: headerPairs({ ...v.headers, 'signature-input': v.signature_input, signature: v.signature }),
          body,
        },
        {
          now: vectors.now,
          publicKeys: new Map([
            [vectors.keys.platform_webhook.keyid, b64(vectors.keys.platform_webhook.public_key_base64)],
          ]),
        },
      );
      const verified = unwrap(result);
      assert.equal(verified.eventId, v.headers['webhook-event-id']);
      assert.equal(verified.keyid, vectors.keys.platform_webhook.keyid);
    });
  }
});

describe('sealed box vectors', () => {
  for (const [i, v] of vectors.sealed_box_open.entries()) {
    it(`opens sealed box ${i}`, () => {
      const key = unwrap(boxKeyPairFrom(b64(v.secret_key_base64)));
      const ciphertext = decodeCanonicalBase64(v.ciphertext_base64);
      assert.ok(ciphertext);
      assert.equal(openSealedBox(ciphertext, key)?.toString('utf8'), v.plaintext_utf8);
    });
  }
});
