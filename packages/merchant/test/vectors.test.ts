/**
 * The SDK against the shared, independently produced protocol vectors: it verifies every
 * webhook vector with its clock at the vector's `now`, refuses altered ones at the right check,
 * and its request signing reproduces the vectors' Signature-Input, signature base and signature
 * given the same created and nonce (sent over real HTTP to a loopback recorder).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  parseWebhookEvent,
  PaygateClient,
  type PaygateClientOptions,
  WebhookVerificationError,
  WebhookVerifier,
} from '@paygate/merchant';
import { boxKeyPairFrom, headerPairs, openEnvelope, parseEnvelope, verifyRequest } from '@paygate/protocol';
import { header, type ScriptedServer, startScriptedServer, vectors } from './helpers.js';

const keys = vectors.keys;
const webhookKeys = [{ keyid: keys.platform_webhook.keyid, publicKey: keys.platform_webhook.public_key_base64 }];
const verifier = new WebhookVerifier({ webhookKeys, clock: () => vectors.now * 1000 });

function incoming(v: Vectors['webhooks'][number], alter: { target?: string; body?: string } = {}) {
  return {
    method: v.method,
    target: alter.target ?? v.webhook_url,
    headers: headerPairs({ ...v.headers, 'signature-input': v.signature_input, signature: v.signature }),
    body: Buffer.from(alter.body ?? v.body_utf8, 'utf8'),
  };
}
type Vectors = typeof vectors;

async function refusedAt(promise: Promise<unknown>, check: string): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => assert.fail(`expected a refusal at the ${check} check`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof WebhookVerificationError, `not a WebhookVerificationError: ${String(error)}`);
  assert.equal(error.check, check, error.message);
  return error;
}

describe('webhook vectors', () => {
  for (const v of vectors.webhooks) {
    it(`verifies the webhook to ${v.webhook_url} and types its event`, async () => {
      const { event, keyid, body } = await verifier.verify(incoming(v));
      assert.equal(keyid, keys.platform_webhook.keyid);
      assert.deepEqual(body.toString('utf8'), v.body_utf8);
      assert.equal(event.eventId, v.headers['webhook-event-id']);
      assert.ok(event.orderType === 'PAYMENT' && event.status === 'SUCCEEDED');
      assert.equal(event.paidAmount, '125.50');
      assert.deepEqual(event.payer, { name: 'Maria Silva', documentNumber: '00123456789' });
      assert.deepEqual(event, JSON.parse(v.body_utf8));
    });

    it(`verifies ${v.webhook_url} given as the raw target, with the PEM key and Fetch headers`, async () => {
      const url = new URL(v.webhook_url);
      const pem = new WebhookVerifier({
        webhookKeys: [{ keyid: keys.platform_webhook.keyid, publicKey: keys.platform_webhook.public_key_pem }],
        clock: () => vectors.now * 1000,
      });
      const { headers, body } = incoming(v);
      const verified = await pem.verifyBytes({
        target: url.pathname + url.search,
        headers: new Headers(headers as [string, string][]),
        body,
      });
      assert.equal(verified.eventId, v.headers['webhook-event-id']);
    });
  }

  const v = vectors.webhooks[1] as Vectors['webhooks'][number];

  it('refuses an altered body at the digest check, with a hint about parsed bodies', async () => {
    const error = await refusedAt(
      verifier.verify(incoming(v, { body: v.body_utf8.replace('125.50', '925.50') })),
      'digest',
    );
    assert.match(error.message, /re-serialized|parsed/);
    // Re-serializing the same JSON is the classic mistake; it changes the bytes too.
    await refusedAt(verifier.verify(incoming(v, { body: JSON.stringify(JSON.parse(v.body_utf8), null, 1) })), 'digest');
  });

  it('refuses another path or query at the signature check, with the base it rebuilt', async () => {
    const error = await refusedAt(
      verifier.verify(incoming(v, { target: '/webhook/payment?sig=1&tenant=eu' })),
      'signature',
    );
    assert.match(error.signatureBase ?? '', /"@query": \?sig=1&tenant=eu/);
    await refusedAt(verifier.verify(incoming(v, { target: '/webhook/payment/?tenant=eu&sig=1' })), 'signature');
  });

  it('refuses an unknown keyid at the keyid check, naming the configured ones', async () => {
    const other = new WebhookVerifier({
      webhookKeys: [{ keyid: 'wk_other', publicKey: keys.platform_webhook.public_key_base64 }],
      clock: () => vectors.now * 1000,
    });
    const error = await refusedAt(other.verify(incoming(v)), 'keyid');
    assert.match(error.message, /wk_other/);
  });

  it('refuses the right keyid with the wrong public key at the signature check', async () => {
    const wrong = new WebhookVerifier({
      webhookKeys: [{ keyid: keys.platform_webhook.keyid, publicKey: keys.merchant.public_key_base64 }],
      clock: () => vectors.now * 1000,
    });
    await refusedAt(wrong.verify(incoming(v)), 'signature');
  });

  it('refuses outside the time window at the signature-input check, telling the clock', async () => {
    const late = new WebhookVerifier({ webhookKeys, clock: () => (vectors.now + 3600) * 1000 });
    const error = await refusedAt(late.verify(incoming(v)), 'signature-input');
    assert.match(error.reason, /expired/);
    assert.match(error.message, new RegExp(String(vectors.now + 3600)));
    const early = new WebhookVerifier({ webhookKeys, clock: () => (vectors.now - 3600) * 1000 });
    await refusedAt(early.verify(incoming(v)), 'signature-input');
  });

  it('refuses a Webhook-Event-Id that differs from the body at the event-id check', async () => {
    const altered = incoming(v);
    altered.headers = headerPairs({
      ...v.headers,
      'webhook-event-id': 'evt_01JGZ7Q4V1M9X2K3C5B8N0P6RX',
      'signature-input': v.signature_input,
      signature: v.signature,
    });
    await refusedAt(verifier.verify(altered), 'event-id');
  });

  it('refuses a repeated Signature header and a GET at the shape check', async () => {
    const repeated = incoming(v);
    repeated.headers = [...repeated.headers, ['Signature', v.signature]];
    await refusedAt(verifier.verify(repeated), 'shape');
    await refusedAt(verifier.verify({ ...incoming(v), method: 'GET' }), 'shape');
  });

  it('refuses a replayed nonce when a nonce guard is configured', async () => {
    const seen = new Set<string>();
    const guarded = new WebhookVerifier({
      webhookKeys,
      clock: () => vectors.now * 1000,
      consumeNonce: (nonce) => !seen.has(nonce) && Boolean(seen.add(nonce)),
    });
    await guarded.verify(incoming(v));
    await refusedAt(guarded.verify(incoming(v)), 'nonce');
  });

  it('parses only known events: an unknown status is a payload error after verification', () => {
    const body = JSON.parse(v.body_utf8) as Record<string, unknown>;
    assert.throws(
      () => parseWebhookEvent(Buffer.from(JSON.stringify({ ...body, status: 'REFUNDED' }))),
      (error: unknown) => error instanceof WebhookVerificationError && error.check === 'payload',
    );
    assert.throws(
      () => parseWebhookEvent(Buffer.from(JSON.stringify({ ...body, paidAmount: 125.5 }))),
      (error: unknown) =>
        error instanceof WebhookVerificationError && error.check === 'payload' && /paidAmount/.test(error.reason),
    );
  });
});

describe('request signing reproduces the vectors', () => {
  let recorder: ScriptedServer;
  const base = (): Omit<PaygateClientOptions, 'privateKey'> => ({
    baseUrl: recorder.url,
    accessKey: vectors.access_key,
    bodyKey: { keyId: keys.platform_body.keyId, publicKey: keys.platform_body.public_key_base64 },
    clock: () => 1_767_225_600_000,
    retries: 0,
  });
  const nonceOf = (signatureInput: string) => /nonce="([^"]+)"/.exec(signatureInput)?.[1] as string;

  before(async () => {
    recorder = await startScriptedServer({ kind: 'reply', status: 200, body: '{"msg":"SUCCESS","data":{}}' });
  });
  after(() => recorder.close());

  for (const r of vectors.read_requests) {
    it(`signs GET ${r.url_path_and_query} byte for byte`, async () => {
      const client = new PaygateClient({
        ...base(),
        privateKey: keys.merchant.private_key_pem,
        nonce: () => nonceOf(r.signature_input),
      });
      const query = r.url_path_and_query.includes('?') ? r.query : undefined;
      const response = await client.send({ method: 'GET', path: r.path, ...(query !== undefined ? { query } : {}) });
      const sent = recorder.received.at(-1);
      assert.ok(sent);
      assert.equal(sent.target, r.url_path_and_query);
      assert.equal(header(sent, 'signature-input'), r.signature_input);
      assert.equal(header(sent, 'signature'), r.signature);
      assert.equal(header(sent, 'merchant-access-key'), vectors.access_key);
      assert.equal(response.sent.signatureBase, r.signature_base);
    });
  }

  it('signs the same with the seed, the 64-byte key (base64 and bytes) and the PEM', async () => {
    const r = vectors.read_requests[0] as Vectors['read_requests'][number];
    for (const privateKey of [
      keys.merchant.seed_base64,
      keys.merchant.full_key_base64,
      Buffer.from(keys.merchant.full_key_base64, 'base64'),
      Buffer.from(keys.merchant.seed_base64, 'base64'),
      keys.merchant.private_key_pem,
    ]) {
      const client = new PaygateClient({ ...base(), privateKey, nonce: () => nonceOf(r.signature_input) });
      // The typed method builds the same query as the vector.
      await client.payments.query({ orderNo: 'P202601010000001' });
      assert.equal(header(recorder.received.at(-1) as never, 'signature'), r.signature);
    }
  });

  it('signs the write vector: same Signature-Input, same base but for the digest of its own (fresh) envelope', async () => {
    const w = vectors.write_request;
    const client = new PaygateClient({
      ...base(),
      privateKey: keys.merchant.seed_base64,
      nonce: () => nonceOf(w.signature_input),
    });
    const response = await client.send(
      { method: 'POST', path: w.path, body: JSON.parse(w.plaintext_utf8) },
      { idempotencyKey: w.headers['idempotency-key'] as string },
    );
    const sent = recorder.received.at(-1);
    assert.ok(sent);
    assert.equal(header(sent, 'signature-input'), w.signature_input);
    for (const name of ['content-type', 'content-encryption', 'idempotency-key', 'merchant-access-key']) {
      assert.equal(header(sent, name), w.headers[name], name);
    }
    // A sealed box is never the same twice, so only the content-digest line may differ.
    const digestLine = /^"content-digest": .*$/m;
    assert.equal(
      response.sent.signatureBase.replace(digestLine, '"content-digest": X'),
      w.signature_base.replace(digestLine, '"content-digest": X'),
    );
    assert.notEqual(header(sent, 'content-digest'), w.headers['content-digest']);

    // The platform side of the protocol accepts it and opens the vector's plaintext.
    const bodyKey = boxKeyPairFrom(Buffer.from(keys.platform_body.secret_key_base64, 'base64'));
    assert.ok(bodyKey.ok);
    const verified = await verifyRequest(
      { method: sent.method, path: sent.target, query: undefined, headers: sent.rawHeaders, body: sent.body },
      {
        now: vectors.now,
        lookupMerchant: () => ({ publicKeys: [Buffer.from(keys.merchant.public_key_base64, 'base64')] }),
        consumeNonce: () => true,
        lookupBodyKey: (keyId) => (keyId === keys.platform_body.keyId ? bodyKey.value : undefined),
      },
    );
    assert.ok(verified.ok, JSON.stringify(!verified.ok && verified.error));
    assert.equal(verified.value.plaintext?.toString('utf8'), w.plaintext_utf8);
    const envelope = parseEnvelope(sent.body, w.headers['content-encryption'] as string);
    assert.ok(envelope.ok);
    const opened = openEnvelope(envelope.value, () => bodyKey.value);
    assert.ok(opened.ok);
    assert.equal(opened.value.toString('utf8'), w.plaintext_utf8);
  });
});
