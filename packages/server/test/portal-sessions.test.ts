import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PortalSessionInfo as SessionInfo } from '@paygate/wire';
import { describeDevice } from '../src/modules/accounts/service.js';
import { createMerchant, databases, startTestPlatform, type TestPlatform } from './harness.js';
import { PASSWORD, PortalClient, portalUser } from './portal-harness.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

describe('devices from User-Agents', () => {
  it('names the browser and the system', () => {
    assert.equal(describeDevice(FIREFOX), 'Firefox on Linux');
    assert.equal(describeDevice(IPHONE), 'Safari on iOS');
    assert.equal(
      describeDevice(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36 Edg/130.0',
      ),
      'Edge on Windows',
    );
    assert.equal(describeDevice(null), 'Unknown device');
    assert.equal(describeDevice('curl/8.5.0'), 'curl');
  });
});

for (const database of databases()) {
  describe(`a person's sessions (${database})`, () => {
    let platform: TestPlatform;
    let user: { email: string; password: string };

    before(async () => {
      platform = await startTestPlatform({ database });
      const shop = await createMerchant(platform, 'Session Shop');
      user = await portalUser(platform, shop, PASSWORD, 'viewer');
    });
    after(() => platform.close());

    const signIn = async (userAgent: string, password = PASSWORD) => {
      const client = new PortalClient(platform);
      const response = await client.signIn(user.email, password, { 'user-agent': userAgent });
      assert.equal(response.status, 200, response.text);
      return client;
    };

    it('lists each session with its device, address and last use, and ends any of them', async () => {
      const laptop = await signIn(FIREFOX);
      const phone = await signIn(IPHONE);
      const listed = await laptop.get<SessionInfo[]>('/portal/api/sessions', { headers: { 'user-agent': FIREFOX } });
      assert.equal(listed.status, 200, listed.text);
      const sessions = listed.body.data ?? [];
      const mine = sessions.find((s) => s.current);
      assert.equal(mine?.device, 'Firefox on Linux');
      assert.equal(mine?.ip, '127.0.0.1');
      assert.ok(Math.abs((mine?.lastSeenAt ?? 0) - Date.now()) < 120_000);
      const other = sessions.find((s) => s.device === 'Safari on iOS');
      assert.ok(other && !other.current);

      const ended = await laptop.post<SessionInfo[]>(`/portal/api/sessions/${other.id}/end`, {});
      assert.equal(ended.status, 200, ended.text);
      assert.ok(!ended.body.data?.some((s) => s.id === other.id));
      assert.equal((await phone.get('/portal/api/session')).status, 401, 'the ended session is signed out');
      assert.equal((await laptop.get('/portal/api/session')).status, 200);

      // Another person's session is not found, and neither is an ended one.
      const again = await laptop.post(`/portal/api/sessions/${other.id}/end`, {});
      assert.equal(again.status, 404);
      const audit = await platform.services.audit.list({ action: 'session.ended' });
      assert.equal(audit.at(-1)?.actor.email, user.email);
    });

    it('changing the password ends every other session, and needs the current password', async () => {
      const keep = await signIn(FIREFOX);
      const elsewhere = await signIn(IPHONE);
      const wrong = await keep.post('/portal/api/password', {
        currentPassword: 'not my password at all',
        newPassword: 'a brand new password 1',
      });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.msg, 'LOGIN_FAILED');
      const weak = await keep.post('/portal/api/password', { currentPassword: PASSWORD, newPassword: 'short' });
      assert.equal(weak.status, 400);

      const changed = await keep.post<{ endedSessions: number }>('/portal/api/password', {
        currentPassword: PASSWORD,
        newPassword: 'a brand new password 1',
      });
      assert.equal(changed.status, 200, changed.text);
      assert.ok((changed.body.data?.endedSessions ?? 0) >= 1);
      assert.equal((await elsewhere.get('/portal/api/session')).status, 401);
      assert.equal((await keep.get('/portal/api/session')).status, 200, 'the session that changed it stays');
      const listed = await keep.get<SessionInfo[]>('/portal/api/sessions');
      assert.deepEqual(
        listed.body.data?.map((s) => s.current),
        [true],
      );
      assert.equal((await new PortalClient(platform).signIn(user.email, PASSWORD)).status, 401);
      await signIn(FIREFOX, 'a brand new password 1');
      const audit = await platform.services.audit.list({ action: 'password.changed' });
      assert.equal(audit.length, 1);
    });
  });
}
