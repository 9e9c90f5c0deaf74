import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generateSigningKey } from '@paygate/protocol';
import { buildApp } from '../src/app.js';
import { LOCK_MS, MAX_FAILURES_PER_EMAIL, MAX_FAILURES_PER_IP } from '../src/modules/accounts/service.js';
import {
  buildRead,
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { ADMIN_TOKEN, invite, PASSWORD, PortalClient, portalUser, setup } from './portal-harness.js';

interface Session {
  email: string;
  merchant: { name: string; accessKey: string; environment: string };
  csrfToken: string;
}
interface Payment {
  orderNo: string;
  merchantOrderNo: string;
  status: string;
  payer?: { name?: string; documentNumber?: string };
}
interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
interface Credentials {
  accessKey: string;
  environment: string;
  publicKeys: { id: string; publicKey: string; status: string }[];
  bodyKey: { keyId: string; publicKey: string };
  webhookKeys: { keyid: string; publicKey: string }[];
}

const ROOT = new URL('../../../', import.meta.url).pathname;

for (const database of databases()) {
  describe(`portal API (${database})`, () => {
    let platform: TestPlatform;
    let shopA: TestMerchant;
    let shopB: TestMerchant;
    let userA: { email: string; password: string };
    let userB: { email: string; password: string };

    before(async () => {
      platform = await startTestPlatform({ database });
      shopA = await createMerchant(platform, 'Shop A');
      shopB = await createMerchant(platform, 'Shop B');
      userA = await portalUser(platform, shopA);
      userB = await portalUser(platform, shopB);
    });
    after(() => platform.close());

    const createPayment = async (merchant: TestMerchant, overrides: Record<string, unknown> = {}) => {
      const created = await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput(overrides));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.data as Payment;
    };

    describe('sessions', () => {
      it('an invitation link sets the password once; signing in sets an HttpOnly, SameSite=Strict cookie', async () => {
        const email = 'Owner@Shop-A.example';
        const invitation = await invite(platform, shopA.accessKey, email);
        assert.equal(invitation.email, 'owner@shop-a.example');
        assert.match(invitation.setupUrl, /\/portal\/setup#token=[A-Za-z0-9_-]{43}$/);

        const weak = await setup(platform, invitation.token, 'short');
        assert.equal(weak.status, 400);
        assert.equal(weak.body.msg, 'VALIDATION_FAILED');
        assert.equal((await setup(platform, invitation.token, PASSWORD)).status, 200);
        const again = await setup(platform, invitation.token, PASSWORD);
        assert.equal(again.status, 400);
        assert.equal(again.body.msg, 'INVITATION_INVALID');

        const client = new PortalClient(platform);
        const signedIn = await client.signIn('  OWNER@shop-a.example ', PASSWORD);
        assert.equal(signedIn.status, 200, signedIn.text);
        const cookie = client.setCookie ?? '';
        assert.match(cookie, /^paygate_portal=[A-Za-z0-9_-]{43}; /);
        assert.match(cookie, /; HttpOnly/);
        assert.match(cookie, /; SameSite=Strict/);
        assert.match(cookie, /; Path=\/portal/);
        assert.doesNotMatch(cookie, /Secure/, 'no Secure flag on a plain-http public URL');
        assert.equal(signedIn.headers.get('cache-control'), 'no-store');

        const session = await client.get<Session>('/portal/api/session');
        assert.equal(session.status, 200);
        assert.equal(session.body.data?.email, 'owner@shop-a.example');
        assert.deepEqual(session.body.data?.merchant, {
          name: 'Shop A',
          accessKey: shopA.accessKey,
          environment: 'sandbox',
        });
        assert.equal(session.body.data?.csrfToken, client.csrfToken);
      });

      it('stores only the SHA-256 of session tokens and an scrypt hash of passwords', async () => {
        const client = await PortalClient.signIn(platform, userA.email, userA.password);
        const token = (client.cookie ?? '').split('=')[1] as string;
        const digest = createHash('sha256').update(token).digest();
        const sessions = await platform.services.db.query<{ token_hash: Uint8Array }>(
          'SELECT token_hash FROM portal_sessions',
        );
        assert.ok(sessions.rows.some((row) => Buffer.from(row.token_hash).equals(digest)));
        const dump = JSON.stringify(
          (await platform.services.db.query('SELECT * FROM portal_sessions')).rows,
          (_key, value) => (typeof value === 'bigint' ? value.toString() : value),
        );
        assert.ok(!dump.includes(token), 'the raw token is not stored');
        const users = await platform.services.db.query<{ password_hash: string }>(
          'SELECT password_hash FROM portal_users WHERE email = $1',
          [userA.email],
        );
        assert.match(users.rows[0]?.password_hash ?? '', /^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
      });

      it('refuses a wrong password and an unknown email alike, and requests without a valid cookie', async () => {
        const client = new PortalClient(platform);
        const wrong = await client.signIn(userA.email, 'not the password at all');
        const unknown = await client.signIn('nobody@nowhere.example', 'not the password at all');
        assert.equal(wrong.status, 401);
        assert.deepEqual(wrong.body, unknown.body);
        assert.equal(wrong.body.msg, 'LOGIN_FAILED');
        assert.equal(client.cookie, undefined);

        assert.equal((await client.get('/portal/api/credentials')).status, 401);
        client.cookie = 'paygate_portal=forged-token';
        const forged = await client.get('/portal/api/credentials');
        assert.equal(forged.status, 401);
        assert.equal(forged.body.msg, 'UNAUTHORIZED');
      });

      it('logout ends the session server-side: the old cookie no longer works', async () => {
        const client = await PortalClient.signIn(platform, userA.email, userA.password);
        const oldCookie = client.cookie;
        assert.equal((await client.get('/portal/api/credentials')).status, 200);
        const out = await client.post('/portal/api/session/logout');
        assert.equal(out.status, 200);
        assert.match(client.setCookie ?? '', /^paygate_portal=; .*Max-Age=0/);
        const replay = new PortalClient(platform);
        replay.cookie = oldCookie;
        assert.equal((await replay.get('/portal/api/credentials')).status, 401);
      });

      it('a session ends after two idle hours even if the browser keeps the cookie', async () => {
        const client = await PortalClient.signIn(platform, userB.email, userB.password);
        assert.equal((await client.get('/portal/api/session')).status, 200);
        platform.advance(2 * 3_600_000 + 1000);
        assert.equal((await client.get('/portal/api/session')).status, 401);
      });
    });

    describe('CSRF', () => {
      it('refuses a write without the CSRF header, with a wrong one, or from another origin; nothing changes', async () => {
        const client = await PortalClient.signIn(platform, userA.email, userA.password);
        const key = generateSigningKey().publicKey.toString('base64');
        const keysBefore = (await platform.services.merchants.keys(shopA.accessKey)).length;

        const missing = await client.post('/portal/api/keys', { publicKey: key }, { noCsrf: true });
        assert.equal(missing.status, 403);
        assert.equal(missing.body.msg, 'CSRF_REJECTED');
        const wrong = await client.post(
          '/portal/api/keys',
          { publicKey: key },
          { noCsrf: true, headers: { 'x-csrf-token': 'A'.repeat(43) } },
        );
        assert.equal(wrong.status, 403);
        const foreign = await client.post(
          '/portal/api/keys',
          { publicKey: key },
          { headers: { origin: 'https://evil.example' } },
        );
        assert.equal(foreign.status, 403);
        const crossSite = await client.post(
          '/portal/api/keys',
          { publicKey: key },
          { headers: { 'sec-fetch-site': 'cross-site' } },
        );
        assert.equal(crossSite.status, 403);
        // A form post from another site (no JSON, no token) is refused before its body is read.
        const form = await fetch(`${platform.url}/portal/api/session/logout`, {
          method: 'POST',
          headers: {
            cookie: client.cookie ?? '',
            'content-type': 'application/x-www-form-urlencoded',
            origin: 'https://evil.example',
          },
          body: 'a=1',
        });
        assert.equal(form.status, 403);
        assert.equal((await platform.services.merchants.keys(shopA.accessKey)).length, keysBefore);
        assert.equal((await client.get('/portal/api/session')).status, 200, 'the session still works');

        const sameOrigin = await client.post(
          '/portal/api/keys',
          { publicKey: key },
          { headers: { origin: platform.url } },
        );
        assert.equal(sameOrigin.status, 200, sameOrigin.text);
        assert.equal((await platform.services.merchants.keys(shopA.accessKey)).length, keysBefore + 1);
        await client.post('/portal/api/keys/retire', { key });
      });

      it('refuses an email with a control character (NUL) as VALIDATION_FAILED, not a 500', async () => {
        const client = new PortalClient(platform);
        const response = await client.signIn('\u0000', userA.password);
        assert.equal(response.status, 400, response.text);
        assert.equal(response.body.msg, 'VALIDATION_FAILED');
        const embedded = await client.signIn(`${userA.email}\u0000`, userA.password);
        assert.equal(embedded.status, 400, embedded.text);
      });

      it('refuses a sign-in posted from another origin', async () => {
        const client = new PortalClient(platform);
        const response = await client.signIn(userA.email, userA.password, { origin: 'https://evil.example' });
        assert.equal(response.status, 403);
        assert.equal(client.cookie, undefined);
      });
    });

    describe('access control', () => {
      it("merchant B's session cannot read, find or list merchant A's orders", async () => {
        const payment = await createPayment(shopA);
        const a = await PortalClient.signIn(platform, userA.email, userA.password);
        const b = await PortalClient.signIn(platform, userB.email, userB.password);

        const own = await a.get<{ payment: Payment }>(`/portal/api/payments/${payment.orderNo}`);
        assert.equal(own.status, 200);
        assert.equal(own.body.data?.payment.orderNo, payment.orderNo);

        const other = await b.get(`/portal/api/payments/${payment.orderNo}`);
        assert.equal(other.status, 404);
        assert.equal(other.body.msg, 'ORDER_NOT_FOUND');
        const unknown = await b.get('/portal/api/payments/P209901010000000001');
        assert.deepEqual(other.body, unknown.body, 'indistinguishable from an unknown order');

        const byNumber = await b.get<Page<Payment>>(`/portal/api/payments?orderNo=${payment.orderNo}`);
        assert.deepEqual(byNumber.body.data?.items, []);
        const byMerchantNumber = await b.get<Page<Payment>>(`/portal/api/payments?orderNo=${payment.merchantOrderNo}`);
        assert.deepEqual(byMerchantNumber.body.data?.items, []);
        const list = await b.get<Page<Payment>>('/portal/api/payments?pageSize=100');
        assert.ok(!list.body.data?.items.some((p) => p.orderNo === payment.orderNo));

        const credentials = await b.get<Credentials>('/portal/api/credentials');
        assert.equal(credentials.body.data?.accessKey, shopB.accessKey);
        const retire = await b.post('/portal/api/keys/retire', { key: shopA.key.publicKey.toString('base64') });
        assert.equal(retire.status, 404, "B cannot retire A's key");
      });

      it("merchant B's session sees neither A's payouts, ledger nor rejected requests", async () => {
        const b = await PortalClient.signIn(platform, userB.email, userB.password);
        assert.equal((await b.get('/portal/api/payouts/W209901010000000001')).status, 404);
        const bad = buildRead(shopA, '/api/v1/payments', 'orderNo=P209901010000000001', platform.services.now());
        bad.headers.signature = `merchant=:${Buffer.alloc(64).toString('base64')}:`;
        const refused = await fetch(`${platform.url}/api/v1/payments?orderNo=P209901010000000001`, {
          headers: bad.headers,
        });
        assert.equal(refused.status, 401);
        await new Promise((resolve) => setTimeout(resolve, 100));
        const mine = await b.get<unknown[]>('/portal/api/rejected-requests');
        assert.deepEqual(mine.body.data, []);
        const a = await PortalClient.signIn(platform, userA.email, userA.password);
        const theirs = await a.get<{ step: string; signatureBase: string; path: string }[]>(
          '/portal/api/rejected-requests',
        );
        assert.ok(
          theirs.body.data?.some(
            (r) => r.path === '/api/v1/payments' && r.signatureBase?.includes('"@query": ?orderNo='),
          ),
        );
      });

      it('an email cannot be invited into a second merchant', async () => {
        const response = await fetch(`${platform.url}/admin/v1/merchants/${shopB.accessKey}/users`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email: userA.email }),
        });
        assert.equal(response.status, 409);
      });
    });

    describe('lockout', () => {
      it(`locks an email after ${MAX_FAILURES_PER_EMAIL} failures, even for the right password, then unlocks`, async () => {
        const user = await portalUser(platform, shopA);
        const client = new PortalClient(platform);
        for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
          assert.equal((await client.signIn(user.email, `wrong password ${i}`)).status, 401);
        }
        const locked = await client.signIn(user.email, user.password);
        assert.equal(locked.status, 429);
        assert.equal(locked.body.msg, 'LOGIN_LOCKED');
        assert.ok(Number(locked.headers.get('retry-after')) > 0);
        assert.equal(client.cookie, undefined);
        // Other users are not affected.
        assert.equal((await new PortalClient(platform).signIn(userB.email, userB.password)).status, 200);
        // Unknown emails lock the same way (nothing tells users from non-users).
        for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) await client.signIn('ghost@nowhere.example', 'x');
        assert.equal((await client.signIn('ghost@nowhere.example', 'x')).status, 429);

        platform.advance(LOCK_MS + 1000);
        assert.equal((await client.signIn(user.email, user.password)).status, 200);
      });

      it(`throttles one client address after ${MAX_FAILURES_PER_IP} failures across emails`, async () => {
        platform.advance(LOCK_MS + 1000);
        const client = new PortalClient(platform);
        const guesses = Array.from({ length: MAX_FAILURES_PER_IP }, (_, i) => `spray-${i}@nowhere.example`);
        for (const email of guesses) assert.equal((await client.signIn(email, 'Summer2024!')).status, 401);
        const throttled = await client.signIn(userA.email, userA.password);
        assert.equal(throttled.status, 429);
        platform.advance(LOCK_MS + 1000);
        assert.equal((await client.signIn(userA.email, userA.password)).status, 200);
      });
    });

    describe('data', () => {
      it('lists payments with status, time and order-number filters and cursor paging', async () => {
        const shop = await createMerchant(platform, 'Paging shop');
        const user = await portalUser(platform, shop);
        const client = await PortalClient.signIn(platform, user.email, user.password);
        const made: Awaited<ReturnType<typeof createPayment>>[] = [];
        for (let i = 0; i < 3; i++) made.push(await createPayment(shop));
        await post(platform, shop, '/api/v1/sandbox/payments/simulate', {
          orderNo: made[0]?.orderNo,
          status: 'SUCCEEDED',
          payer: { name: 'Ana Lima', documentNumber: '0012345' },
        });

        const first = await client.get<Page<Payment>>('/portal/api/payments?pageSize=2');
        assert.equal(first.body.data?.items.length, 2);
        assert.ok(first.body.data?.nextCursor);
        const second = await client.get<Page<Payment>>(
          `/portal/api/payments?pageSize=2&cursor=${first.body.data?.nextCursor}`,
        );
        assert.equal(second.body.data?.items.length, 1);
        assert.equal(second.body.data?.nextCursor, null);
        const all = [...(first.body.data?.items ?? []), ...(second.body.data?.items ?? [])].map((p) => p.orderNo);
        assert.deepEqual(all.sort(), made.map((p) => p.orderNo).sort());

        const succeeded = await client.get<Page<Payment>>('/portal/api/payments?status=SUCCEEDED');
        assert.deepEqual(
          succeeded.body.data?.items.map((p) => p.orderNo),
          [made[0]?.orderNo],
        );
        const future = await client.get<Page<Payment>>(`/portal/api/payments?from=${platform.services.now() + 60_000}`);
        assert.deepEqual(future.body.data?.items, []);
        const byMerchantNo = await client.get<Page<Payment>>(
          `/portal/api/payments?orderNo=${made[1]?.merchantOrderNo}`,
        );
        assert.deepEqual(
          byMerchantNo.body.data?.items.map((p) => p.orderNo),
          [made[1]?.orderNo],
        );
        const bad = await client.get('/portal/api/payments?status=NOPE');
        assert.equal(bad.status, 400);

        const detail = await client.get<{
          payment: Payment;
          timeline: { status: string }[];
          events: { status: string; body: string }[];
        }>(`/portal/api/payments/${made[0]?.orderNo}`);
        assert.deepEqual(detail.body.data?.payment.payer, { name: 'Ana Lima', documentNumber: '0012345' });
        assert.deepEqual(
          detail.body.data?.timeline.map((t) => t.status),
          ['PENDING', 'SUCCEEDED', 'SUCCEEDED'],
        );
        assert.equal(detail.body.data?.events.length, 1);
        assert.equal(JSON.parse(detail.body.data?.events[0]?.body ?? '{}').payer.documentNumber, '0012345');

        const balances = await client.get<{ currency: string; available: string }[]>('/portal/api/balances');
        assert.equal(balances.body.data?.find((b) => b.currency === 'BRL')?.available !== '0.00', true);
        const ledger = await client.get<Page<{ orderNo: string; amount: string }>>('/portal/api/ledger?currency=BRL');
        assert.ok(ledger.body.data?.items.some((e) => e.orderNo === made[0]?.orderNo));
        const csv = await client.get('/portal/api/ledger/export.csv?currency=BRL');
        assert.equal(csv.status, 200);
        assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
        assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="ledger-BRL-/);
        const lines = csv.text.trim().split('\r\n');
        assert.equal(lines[0], 'entryId,createdAt,currency,account,amount,transactionKind,reference,orderNo');
        assert.equal(lines.length, 1 + (ledger.body.data?.items.length ?? 0));
        assert.ok(lines.some((line) => line.includes(`payment:${made[0]?.orderNo}`)));
      });

      it('credentials: upload a second key (both sign), refuse a third, retire one', async () => {
        const shop = await createMerchant(platform, 'Rotating shop');
        const user = await portalUser(platform, shop);
        const client = await PortalClient.signIn(platform, user.email, user.password);
        const creds = await client.get<Credentials>('/portal/api/credentials');
        assert.equal(creds.body.data?.accessKey, shop.accessKey);
        assert.equal(creds.body.data?.environment, 'sandbox');
        assert.equal(creds.body.data?.bodyKey.keyId, shop.bodyKey.keyId);
        assert.deepEqual(
          creds.body.data?.webhookKeys.map((k) => ({ keyid: k.keyid, publicKey: k.publicKey })),
          shop.webhookKeys,
        );

        const next = generateSigningKey();
        const added = await client.post<Credentials>('/portal/api/keys', {
          publicKey: next.publicKey.toString('base64'),
        });
        assert.equal(added.status, 200, added.text);
        assert.equal(added.body.data?.publicKeys.filter((k) => k.status === 'active').length, 2);
        const rotated = { ...shop, key: next };
        assert.equal((await get(platform, rotated, '/api/v1/balances')).status, 200, 'the new key signs');
        assert.equal((await get(platform, shop, '/api/v1/balances')).status, 200, 'the old key still signs');

        const third = await client.post('/portal/api/keys', {
          publicKey: generateSigningKey().publicKey.toString('base64'),
        });
        assert.equal(third.status, 409);
        const invalid = await client.post('/portal/api/keys', { publicKey: 'not a key' });
        assert.equal(invalid.status, 400);

        const retired = await client.post<Credentials>('/portal/api/keys/retire', {
          key: shop.key.publicKey.toString('base64'),
        });
        assert.equal(retired.status, 200, retired.text);
        assert.equal(retired.body.data?.publicKeys.filter((k) => k.status === 'active').length, 1);
        assert.equal((await get(platform, shop, '/api/v1/balances')).status, 401, 'the retired key no longer signs');
      });
    });
  });
}

