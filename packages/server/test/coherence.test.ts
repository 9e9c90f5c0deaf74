/**
 * Caches that stay coherent across instances (issue 16, item 3): two instances share one
 * PostgreSQL; a change made through one is seen by the other within the stated bound (merchant
 * keys and status: MERCHANT_CACHE_MS; platform keys: PLATFORM_KEY_CACHE_MS), and at once by the
 * instance that made it. Each instance has its own injected clock, so "within the bound" is
 * checked exactly, with no sleeping.
 */
import assert from 'node:assert/strict';
import { generateSigningKey } from '@paygate/protocol';
import { after, before, describe, it } from 'node:test';
import { masterKeyFrom, secretSealer } from '../src/crypto/master-key.js';
import type { Db } from '../src/db/db.js';
import { MERCHANT_CACHE_MS, Merchants } from '../src/modules/merchants/service.js';
import { BODY_KEY_CACHE_ENTRIES, PLATFORM_KEY_CACHE_MS, PlatformKeys } from '../src/modules/platform-keys/service.js';
import {
  countingDb,
  createMerchant,
  databases,
  get,
  post,
  startTestPlatform,
  TEST_MASTER_KEY,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';

const ADMIN = { authorization: 'Bearer test-admin-token-0123456789abcdef', 'content-type': 'application/json' };

async function operator(platform: TestPlatform, path: string, body: unknown = {}) {
  const response = await fetch(`${platform.url}/admin/v1${path}`, {
    method: 'POST',
    headers: ADMIN,
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { data: unknown }).data;
}

describe(
  'caches across instances',
  { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' },
  () => {
    let a: TestPlatform;
    let b: TestPlatform;
    let merchant: TestMerchant;
    before(async () => {
      a = await startTestPlatform({ database: 'postgres' });
      b = await startTestPlatform({ databaseUrl: a.config.databaseUrl });
      merchant = await createMerchant(a);
    });
    after(async () => {
      await b.close();
      await a.close();
    });

    const balances = (platform: TestPlatform, who: TestMerchant = merchant) => get(platform, who, '/api/v1/balances');

    it('a disabled merchant is refused by the instance that disabled it at once, by every other within the bound', async () => {
      assert.equal((await balances(b)).status, 200, 'B has the merchant cached');
      await operator(a, `/merchants/${merchant.accessKey}/disable`);
      assert.equal((await balances(a)).status, 401);
      b.advance(MERCHANT_CACHE_MS - 500);
      assert.equal((await balances(b)).status, 200, 'still inside the bound: B may serve from its cache');
      b.advance(500);
      assert.equal((await balances(b)).status, 401, 'past the bound: B refuses');

      await operator(a, `/merchants/${merchant.accessKey}/enable`);
      assert.equal((await balances(a)).status, 200);
      b.advance(MERCHANT_CACHE_MS);
      assert.equal((await balances(b)).status, 200);
    });

    it('a retired merchant key stops working on every instance within the bound', async () => {
      const next = generateSigningKey();
      await operator(a, `/merchants/${merchant.accessKey}/keys`, { publicKey: next.publicKey.toString('base64') });
      const rotated: TestMerchant = { ...merchant, key: next };
      assert.equal((await balances(a, rotated)).status, 200, 'the instance that added it accepts it at once');
      b.advance(MERCHANT_CACHE_MS);
      assert.equal((await balances(b, rotated)).status, 200, 'another accepts it within the bound');

      await operator(a, `/merchants/${merchant.accessKey}/keys/retire`, {
        key: merchant.key.publicKey.toString('base64'),
      });
      assert.equal((await balances(a)).status, 401);
      b.advance(MERCHANT_CACHE_MS);
      assert.equal((await balances(b)).status, 401);
      assert.equal((await balances(b, rotated)).status, 200);
      merchant = rotated;
    });

    it('a rotated webhook key signs on every instance within the bound', async () => {
      const before = await b.services.platformKeys.webhookSigner();
      const rotated = (await operator(a, '/platform-keys/rotate', { kind: 'webhook' })) as { keyId: string };
      assert.equal((await a.services.platformKeys.webhookSigner()).keyid, rotated.keyId);
      assert.equal((await b.services.platformKeys.webhookSigner()).keyid, before.keyid, 'B still inside the bound');
      b.advance(PLATFORM_KEY_CACHE_MS);
      assert.equal((await b.services.platformKeys.webhookSigner()).keyid, rotated.keyId);
    });

    it('a retired body key stops opening envelopes on every instance within the bound', async () => {
      const opened = await post(b, merchant, '/api/v1/payments/cancel', { orderNo: 'P-none' });
      assert.equal(opened.body.msg, 'VALIDATION_FAILED', 'the envelope opened; the business input was judged');
      const oldKeyId = merchant.bodyKey.keyId;
      await operator(a, '/platform-keys/rotate', { kind: 'body' });
      await operator(a, '/platform-keys/retire', { keyId: oldKeyId });
      b.advance(PLATFORM_KEY_CACHE_MS);
      const refused = await post(b, merchant, '/api/v1/payments/cancel', { orderNo: 'P-none' });
      assert.equal(refused.status, 401, 'sealed to a retired key');
    });
  },
);

for (const database of databases()) {
  describe(`cache refreshes are shared by the requests waiting for them (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let clock = Date.now();
    /** The platform's database, counting the statements a service sends through it. */
    const statements: string[] = [];
    let counted: Db;
    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
      const db = platform.services.db;
      counted = countingDb(db, statements);
    });
    after(() => platform.close());

    it('20 lookups of one merchant after the cache expired read the database once', async () => {
      const merchants = new Merchants(counted, platform.config.environment, () => clock);
      statements.length = 0;
      await merchants.findByAccessKey(merchant.accessKey);
      clock += MERCHANT_CACHE_MS;
      const found = await Promise.all(Array.from({ length: 20 }, () => merchants.findByAccessKey(merchant.accessKey)));
      assert.equal(statements.length, 2, 'one read to fill the cache, one to refresh it');
      assert.ok(found.every((m) => m !== undefined && m.accessKey === merchant.accessKey));
    });

    it('20 body-key and webhook-key lookups after the cache expired read each key once', async () => {
      const keys = new PlatformKeys(
        counted,
        platform.config.environment,
        secretSealer({ current: masterKeyFrom(TEST_MASTER_KEY), previous: undefined }),
        () => clock,
      );
      statements.length = 0;
      clock += PLATFORM_KEY_CACHE_MS;
      const [pairs, signers] = await Promise.all([
        Promise.all(Array.from({ length: 20 }, () => keys.bodyKeyPair(merchant.bodyKey.keyId))),
        Promise.all(Array.from({ length: 20 }, () => keys.webhookSigner())),
      ]);
      assert.equal(statements.length, 2, 'one read per key');
      assert.ok(pairs.every((pair) => pair !== undefined && pair === pairs[0]));
      assert.ok(signers.every((signer) => signer === signers[0]));
    });

    it('made-up body keyIds cannot grow the body-key cache without bound', async () => {
      const keys = new PlatformKeys(
        counted,
        platform.config.environment,
        secretSealer({ current: masterKeyFrom(TEST_MASTER_KEY), previous: undefined }),
        () => clock,
      );
      const known = merchant.bodyKey.keyId;
      statements.length = 0;
      assert.ok(await keys.bodyKeyPair(known));
      statements.length = 0;
      // An authenticated merchant may send any keyId in its envelopes; each unknown one is read once.
      for (let i = 0; i < BODY_KEY_CACHE_ENTRIES; i++)
        assert.equal(await keys.bodyKeyPair(`bk_test_made_up_${i}`), undefined);
      assert.equal(statements.length, BODY_KEY_CACHE_ENTRIES);
      assert.ok(await keys.bodyKeyPair(known));
      assert.equal(statements.length, BODY_KEY_CACHE_ENTRIES, 'the known key is still kept at the bound');
      assert.equal(await keys.bodyKeyPair('bk_test_one_too_many'), undefined);
      assert.ok(await keys.bodyKeyPair(known));
      assert.equal(statements.length, BODY_KEY_CACHE_ENTRIES + 2, 'past the bound the cache started afresh');
    });
  });
}
