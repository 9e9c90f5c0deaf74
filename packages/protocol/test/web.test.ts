/**
 * The web entry (`@paygate/protocol/web`: WebCrypto and noble, no Node built-in, no Buffer)
 * against the shared vectors and the Node entry: the same keys, signatures, digests and bases
 * byte for byte, requests it signs that the platform's verifier accepts, webhooks the platform
 * signs that it verifies, and libsodium's verdicts on altered, non-canonical and small-order
 * signatures and keys.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ED25519_TORSION_SUBGROUP } from '@noble/curves/ed25519.js';
import * as node from '@paygate/protocol';
import * as web from '@paygate/protocol/web';
import { sodium } from '../src/sodium.js';
import {
  ACCESS_KEY_ID,
  BODY_KEY_ID,
  bodyKey,
  EVENT_BODY,
  freshUuid,
  headerOf,
  merchantKey,
  NOW,
  otherWebhookKey,
  PAYMENTS_PATH,
  PLAINTEXT,
  signedWebhook,
  signWebhookRaw,
  unwrap,
  verifierDeps,
  WEBHOOK_KEY_ID,
  webhookDeps,
  webhookKey,
  withTrailingBitSet,
} from './support.js';
import { vectors } from './vectors.js';

const b64 = (text: string) => Buffer.from(text, 'base64');
const utf8 = (text: string) => new TextEncoder().encode(text);
const signatureBytes = (header: string) => b64(/:([^:]+):/.exec(header)?.[1] ?? '');
const nonceOf = (signatureInput: string) => /nonce="([^"]+)"/.exec(signatureInput)?.[1] ?? '';
const createdOf = (signatureInput: string) => Number(/created=(\d+)/.exec(signatureInput)?.[1]);

async function webKey(input: string | Uint8Array): Promise<web.SigningKey> {
  return unwrap(await web.signingKeyFrom(input));
}

describe('web entry: the shared vectors', () => {
  const merchant = vectors.keys.merchant;
  const platform = vectors.keys.platform_webhook;

  it('loads the merchant key from every form the Node entry takes, to the same public key', async () => {
    for (const input of [merchant.seed_base64, merchant.full_key_base64, merchant.private_key_pem]) {
      assert.equal(Buffer.from((await webKey(input)).publicKey).toString('base64'), merchant.public_key_base64);
    }
    for (const input of [b64(merchant.seed_base64), new Uint8Array(b64(merchant.full_key_base64))]) {
      assert.equal(Buffer.from((await webKey(input)).publicKey).toString('base64'), merchant.public_key_base64);
    }
    for (const input of [merchant.public_key_base64, merchant.public_key_pem, b64(merchant.public_key_base64)]) {
      assert.equal(Buffer.from(unwrap(web.publicKeyFrom(input))).toString('base64'), merchant.public_key_base64);
    }
  });

  it('reproduces the write request: its signature base, Content-Digest and signature byte for byte', async () => {
    const request = vectors.write_request;
    const key = await webKey(merchant.seed_base64);
    assert.equal(await web.contentDigest(utf8(request.body_utf8)), request.headers['content-digest']);
    assert.equal(
      await web.verifyContentDigest(request.headers['content-digest'] as string, utf8(request.body_utf8)),
      true,
    );
    const read = unwrap(
      web.readSignatureInput(request.signature_input.replace(/^merchant=/, 'merchant='), node.REQUEST_PROFILE),
    );
    const base = unwrap(web.buildSignatureBase(request, read.params, read.signatureParams));
    assert.equal(base, request.signature_base);
    assert.deepEqual(Buffer.from(await web.sign(base, key)), signatureBytes(request.signature));
    assert.equal(await web.verify(base, signatureBytes(request.signature), b64(merchant.public_key_base64)), true);
    // Its envelope opens with the platform body key.
    const envelope = JSON.parse(request.body_utf8) as { ciphertext: string };
    const box = unwrap(web.boxKeyPairFrom(b64(vectors.keys.platform_body.secret_key_base64)));
    assert.equal(Buffer.from(box.publicKey).toString('base64'), vectors.keys.platform_body.public_key_base64);
    const opened = web.openSealedBox(
      unwrap({ ok: true, value: web.decodeCanonicalBase64(envelope.ciphertext) }) as Uint8Array,
      box,
    );
    assert.equal(new TextDecoder().decode(opened), request.plaintext_utf8);
  });

  it('signs the read requests to the vectors’ exact headers', async () => {
    const key = await webKey(merchant.private_key_pem);
    for (const request of vectors.read_requests) {
      const signed = await web.signReadRequest(
        { path: request.path, query: request.query },
        {
          accessKey: vectors.access_key,
          key,
          created: createdOf(request.signature_input),
          nonce: nonceOf(request.signature_input),
        },
      );
      assert.equal(signed.signatureBase, request.signature_base);
      assert.deepEqual(signed.headers, {
        ...request.headers,
        'signature-input': request.signature_input,
        signature: request.signature,
      });
    }
  });

  it('verifies the vectors’ webhooks, and signs their bases to the same signatures', async () => {
    const publicKey = unwrap(web.publicKeyFrom(platform.public_key_pem));
    const key = await webKey(platform.full_key_base64);
    for (const webhook of vectors.webhooks) {
      const body = utf8(webhook.body_utf8);
      assert.equal(await web.contentDigest(body), webhook.headers['content-digest']);
      const result = await web.verifyWebhook(
        {
          method: webhook.method,
          ...web.webhookTarget(webhook.webhook_url),
          headers: Object.entries({
            ...webhook.headers,
            'signature-input': webhook.signature_input,
            signature: webhook.signature,
          }),
          body,
        },
        { now: vectors.now, publicKeys: new Map([[platform.keyid, publicKey]]) },
      );
      assert.ok(result.ok, JSON.stringify(!result.ok && result.error));
      assert.deepEqual(result.value.body, body);
      assert.equal(result.value.keyid, platform.keyid);
      assert.deepEqual(Buffer.from(await web.sign(webhook.signature_base, key)), signatureBytes(webhook.signature));
    }
  });

  it('opens the vectors’ sealed boxes and refuses them altered', () => {
    for (const box of vectors.sealed_box_open) {
      const key = unwrap(web.boxKeyPairFrom(b64(box.secret_key_base64)));
      const ciphertext = new Uint8Array(b64(box.ciphertext_base64));
      assert.equal(new TextDecoder().decode(web.openSealedBox(ciphertext, key)), box.plaintext_utf8);
      ciphertext[ciphertext.length - 1] = (ciphertext[ciphertext.length - 1] as number) ^ 1;
      assert.equal(web.openSealedBox(ciphertext, key), undefined);
    }
  });
});

describe('web entry and Node entry, round trips', () => {
  it('a write request the web entry signs and seals passes the platform’s verifier', async () => {
    const key = await webKey(node.seedOf(merchantKey));
    const deps = verifierDeps();
    for (let i = 0; i < 3; i++) {
      const signed = await web.signWriteRequest(
        {
          path: PAYMENTS_PATH,
          plaintext: new Uint8Array(PLAINTEXT),
          bodyKey: { keyId: BODY_KEY_ID, publicKey: new Uint8Array(bodyKey.publicKey) },
          idempotencyKey: freshUuid(),
        },
        { accessKey: ACCESS_KEY_ID, key, created: NOW, nonce: freshUuid() },
      );
      assert.ok(!Buffer.isBuffer(signed.body));
      const result = await node.verifyRequest(
        {
          method: 'POST',
          path: PAYMENTS_PATH,
          query: undefined,
          headers: Object.entries(signed.headers),
          body: signed.body,
        },
        deps,
      );
      assert.ok(result.ok, JSON.stringify(!result.ok && result.error));
      assert.equal(result.value.kind, 'write');
      assert.deepEqual(result.value.plaintext, PLAINTEXT);
    }
  });

  it('a read request signs to the Node entry’s exact headers, and verifies there', async () => {
    const key = await webKey(merchantKey.secretKey);
    for (const query of [undefined, '', 'orderNo=P1&x=%20y']) {
      const signer = { accessKey: ACCESS_KEY_ID, created: NOW, nonce: freshUuid() };
      const byWeb = await web.signReadRequest({ path: PAYMENTS_PATH, query }, { ...signer, key });
      const byNode = node.signReadRequest({ path: PAYMENTS_PATH, query }, { ...signer, key: merchantKey });
      assert.deepEqual(byWeb, byNode);
      const result = await node.verifyRequest(
        { method: 'GET', path: PAYMENTS_PATH, query, headers: Object.entries(byWeb.headers), body: new Uint8Array() },
        verifierDeps(),
      );
      assert.ok(result.ok, JSON.stringify(!result.ok && result.error));
    }
  });

  it('a webhook the platform signs verifies with the web entry, also from a Fetch API Request', async () => {
    const webhook = signedWebhook();
    const deps = {
      now: NOW,
      publicKeys: new Map([[WEBHOOK_KEY_ID, unwrap(web.publicKeyFrom(webhookKey.publicKey))]]),
    };
    const result = await web.verifyWebhook(webhook, deps);
    assert.ok(result.ok, JSON.stringify(!result.ok && result.error));
    assert.deepEqual(result.value.body, new Uint8Array(EVENT_BODY));
    const request = new Request(`https://merchant.example${webhook.path}?${webhook.query ?? ''}`, {
      method: 'POST',
      headers: webhook.headers as [string, string][],
      body: new Uint8Array(webhook.body),
    });
    const fromRequest = await web.verifyWebhookRequest(request, deps);
    assert.ok(fromRequest.ok, JSON.stringify(!fromRequest.ok && fromRequest.error));
    assert.equal(fromRequest.value.eventId, result.value.eventId);
  });

  it('signatures cross: web-signed verify in Node, Node-signed verify on the web', async () => {
    for (let i = 0; i < 20; i++) {
      const seed = randomBytes(32);
      const nodeKey = unwrap(node.signingKeyFrom(seed));
      const key = await webKey(seed);
      const message = randomBytes(i * 13);
      const byWeb = await web.sign(message, key);
      assert.deepEqual(Buffer.from(byWeb), node.sign(message, nodeKey));
      assert.equal(node.verify(message, byWeb, nodeKey.publicKey), true);
      assert.equal(await web.verify(message, node.sign(message, nodeKey), key.publicKey), true);
    }
  });
});

// --- strictness: libsodium's answers -------------------------------------------------------------

/** The order of the Ed25519 base point: S + L is the non-canonical twin of a valid S. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
function addOrderToS(signature: Uint8Array): Buffer {
  let value = 0n;
  for (let i = 63; i >= 32; i--) value = (value << 8n) | BigInt(signature[i] as number);
  value += L;
  const out = Buffer.from(signature);
  for (let i = 32; i < 64; i++) {
    out[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return out;
}
const hex = (text: string) => Buffer.from(text, 'hex');
const x25519 = generateKeyPairSync('x25519');

describe('web entry: as strict as libsodium', () => {
  it('gives libsodium’s verdicts on valid, altered and non-canonical signatures', async () => {
    assert.equal(sodium.name, 'sodium-native', 'the comparison needs the native addon');
    for (let i = 0; i < 40; i++) {
      const pair = sodium.signSeedKeyPair(randomBytes(32));
      const message = randomBytes(i * 7);
      const signature = sodium.signDetached(message, pair.secretKey);
      const altered = Buffer.from(signature);
      altered[i % 64] = (altered[i % 64] as number) ^ 1;
      const cases: [Buffer, Buffer, Buffer][] = [
        [signature, message, pair.publicKey],
        [altered, message, pair.publicKey],
        [addOrderToS(signature), message, pair.publicKey],
        [signature, Buffer.concat([message, Buffer.from([0])]), pair.publicKey],
      ];
      for (const [sig, msg, key] of cases) {
        assert.equal(await web.verify(msg, sig, key), sodium.verifyDetached(sig, msg, key));
      }
    }
  });

  it('refuses small-order keys and R with S = 0, as libsodium does', async () => {
    const message = Buffer.from('any message');
    for (const point of ED25519_TORSION_SUBGROUP.map(hex)) {
      for (const r of ED25519_TORSION_SUBGROUP.map(hex)) {
        // S = 0 with R and A of small order satisfies the plain equation for some messages.
        const signature = Buffer.concat([r, Buffer.alloc(32)]);
        assert.equal(await web.verify(message, signature, point), false);
        assert.equal(sodium.verifyDetached(signature, message, point), false);
      }
    }
    // A valid key with a small-order R and S = 0: refused by both.
    const pair = sodium.signSeedKeyPair(randomBytes(32));
    for (const r of ED25519_TORSION_SUBGROUP.map(hex)) {
      const signature = Buffer.concat([r, Buffer.alloc(32)]);
      assert.equal(await web.verify(message, signature, pair.publicKey), false);
      assert.equal(sodium.verifyDetached(signature, message, pair.publicKey), false);
    }
  });

  it('loads the same public keys as the Node entry, refusing the same points for the same reasons', async () => {
    const points = [
      ...ED25519_TORSION_SUBGROUP.map(hex),
      Buffer.alloc(32, 0xff),
      hex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'),
      hex('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'),
      ...Array.from({ length: 30 }, () => randomBytes(32)),
      ...Array.from({ length: 10 }, () => sodium.signSeedKeyPair(randomBytes(32)).publicKey),
    ];
    const inputs: (string | Uint8Array)[] = [
      ...points,
      ...points.map((point) => point.toString('base64')),
      merchantKey.publicKey.subarray(1),
      merchantKey.secretKey,
      merchantKey.publicKey.toString('base64url'),
      withTrailingBitSet(merchantKey.publicKey.toString('base64')),
      node.signingKeyToPem(merchantKey).publicKeyPem,
      node.signingKeyToPem(merchantKey).privateKeyPem,
      `\n  ${node.signingKeyToPem(merchantKey).publicKeyPem}\n`,
      x25519.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n',
      '',
    ];
    for (const input of inputs) {
      const byNode = node.publicKeyFrom(input);
      const byWeb = web.publicKeyFrom(input);
      assert.deepEqual(
        byWeb.ok ? { ok: true, value: Buffer.from(byWeb.value) } : byWeb,
        byNode,
        typeof input === 'string' ? input : Buffer.from(input).toString('hex'),
      );
    }
  });

  it('loads the same signing keys as the Node entry and refuses the same inputs', async () => {
    const { privateKeyPem } = node.signingKeyToPem(merchantKey);
    const mismatched = Buffer.concat([node.seedOf(merchantKey), otherWebhookKey.publicKey]);
    const inputs: (string | Uint8Array)[] = [
      node.seedOf(merchantKey),
      merchantKey.secretKey,
      privateKeyPem,
      privateKeyPem.replace(/\n/g, '\r\n'),
      node.seedOf(merchantKey).toString('base64'),
      mismatched,
      randomBytes(31),
      node.seedOf(merchantKey).toString('base64url'),
      withTrailingBitSet(node.seedOf(merchantKey).toString('base64')),
      x25519.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
    ];
    for (const input of inputs) {
      const byNode = node.signingKeyFrom(input);
      const byWeb = await web.signingKeyFrom(input);
      assert.equal(byWeb.ok, byNode.ok);
      if (byWeb.ok && byNode.ok) assert.deepEqual(Buffer.from(byWeb.value.publicKey), byNode.value.publicKey);
      if (!byWeb.ok && !byNode.ok) assert.deepEqual(byWeb.error, byNode.error);
    }
  });

  it('refuses the same webhooks as the Node entry, at the same check, for the same reason', async () => {
    const valid = signedWebhook();
    const tampered = (name: string, value: string) => ({
      ...valid,
      headers: valid.headers.map((pair) => {
        const [key, text] = pair as readonly [string, string];
        return key === name ? ([key, value] as const) : ([key, text] as const);
      }),
    });
    const cases: node.ReceivedWebhook[] = [
      valid,
      { ...valid, method: 'PUT' },
      { ...valid, body: Buffer.concat([valid.body, Buffer.from(' ')]) },
      { ...valid, path: '/webhook/payout' },
      { ...valid, headers: [...(valid.headers as node.HeaderPair[]), ['signature', headerOf(valid, 'signature')]] },
      tampered('content-digest', `${headerOf(valid, 'content-digest')} `),
      tampered('webhook-event-id', 'evt_other'),
      tampered(
        'signature',
        node.serializeSignature('platform', addOrderToS(signatureBytes(headerOf(valid, 'signature')))),
      ),
      tampered('signature', headerOf(signedWebhook(), 'signature')),
      tampered('signature-input', headerOf(valid, 'signature-input').replace('keyid="', 'keyid="x')),
      signedWebhook({ key: otherWebhookKey }),
      signedWebhook({ created: NOW - 400 }),
      signedWebhook({ created: NOW + 400 }),
      signWebhookRaw({ created: NOW, expires: NOW + 301, nonce: freshUuid(), keyid: WEBHOOK_KEY_ID }),
      signedWebhook({ body: Buffer.from(`\ufeff${EVENT_BODY.toString()}`) }),
    ];
    const depsList = [
      webhookDeps(),
      webhookDeps({ publicKeys: new Map([[WEBHOOK_KEY_ID, hex(ED25519_TORSION_SUBGROUP[0] as string)]]) }),
      webhookDeps({ publicKeys: () => undefined }),
    ];
    for (const deps of depsList) {
      for (const webhook of cases) {
        const byNode = await node.verifyWebhook(webhook, deps);
        const byWeb = await web.verifyWebhook(webhook, deps);
        assert.deepEqual(
          byWeb.ok ? { ok: true, value: { ...byWeb.value, body: Buffer.from(byWeb.value.body) } } : byWeb,
          byNode,
        );
      }
    }
    // The verdict list above is not trivially all one answer.
    const verdicts = await Promise.all(
      cases.map(async (webhook) => (await web.verifyWebhook(webhook, webhookDeps())).ok),
    );
    assert.deepEqual(verdicts.filter(Boolean).length, 1);
  });
});