describe('portal over https and in production', () => {
  it('uses a __Host- Secure cookie when the public URL is https, and accepts that origin', async () => {
    const platform = await startTestPlatform({ config: { publicUrl: 'https://pay.example' } });
    try {
      const shop = await createMerchant(platform);
      const user = await portalUser(platform, shop);
      const client = new PortalClient(platform);
      const response = await client.signIn(user.email, user.password, { origin: 'https://pay.example' });
      assert.equal(response.status, 200, response.text);
      assert.match(
        client.setCookie ?? '',
        /^__Host-paygate_portal=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/,
      );
      assert.equal((await client.get('/portal/api/session')).status, 200);
    } finally {
      await platform.close();
    }
  });

  it('has no cashier page and no rejected-requests view in production', async () => {
    const platform = await startTestPlatform({ env: { PAYGATE_ENV: 'production' } });
    try {
      const shop = await createMerchant(platform);
      const user = await portalUser(platform, shop);
      const client = await PortalClient.signIn(platform, user.email, user.password);
      const session = await client.get<Session>('/portal/api/session');
      assert.equal(session.body.data?.merchant.environment, 'production');
      assert.equal((await client.get('/portal/api/rejected-requests')).status, 404);
      // Production without a channel refuses the create (nothing to route to); the cashier page,
      // the sandbox channel's surface, does not exist there at all.
      const payment = await post<Payment>(
        platform,
        shop,
        '/api/v1/payments',
        paymentInput({ webhookUrl: 'https://merchant.example/webhook/payment' }),
      );
      assert.equal(payment.status, 400);
      const cashier = await fetch(`${platform.url}/cashier/P0000000000000000000000000`);
      assert.equal(cashier.status, 404);
    } finally {
      await platform.close();
    }
  });
});

