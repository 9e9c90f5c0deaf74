/**
 * Interoperability with two independent RFC 9421 implementations from npm (decisions: Signature-Input
 * as other signers write it): `http-message-signatures` (dhensby) and `http-message-sig`
 * (Cloudflare's web-bot-auth). Each signs real writes (a sealed envelope with its Content-Digest)
 * and reads with its own parameter order, sent to a real running platform; each verifies real
 * webhooks the platform delivered, with the published webhook key. None of our signing or
 * verification code is on these paths, only the envelope sealing and the digest of the body.
 */
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, randomUUID, sign, verify } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  contentDigest,
  ENVELOPE_ALG,
  JSON_CONTENT_TYPE,
  publicKeyFrom,
  READ_COMPONENTS,
  type SigningKey,
  sealEnvelope,
  WEBHOOK_COMPONENTS,
  WRITE_COMPONENTS,
} from '@paygate/protocol';
import { createSignature, isSignatureError, type RequestDescriptor, verifySignature } from 'http-message-sig';
import { createSigner, createVerifier, defaultParams, httpbis } from 'http-message-signatures';
import { createMerchant, startTestPlatform, type TestMerchant, type TestPlatform } from '../../server/test/harness.js';
import { clientFor, deliverAll, header, type Recorded, type ScriptedServer, startScriptedServer } from './helpers.js';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The merchant's Ed25519 key as a Node key object, as a merchant using another library holds it. */
const privateKeyOf = (key: SigningKey) =>
  createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: b64url(key.secretKey.subarray(0, 32)), x: b64url(key.publicKey) },
    format: 'jwk',
  });

/** A published webhook key (as the portal shows it) as a Node key object. */
function publicKeyOf(published: string) {
  const raw = publicKeyFrom(published);
  assert.ok(raw.ok);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(raw.value) }, format: 'jwk' });
}

/** What a request is before a library signs it. */
interface Unsigned {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  readonly components: readonly string[];
}

/** A library: signs a request's headers, verifies a received webhook. */
interface Library {
  readonly name: string;
  /** The parameter order the library writes, as it shows in Signature-Input. */
  readonly order: RegExp;
  sign(request: Unsigned, key: SigningKey): Promise<Record<string, string>>;
  verifyWebhook(webhook: Recorded, url: string, keys: TestMerchant['webhookKeys']): Promise<boolean>;
}

/** Recorded raw headers as a record of lowercase names (each webhook header is sent once). */
function headersOf(recorded: Recorded): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < recorded.rawHeaders.length; i += 2) {
    headers[(recorded.rawHeaders[i] as string).toLowerCase()] = recorded.rawHeaders[i + 1] as string;
  }
  return headers;
}

const dhensby: Library = {
  name: 'http-message-signatures (dhensby)',
  // Its default parameters are keyid, alg, created, expires (no keyid here); nonce is added after them.
  order: /^merchant=\([^)]*\);alg="ed25519";created=\d+;expires=\d+;nonce="[0-9a-f-]{36}"$/,
  async sign(request, key) {
    const signed = await httpbis.signMessage(
      {
        key: createSigner(privateKeyOf(key), 'ed25519'),
        name: 'merchant',
        fields: [...request.components],
        params: [...defaultParams, 'nonce'],
        paramValues: { nonce: randomUUID() },
      },
      { method: request.method, url: request.url, headers: request.headers },
    );
    // It names the headers it adds Signature-Input and Signature.
    return Object.fromEntries(
      Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), String(value)]),
    );
  },
  async verifyWebhook(webhook, url, keys) {
    const result = await httpbis.verifyMessage(
      {
        keyLookup: async (params) => {
          const published = keys.find((k) => k.keyid === params.keyid);
          if (!published) return null;
          return {
            id: published.keyid,
            algs: ['ed25519'],
            verify: createVerifier(publicKeyOf(published.publicKey), 'ed25519'),
          };
        },
        requiredParams: ['created', 'expires', 'nonce', 'keyid', 'alg'],
        requiredFields: [...WEBHOOK_COMPONENTS],
        maxAge: 300,
      },
      { method: webhook.method, url, headers: headersOf(webhook) },
    );
    return result === true;
  },
};

const cloudflare: Library = {
  name: 'http-message-sig (web-bot-auth)',
  // It writes the parameters in the order given; this is its README's: created, alg, then the rest.
  order: /^merchant=\([^)]*\);created=\d+;alg="ed25519";expires=\d+;nonce="[0-9a-f-]{36}"$/,
  async sign(request, key) {
    const created = Math.floor(Date.now() / 1000);
    const privateKey = privateKeyOf(key);
    const fields = await createSignature(
      new Request(request.url, { method: request.method, headers: request.headers }),
      {
        label: 'merchant',
        components: request.components,
        parameters: { created, alg: 'ed25519', expires: created + 300, nonce: randomUUID() },
        signer: { algorithm: 'ed25519', sign: (data) => sign(null, data, privateKey) },
      },
    );
    return { ...request.headers, 'signature-input': fields.signatureInput, signature: fields.signature };
  },
  async verifyWebhook(webhook, url, keys) {
    const message: RequestDescriptor = {
      kind: 'request',
      method: webhook.method,
      targetUri: url,
      fields: Object.entries(headersOf(webhook)).map(([name, value]) => ({ name, value })),
    };
    try {
      await verifySignature(message, {
        label: 'platform',
        policy: {
          algorithms: ['ed25519'],
          requiredComponents: [...WEBHOOK_COMPONENTS],
          requiredParameters: ['created', 'expires', 'nonce', 'keyid'],
          maxAge: 300,
        },
        resolveVerifier: (candidate) => {
          const published = keys.find((k) => k.keyid === candidate.parameters.keyid);
          if (!published) throw new Error(`unknown keyid ${String(candidate.parameters.keyid)}`);
          const publicKey = publicKeyOf(published.publicKey);
          return { algorithm: 'ed25519', verify: (data, signature) => verify(null, data, publicKey, signature) };
        },
      });
      return true;
    } catch (error) {
      if (isSignatureError(error)) return false;
      throw error;
    }
  },
};

