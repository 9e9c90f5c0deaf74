import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LOCK_MS, MAX_FAILURES_PER_EMAIL } from '../src/modules/accounts/service.js';
import { STEP_UP_MS, TOTP_PERIOD_MS, totpCode } from '../src/modules/accounts/second-factor.js';
import { createMerchant, databases, startTestPlatform, type TestMerchant, type TestPlatform } from './harness.js';
import { PASSWORD, PortalClient, portalUser } from './portal-harness.js';

interface SessionView {
  secondFactor: { enabled: boolean; pending: boolean; checkedAt: number | null; required: boolean };
}

for (const database of databases()) {
  describe(`the portal's second factor (${database})`, () => {
    // A fixed clock the tests move: codes are those of its time steps.
    let clock = Date.UTC(2026, 10, 27, 12, 0, 0);
    let platform: TestPlatform;
    let shop: TestMerchant;
    let owner: { email: string; password: string };
    let secret: string;
    let recoveryCodes: string[];
    let ownerClient: PortalClient;

    const tick = (ms = TOTP_PERIOD_MS) => {
      clock += ms;
    };
    const code = () => totpCode(secret, clock);

    before(async () => {
      platform = await startTestPlatform({ database, now: () => clock });
      shop = await createMerchant(platform, 'Two Factor Shop');
      owner = await portalUser(platform, shop);
      ownerClient = await PortalClient.signIn(platform, owner.email, PASSWORD);
    });
    after(() => platform.close());

    it('sets up TOTP from a QR code and its text secret, confirmed by a first code; ten recovery codes', async () => {
      const started = await ownerClient.post<{ secret: string; uri: string; qrCode: string }>(
        '/portal/api/second-factor/totp',
        {},
      );
      assert.equal(started.status, 200, started.text);
      secret = started.body.data?.secret as string;
      assert.match(secret, /^[A-Z2-7]{32}$/);
      assert.match(started.body.data?.uri ?? '', /^otpauth:\/\/totp\/.*secret=[A-Z2-7]{32}.*period=30/);
      assert.match(started.body.data?.qrCode ?? '', /^data:image\/png;base64,/);

      const wrong = await ownerClient.post('/portal/api/second-factor/totp/confirm', { code: '000000' });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.msg, 'SECOND_FACTOR_FAILED');
      const status = await ownerClient.get<{ enabled: boolean }>('/portal/api/second-factor');
      assert.equal(status.body.data?.enabled, false, 'not on before a right code');

      const confirmed = await ownerClient.post<{ recoveryCodes: string[] }>('/portal/api/second-factor/totp/confirm', {
        code: code(),
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      recoveryCodes = confirmed.body.data?.recoveryCodes ?? [];
      assert.equal(recoveryCodes.length, 10);
      assert.equal(new Set(recoveryCodes).size, 10);
      const after = await ownerClient.get<{ enabled: boolean; recoveryCodesLeft: number }>('/portal/api/second-factor');
      assert.deepEqual(after.body.data, {
        enabled: true,
        totp: true,
        passkeys: false,
        recoveryCodesLeft: 10,
        required: false,
      });
      const stored = await platform.services.db.query<{ code_hash: Uint8Array }>(
        'SELECT code_hash FROM portal_recovery_codes',
      );
      const dump = JSON.stringify(stored.rows.map((r) => Buffer.from(r.code_hash).toString('hex')));
      for (const recovery of recoveryCodes) assert.ok(!dump.includes(recovery), 'stored hashed only');
      const users = await platform.services.db.query<{ totp_sealed: Uint8Array }>(
        'SELECT totp_sealed FROM portal_users WHERE email = $1',
        [owner.email],
      );
      assert.ok(
        !Buffer.from(users.rows[0]?.totp_sealed ?? [])
          .toString('latin1')
          .includes(secret),
        'sealed',
      );
    });

    it('a password alone opens a session that can do nothing but give its code; a reused code is refused', async () => {
      const client = await PortalClient.signIn(platform, owner.email, PASSWORD);
      const session = await client.get<SessionView>('/portal/api/session');
      assert.equal(session.body.data?.secondFactor.pending, true);
      const blocked = await client.get('/portal/api/credentials');
      assert.equal(blocked.status, 403);
      assert.equal(blocked.body.msg, 'SECOND_FACTOR_REQUIRED');

      // The code that confirmed the set-up belongs to this time step: used once already.
      const reused = await client.post('/portal/api/session/second-factor', { code: code() });
      assert.equal(reused.status, 401);
      assert.equal(reused.body.msg, 'SECOND_FACTOR_FAILED');
      tick();
      const fresh = code();
      assert.equal((await client.post('/portal/api/session/second-factor', { code: fresh })).status, 200);
      assert.equal((await client.get('/portal/api/credentials')).status, 200);

      const other = await PortalClient.signIn(platform, owner.email, PASSWORD);
      const again = await other.post('/portal/api/session/second-factor', { code: fresh });
      assert.equal(again.status, 401, 'the same code does not open a second session');
      assert.equal((await other.get('/portal/api/credentials')).status, 403);
    });

    it('recovery codes work once each', async () => {
      const client = await PortalClient.signIn(platform, owner.email, PASSWORD);
      const [first] = recoveryCodes;
      const used = await client.post('/portal/api/session/second-factor', { recoveryCode: first?.toUpperCase() });
      assert.equal(used.status, 200, used.text);
      const other = await PortalClient.signIn(platform, owner.email, PASSWORD);
      const twice = await other.post('/portal/api/session/second-factor', { recoveryCode: first });
      assert.equal(twice.status, 401);
      const left = await client.get<{ recoveryCodesLeft: number }>('/portal/api/second-factor');
      assert.equal(left.body.data?.recoveryCodesLeft, 9);
      const audit = await platform.services.audit.list({ merchant: shop.accessKey, action: 'signin.succeeded' });
      assert.deepEqual(audit.at(-1)?.detail, { with: 'recovery code' });
    });

    it('guessing codes is throttled by the sign-in lockout', async () => {
      tick(LOCK_MS);
      const client = await PortalClient.signIn(platform, owner.email, PASSWORD);
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
        const guess = await client.post('/portal/api/session/second-factor', { code: String(100000 + i) });
        assert.equal(guess.status, 401, guess.text);
      }
      tick();
      const locked = await client.post('/portal/api/session/second-factor', { code: code() });
      assert.equal(locked.status, 429, 'even the right code waits out the lockout');
      assert.equal(locked.body.msg, 'LOGIN_LOCKED');
      assert.equal((await new PortalClient(platform).signIn(owner.email, PASSWORD)).status, 429);
      tick(LOCK_MS);
      const open = await client.post('/portal/api/session/second-factor', { code: code() });
      assert.equal(open.status, 200, open.text);
      ownerClient = client;
    });

    it('step-up: keys and people ask for the code again when the last check is older than 5 minutes', async () => {
      const fresh = await ownerClient.post('/portal/api/keys/retire', { key: 'no-such-key' });
      assert.equal(fresh.status, 404, 'within 5 minutes of the check: no step-up');
      tick(STEP_UP_MS + 1_000);
      for (const [path, body] of [
        ['/portal/api/keys/retire', { key: 'no-such-key' }],
        ['/portal/api/people', { email: 'dev@two.example', role: 'developer' }],
        ['/portal/api/security', { requireSecondFactor: true }],
      ] as const) {
        const stale = await ownerClient.post(path, body);
        assert.equal(stale.status, 403, `${path}: ${stale.text}`);
        assert.equal(stale.body.msg, 'STEP_UP_REQUIRED');
      }
      assert.equal((await ownerClient.get('/portal/api/payments')).status, 200, 'reads are not stepped up');
      assert.equal((await ownerClient.post('/portal/api/session/second-factor', { code: code() })).status, 200);
      assert.equal((await ownerClient.post('/portal/api/keys/retire', { key: 'no-such-key' })).status, 404);
    });

    it('owners can require a second factor: a person without one can only set one up', async () => {
      const required = await ownerClient.post('/portal/api/security', { requireSecondFactor: true });
      assert.equal(required.status, 200, required.text);
      const dev = await portalUser(platform, shop, PASSWORD, 'developer');
      const devClient = await PortalClient.signIn(platform, dev.email, PASSWORD);
      const session = await devClient.get<SessionView>('/portal/api/session');
      assert.deepEqual(session.body.data?.secondFactor, {
        enabled: false,
        totp: false,
        passkeys: false,
        pending: false,
        checkedAt: null,
        required: true,
      });
      const blocked = await devClient.get('/portal/api/payments');
      assert.equal(blocked.status, 403);
      assert.equal(blocked.body.msg, 'SECOND_FACTOR_REQUIRED');
      assert.match(blocked.body.message ?? '', /requires a second factor/);
      const started = await devClient.post<{ secret: string }>('/portal/api/second-factor/totp', {});
      assert.equal(started.status, 200);
      const devCode = totpCode(started.body.data?.secret as string, clock);
      assert.equal((await devClient.post('/portal/api/second-factor/totp/confirm', { code: devCode })).status, 200);
      assert.equal((await devClient.get('/portal/api/payments')).status, 200);
    });

    it('removing the second factor needs a code and ends every other session; all of it is audited', async () => {
      const other = await PortalClient.signIn(platform, owner.email, PASSWORD);
      tick();
      assert.equal((await other.post('/portal/api/session/second-factor', { code: code() })).status, 200);
      tick();
      assert.equal((await ownerClient.post('/portal/api/second-factor/remove', { code: '123456' })).status, 401);
      tick();
      const removed = await ownerClient.post('/portal/api/second-factor/remove', { code: code() });
      assert.equal(removed.status, 200, removed.text);
      assert.equal((await other.get('/portal/api/session')).status, 401);
      const session = await ownerClient.get<SessionView>('/portal/api/session');
      assert.equal(session.body.data?.secondFactor.enabled, false);

      const actions = (await platform.services.audit.list({ merchant: shop.accessKey })).map((e) => e.action);
      for (const action of [
        'second_factor.added',
        'signin.password_accepted',
        'signin.succeeded',
        'signin.failed',
        'second_factor.checked',
        'security.changed',
        'second_factor.removed',
      ]) {
        assert.ok(actions.includes(action), `${action} is in the trail`);
      }
      const verified = await platform.services.audit.verify();
      assert.equal(verified.ok, true);
    });

    it('anonymous passkey sign-in challenges are bounded: asking cannot fill the table', async () => {
      const anonymous = new PortalClient(platform);
      const first = await anonymous.post<{ challenge: string; rpId: string }>(
        '/portal/api/session/passkey/options',
        {},
      );
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.data?.rpId, '127.0.0.1');
      const { db } = platform.services;
      await db.query(
        `INSERT INTO portal_webauthn_challenges (challenge, purpose, user_id, expires_at)
         SELECT 'filler-' || g, 'authenticate', NULL, $1 FROM generate_series(1, 10000) g`,
        [new Date(clock + 60_000)],
      );
      const refused = await anonymous.post('/portal/api/session/passkey/options', {});
      assert.equal(refused.status, 429);
      assert.equal(refused.body.msg, 'LOGIN_LOCKED');
      tick(5 * 60_000);
      assert.equal((await anonymous.post('/portal/api/session/passkey/options', {})).status, 200, 'expired ones go');
    });
  });
}