describe('portal web app serving', () => {
  let platform: TestPlatform;
  let dir: string;
  before(async () => {
    platform = await startTestPlatform();
    dir = mkdtempSync(join(tmpdir(), 'paygate-portal-dist-'));
  });
  after(async () => {
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('explains how to build the portal when there is no build, and the API still works', async () => {
    const app = await buildApp(platform.services, { portalDir: join(dir, 'missing') });
    const page = await app.inject({ method: 'GET', url: '/portal/' });
    assert.equal(page.statusCode, 503);
    assert.match(page.body, /npm run build/);
    const api = await app.inject({ method: 'GET', url: '/portal/api/session' });
    assert.equal(api.statusCode, 401);
    await app.close();
  });

  it('serves files with a strict CSP, index.html for app paths, and nothing outside the build', async () => {
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>portal</title>');
    writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log(1)');
    const app = await buildApp(platform.services, { portalDir: dir });
    const redirect = await app.inject({ method: 'GET', url: '/portal' });
    assert.equal(redirect.statusCode, 302);
    const index = await app.inject({ method: 'GET', url: '/portal/' });
    assert.equal(index.statusCode, 200);
    assert.match(index.headers['content-security-policy'] as string, /script-src 'self'/);
    assert.equal(index.headers['x-frame-options'], 'DENY');
    const deep = await app.inject({ method: 'GET', url: '/portal/payments/P202601010000000001' });
    assert.equal(deep.statusCode, 200);
    assert.equal(deep.body, index.body);
    const asset = await app.inject({ method: 'GET', url: '/portal/assets/app-1234.js' });
    assert.equal(asset.statusCode, 200);
    assert.match(asset.headers['content-type'] as string, /^text\/javascript/);
    assert.match(asset.headers['cache-control'] as string, /immutable/);
    assert.equal((await app.inject({ method: 'GET', url: '/portal/assets/missing.js' })).statusCode, 404);
    for (const url of [
      '/portal/..%2f..%2fpackage.json',
      '/portal/%2e%2e/%2e%2e/package.json',
      '/portal/assets/..%2f..%2f..%2fserver%2fpackage.json',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      assert.notEqual(response.statusCode, 200, url);
    }
    const unknownApi = await app.inject({ method: 'GET', url: '/portal/api/nope' });
    assert.equal(unknownApi.statusCode, 404);
    assert.equal(unknownApi.json().msg, 'NOT_FOUND');
    await app.close();
  });

  it('`paygate user invite` prints a one-time setup link', async () => {
    const shop = await createMerchant(platform);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        join(ROOT, 'packages/server/src/cli/main.ts'),
        'user',
        'invite',
        '--access-key',
        shop.accessKey,
        '--email',
        'cli-user@shop.example',
        '--json',
      ],
      { cwd: ROOT, env: { ...process.env, PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN } },
    );
    const printed = JSON.parse(stdout) as { email: string; setupUrl: string; expiresAt: number };
    assert.equal(printed.email, 'cli-user@shop.example');
    assert.ok(printed.setupUrl.startsWith(`${platform.config.publicUrl}/portal/setup#token=`));
    const token = new URL(printed.setupUrl).hash.replace('#token=', '');
    assert.equal((await setup(platform, token, PASSWORD)).status, 200);
    assert.equal((await PortalClient.signIn(platform, 'cli-user@shop.example', PASSWORD)).csrfToken?.length, 43);
  });
});
