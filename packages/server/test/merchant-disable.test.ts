/**
 * A disable that disables (issue 25, item 6): `paygate merchant disable` ends the merchant's
 * portal sessions and refuses its users' sign-in on every instance, within the bound its API
 * requests are refused in (MERCHANT_CACHE_MS; the portal reads the merchant on every request, so
 * at once); enabling it restores sign-in but not the old sessions. Over HTTP, on the embedded
 * database with one instance and on PostgreSQL with two instances sharing it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MERCHANT_CACHE_MS } from '../src/modules/merchants/service.js';
import {
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { ADMIN_TOKEN, PortalClient, portalUser } from './portal-harness.js';

async function operator(platform: TestPlatform, path: string) {
  const response = await fetch(`${platform.url}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(response.status, 200, await response.clone().text());
}

for (const database of databases()) {
  const shape = database === 'postgres' ? 'two instances on one PostgreSQL' : 'one instance, embedded';
  describe(`a disabled merchant is out of its portal too (${shape})`, () => {
    let instances: TestPlatform[];
    let merchant: TestMerchant;
    let other: TestMerchant;
    before(async () => {
      const first = await startTestPlatform({ database });
      instances =
        database === 'postgres' ? [first, await startTestPlatform({ databaseUrl: first.config.databaseUrl })] : [first];
      merchant = await createMerchant(first);
      other = await createMerchant(first, 'Other shop');
    });
    after(async () => {
      for (const instance of [...instances].reverse()) await instance.close();
    });

    it('ends its sessions and refuses its sign-in on every instance; enabling restores sign-in, not the sessions', async () => {
      const [a] = instances as [TestPlatform];
      const user = await portalUser(a, merchant);
      const otherUser = await portalUser(a, other);
      const created = await post<{ orderNo: string }>(a, merchant, '/api/v1/payments', paymentInput());
      const orderNo = created.body.data?.orderNo as string;
      // A session on each instance, and one of another merchant (which must not be touched).
      const sessions = await Promise.all(instances.map((p) => PortalClient.signIn(p, user.email, user.password)));
      const bystander = await PortalClient.signIn(a, otherUser.email, otherUser.password);
      for (const session of sessions) assert.equal((await session.get('/portal/api/payments')).status, 200);
      for (const p of instances) assert.equal((await get(p, merchant, '/api/v1/balances')).status, 200);

      await operator(a, `/merchants/${merchant.accessKey}/disable`);

      for (const [i, p] of instances.entries()) {
        const session = sessions[i] as PortalClient;
        for (const path of [
          '/portal/api/session',
          '/portal/api/payments',
          '/portal/api/balances',
          '/portal/api/events',
        ]) {
          const read = await session.get(path);
          assert.equal(read.status, 401, `instance ${i} ${path}: ${read.text}`);
        }
        const cancel = await session.post(`/portal/api/payments/${orderNo}/cancel`);
        assert.equal(cancel.status, 401, `instance ${i} cancel: ${cancel.text}`);
        const signIn = await new PortalClient(p).signIn(user.email, user.password);
        assert.equal(signIn.status, 403, `instance ${i}: ${signIn.text}`);
        assert.equal(signIn.body.msg, 'MERCHANT_DISABLED');
        // A wrong password learns nothing more than it did.
        const wrong = await new PortalClient(p).signIn(user.email, 'not the password at all');
        assert.equal(wrong.body.msg, 'LOGIN_FAILED');
        // The API, in the same bound: at once where disabled, within MERCHANT_CACHE_MS elsewhere.
        if (p !== a) p.advance(MERCHANT_CACHE_MS);
        assert.equal((await get(p, merchant, '/api/v1/balances')).status, 401, `instance ${i} API`);
      }
      const payment = await a.services.db.query<{ status: string }>('SELECT status FROM payments WHERE order_no = $1', [
        orderNo,
      ]);
      assert.equal(payment.rows[0]?.status, 'PENDING', 'the cancel through the old session changed nothing');
      assert.equal((await bystander.get('/portal/api/payments')).status, 200, "another merchant's session lives on");

      await operator(a, `/merchants/${merchant.accessKey}/enable`);

      for (const [i, p] of instances.entries()) {
        assert.equal((await (sessions[i] as PortalClient).get('/portal/api/payments')).status, 401, 'stays ended');
        const again = await PortalClient.signIn(p, user.email, user.password);
        assert.equal((await again.get('/portal/api/payments')).status, 200, `instance ${i} signs in again`);
        if (p !== a) p.advance(MERCHANT_CACHE_MS);
        assert.equal((await get(p, merchant, '/api/v1/balances')).status, 200, `instance ${i} API`);
      }
    });
  });
}
