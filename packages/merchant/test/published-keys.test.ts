/**
 * The WebhookVerifier with keys fetched from the platform's published endpoint
 * (`GET /.well-known/paygate/webhook-keys`), against a real platform that rotates its webhook
 * key through the operator API: real deliveries verify before and after the rotation without
 * reconfiguring; an unknown keyid triggers one refetch, rate-limited; the cache lives its TTL;
 * a retired key stops verifying once the cached set expires.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  type IncomingWebhook,
  type PaygateClient,
  PublishedWebhookKeys,
  WebhookVerificationError,
  WebhookVerifier,
} from '@paygate/merchant';
import { generateSigningKey, signWebhook } from '@paygate/protocol';
import {
  createMerchant,
  databases,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { clientFor, deliverAll, type Recorded, type ScriptedServer, startScriptedServer } from './helpers.js';

const ADMIN = { authorization: 'Bearer test-admin-token-0123456789abcdef', 'content-type': 'application/json' };

const asWebhook = (recorded: Recorded): IncomingWebhook => ({
  method: recorded.method,
  target: recorded.target,
  headers: recorded.rawHeaders,
  body: recorded.body,
});

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof WebhookVerificationError, String(error));
  return error;
}

for (const database of databases()) {
  describe(`WebhookVerifier with the published webhook keys of a real platform (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let client: PaygateClient;
    let recorder: ScriptedServer;
    let now = Date.now();
    let keys: PublishedWebhookKeys;
    let verifier: WebhookVerifier;

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
      client = clientFor(platform, merchant);
      recorder = await startScriptedServer({ kind: 'reply', status: 200, body: '{}' });
      keys = new PublishedWebhookKeys({ baseUrl: platform.url, clock: () => now });
      // These tests verify one captured delivery more than once: no replay guard here.
      verifier = new WebhookVerifier({ publishedKeys: keys, consumeNonce: () => true });
    });
    after(async () => {
      await recorder.close();
      await platform.close();
    });

    /** A delivery of a freshly paid payment, as the recorder received it. */
    async function delivery(): Promise<Recorded> {
      const before = recorder.received.length;
      const payment = await client.payments.create({
        merchantOrderNo: `PK-${randomUUID().slice(0, 12)}`,
        currency: 'BRL',
        amount: '10.00',
        paymentMethod: { code: 'PIX' },
        webhookUrl: `${recorder.url}/webhook/payment`,
      });
      await client.sandbox.simulatePayment({ orderNo: payment.orderNo, status: 'SUCCEEDED' });
      await deliverAll(platform);
      const recorded = recorder.received[before];
      assert.ok(recorded, 'delivered');
      return recorded;
    }

    async function admin(path: string, body: unknown) {
      const response = await fetch(`${platform.url}/admin/v1${path}`, {
        method: 'POST',
        headers: ADMIN,
        body: JSON.stringify(body),
      });
      const json = (await response.json()) as { msg: string; data: { keyId: string } };
      assert.equal(json.msg, 'SUCCESS', JSON.stringify(json));
      return json.data;
    }

    it('verifies with the published key, fetched once and cached', async () => {
      const first = await verifier.verify(asWebhook(await delivery()));
      assert.equal(first.keyid, merchant.webhookKeys[0]?.keyid);
      assert.equal(keys.fetches, 1);
      await verifier.verify(asWebhook(await delivery()));
      assert.equal(keys.fetches, 1, 'the cached set serves the next delivery');
    });

    let oldDelivery: Recorded;
    let oldKeyid: string;

    it('follows a rotation: the new keyid is unknown, one refetch, verified', async () => {
      oldDelivery = await delivery();
      oldKeyid = (await verifier.verify(asWebhook(oldDelivery))).keyid;
      const rotated = await admin('/platform-keys/rotate', { kind: 'webhook' });
      assert.notEqual(rotated.keyId, oldKeyid);

      const fetchesBefore = keys.fetches;
      const fresh = await verifier.verify(asWebhook(await delivery()));
      assert.equal(fresh.keyid, rotated.keyId, 'signed with the new key');
      assert.equal(keys.fetches, fetchesBefore + 1, 'exactly one refetch');
      // The old key is still published (enabled) during the rotation: both verify.
      await verifier.verify(asWebhook(oldDelivery));
      assert.deepEqual(verifier.keyids.sort(), [oldKeyid, rotated.keyId].sort());
    });

    it('an unknown keyid costs at most one refetch per interval, then fails at the keyid check', async () => {
      now += 31_000;
      const stranger = generateSigningKey();
      const forged = (keyid: string): IncomingWebhook => {
        const body = Buffer.from(JSON.stringify({ eventId: 'evt_forged' }));
        const url = 'http://127.0.0.1/webhook/payment';
        const signed = signWebhook(
          { url, body, eventId: 'evt_forged' },
          { keyid, key: stranger, created: Math.floor(Date.now() / 1000), nonce: randomUUID() },
        );
        return { method: 'POST', target: url, headers: signed.headers, body };
      };
      const fetchesBefore = keys.fetches;
      for (let i = 0; i < 5; i++) {
        const error = await refusal(verifier.verify(forged('wk_test_made_up')));
        assert.equal(error.check, 'keyid');
      }
      assert.equal(keys.fetches, fetchesBefore + 1, 'one refetch for five unknown keyids');
      now += 31_000;
      await refusal(verifier.verify(forged('wk_test_made_up_again')));
      assert.equal(keys.fetches, fetchesBefore + 2, 'another after the interval');
      // A known keyid with the wrong private key is a signature failure, without a fetch.
      const wrong = await refusal(verifier.verify(forged(oldKeyid)));
      assert.equal(wrong.check, 'signature');
      assert.equal(keys.fetches, fetchesBefore + 2);
    });

    it('a retired key stops verifying once the cached set expires (TTL from Cache-Control)', async () => {
      await admin('/platform-keys/retire', { keyId: oldKeyid });
      await verifier.verify(asWebhook(oldDelivery));
      const fetchesBefore = keys.fetches;
      now += 301_000;
      const error = await refusal(verifier.verify(asWebhook(oldDelivery)));
      assert.equal(error.check, 'keyid');
      assert.equal(keys.fetches, fetchesBefore + 1, 'the expired set was fetched again');
      assert.ok(!verifier.keyids.includes(oldKeyid));
    });

    it('an unreachable key endpoint is a keyid refusal that says so; no keys at all is a configuration error', async () => {
      const offline = new PublishedWebhookKeys({ baseUrl: 'http://127.0.0.1:9' });
      const given = new WebhookVerifier({ webhookKeys: merchant.webhookKeys, publishedKeys: offline });
      const error = await refusal(given.verify(asWebhook(await delivery())));
      assert.equal(error.check, 'keyid');
      assert.match(error.reason, /could not be fetched/);
      assert.throws(() => new WebhookVerifier({}), /give webhookKeys/);
    });
  });
}