describe('third-party RFC 9421 libraries against the real platform', () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let recorder: ScriptedServer;

  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform);
    recorder = await startScriptedServer({ kind: 'reply', status: 200, body: '{}' });
  });
  after(async () => {
    await recorder.close();
    await platform.close();
  });

  /** A payment create: the envelope sealed to the platform body key, with its Content-Digest. */
  function createPayment(webhookUrl = 'https://merchant.example/webhook/payment'): Unsigned {
    const plaintext = JSON.stringify({
      merchantOrderNo: `M-${randomUUID().slice(0, 18)}`,
      currency: 'BRL',
      amount: '42.00',
      paymentMethod: { code: 'PIX' },
      webhookUrl,
    });
    const body = sealEnvelope(Buffer.from(plaintext), merchant.bodyKey);
    assert.ok(body.ok);
    return {
      method: 'POST',
      url: `${platform.url}/api/v1/payments`,
      headers: {
        'content-type': JSON_CONTENT_TYPE,
        'content-encryption': ENVELOPE_ALG,
        'content-digest': contentDigest(body.value),
        'idempotency-key': randomUUID(),
        'merchant-access-key': merchant.accessKey,
      },
      body: body.value,
      components: WRITE_COMPONENTS,
    };
  }

  const readPayment = (orderNo: string): Unsigned => ({
    method: 'GET',
    url: `${platform.url}/api/v1/payments?orderNo=${orderNo}`,
    headers: { 'merchant-access-key': merchant.accessKey },
    components: READ_COMPONENTS,
  });

  async function send(request: Unsigned, headers: Record<string, string>) {
    const response = await fetch(request.url, {
      method: request.method,
      headers,
      ...(request.body ? { body: new Uint8Array(request.body) } : {}),
    });
    return {
      status: response.status,
      body: (await response.json()) as { msg: string; data?: Record<string, unknown> },
    };
  }

  for (const library of [dhensby, cloudflare]) {
    describe(library.name, () => {
      it('signs a write (sealed envelope) and a read the platform accepts, in its own parameter order', async () => {
        const write = createPayment();
        const writeHeaders = await library.sign(write, merchant.key);
        assert.match(writeHeaders['signature-input'] as string, library.order);
        const created = await send(write, writeHeaders);
        assert.equal(created.status, 200, JSON.stringify(created.body));
        assert.equal(created.body.msg, 'SUCCESS');
        const orderNo = created.body.data?.orderNo as string;
        assert.match(orderNo, /^P\d{18}$/);

        const read = readPayment(orderNo);
        const readHeaders = await library.sign(read, merchant.key);
        assert.match(readHeaders['signature-input'] as string, library.order);
        const found = await send(read, readHeaders);
        assert.equal(found.status, 200, JSON.stringify(found.body));
        assert.equal(found.body.data?.orderNo, orderNo);

        // Control: verification is real, so the same signed read sent again (its nonce used) is refused.
        assert.equal((await send(read, readHeaders)).status, 401);
      });

      it('refuses its signature made with another key (control)', async () => {
        const other = await createMerchant(platform, 'Another shop');
        const read = readPayment('P000000000000000000');
        const found = await send(read, await library.sign(read, other.key));
        assert.equal(found.status, 401);
      });

      it('verifies a real webhook the platform delivered, and refuses it altered', async () => {
        const webhookUrl = `${recorder.url}/hooks/payment?shop=7`;
        const write = createPayment(webhookUrl);
        const created = await send(write, await library.sign(write, merchant.key));
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const orderNo = created.body.data?.orderNo as string;
        await clientFor(platform, merchant).sandbox.simulatePayment({ orderNo, status: 'SUCCEEDED' });
        const before = recorder.received.length;
        await deliverAll(platform);
        const webhook = recorder.received.slice(before).find((r) => r.body.toString('utf8').includes(orderNo));
        assert.ok(webhook, 'the platform delivered the webhook');
        assert.equal(webhook.target, '/hooks/payment?shop=7');

        // RFC 9530 by hand: the digest covers the body bytes as received.
        const digest = `sha-256=:${createHash('sha256').update(webhook.body).digest('base64')}:`;
        assert.equal(header(webhook, 'content-digest'), digest);
        assert.equal(await library.verifyWebhook(webhook, webhookUrl, merchant.webhookKeys), true);

        const altered = (name: string, value: string): Recorded => ({
          ...webhook,
          rawHeaders: webhook.rawHeaders.map((v, i) =>
            i % 2 === 1 && (webhook.rawHeaders[i - 1] as string).toLowerCase() === name ? value : v,
          ),
        });
        assert.equal(
          await library.verifyWebhook(altered('webhook-event-id', 'evt_other'), webhookUrl, merchant.webhookKeys),
          false,
        );
        assert.equal(
          await library.verifyWebhook(webhook, `${recorder.url}/hooks/payment?shop=8`, merchant.webhookKeys),
          false,
        );
      });
    });
  }
});
