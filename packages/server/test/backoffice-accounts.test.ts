/**
 * The back office's accounts (issue 45): operators invited from the command line's API, the
 * invitation signing them in, a second factor always (a password alone never opens a working
 * session), shorter sessions with an idle timeout, two doors that open nothing of each other,
 * the last admin kept, and every sign-in in the audit trail with the operator's email.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OPERATOR_SESSION_IDLE_MS } from '../src/modules/backoffice/access.js';
import { createMerchant, databases, startTestPlatform, type TestPlatform } from './harness.js';
import { BACKOFFICE, inviteOperator, operator, OperatorClient } from './backoffice-harness.js';
import { ADMIN_TOKEN, PASSWORD, PortalClient, portalUser } from './portal-harness.js';

const admin = async (platform: TestPlatform, method: 'GET' | 'POST', path: string, body?: unknown) => {
  const response = await fetch(`${platform.url}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status, // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the operator API's answers, read as the tests need them
    body: (await response.json()) as { msg: string; data?: any; message?: string },
  };
};

for (const database of databases()) {
  describe(`back-office accounts (${database})`, () => {
    let platform: TestPlatform;
    before(async () => {
      platform = await startTestPlatform({ database });
    });
    after(async () => {
      await platform.close();
    });

    it('the setup link signs the operator in, but only to set up a second factor; then the session works', async () => {
      const { token, role } = await inviteOperator(platform, 'First.Admin@Ops.example', 'admin');
      assert.equal(role, 'admin');
      const client = new OperatorClient(platform);
      const setup = await client.setup(token);
      assert.equal(setup.status, 200, setup.text);
      const view = setup.body.data as unknown as {
        email: string;
        role: string;
        csrfToken: string;
        secondFactor: { enabled: boolean; required: boolean; pending: boolean };
      };
      assert.equal(view.email, 'first.admin@ops.example');
      assert.equal(view.role, 'admin');
      assert.equal(typeof view.csrfToken, 'string');
      assert.deepEqual(
        {
          enabled: view.secondFactor.enabled,
          required: view.secondFactor.required,
          pending: view.secondFactor.pending,
        },
        { enabled: false, required: true, pending: false },
      );
      assert.match(client.setCookie ?? '', /^paygate_backoffice=[^;]+; Path=\/backoffice; HttpOnly; SameSite=Strict/);
      // A password alone opens nothing but setting up the second factor.
      const refused = await client.get(`${BACKOFFICE}/orders`);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.msg, 'SECOND_FACTOR_REQUIRED');
      assert.equal((await client.get(`${BACKOFFICE}/operators`)).body.msg, 'SECOND_FACTOR_REQUIRED');
      assert.equal((await client.get(`${BACKOFFICE}/session`)).status, 200);
      // The link works once.
      assert.equal((await new OperatorClient(platform).setup(token)).body.msg, 'INVITATION_INVALID');

      const totp = await client.post<{ secret: string; uri: string; qrCode: string }>(
        `${BACKOFFICE}/second-factor/totp`,
        {},
      );
      assert.equal(totp.status, 200, totp.text);
      assert.match(totp.body.data?.secret ?? '', /^[A-Z2-7]+=*$/);
      assert.match(
        totp.body.data?.uri ?? '',
        /^otpauth:\/\/totp\/Paygate%20back%20office:first\.admin%40ops\.example\?/,
      );
      client.totpSecret = totp.body.data?.secret;
      const confirmed = await client.post<{ recoveryCodes: string[] }>(`${BACKOFFICE}/second-factor/totp/confirm`, {
        code: client.code(platform),
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      assert.equal(confirmed.body.data?.recoveryCodes.length, 10);
      const orders = await client.get(`${BACKOFFICE}/orders`);
      assert.equal(orders.status, 200, orders.text);
      // The operator cannot take the second factor away: it is always there.
      platform.advance(30_000);
      const removal = await client.post(`${BACKOFFICE}/second-factor/remove`, { code: client.code(platform) });
      assert.equal(removal.status, 409, removal.text);
      assert.equal((await client.get(`${BACKOFFICE}/orders`)).status, 200);
    });

    it('a password sign-in waits for the code; wrong codes fail; every sign-in is audited with the email', async () => {
      const first = await operator(platform, 'support', 'sign.in@ops.example');
      const client = new OperatorClient(platform);
      const wrong = await client.signIn('sign.in@ops.example', 'not the password at all');
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.msg, 'LOGIN_FAILED');
      const signedIn = await client.signIn('sign.in@ops.example', PASSWORD);
      assert.equal(signedIn.status, 200, signedIn.text);
      const pending = signedIn.body.data as unknown as { secondFactor: { pending: boolean } };
      assert.equal(pending.secondFactor.pending, true);
      assert.equal((await client.get(`${BACKOFFICE}/orders`)).body.msg, 'SECOND_FACTOR_REQUIRED');
      const bad = await client.post(`${BACKOFFICE}/session/second-factor`, { code: '000000' });
      assert.equal(bad.body.msg, 'SECOND_FACTOR_FAILED');
      platform.advance(30_000);
      client.totpSecret = first.totpSecret;
      const good = await client.post(`${BACKOFFICE}/session/second-factor`, { code: client.code(platform) });
      assert.equal(good.status, 200, good.text);
      assert.equal((await client.get(`${BACKOFFICE}/orders`)).status, 200);

      const trail = await platform.services.audit.list({ actorEmail: 'sign.in@ops.example' });
      const actions = trail.map((e) => `${e.actor.kind}:${e.action}`);
      for (const action of [
        'operator:password.set',
        'operator:second_factor.added',
        'operator:signin.failed',
        'operator:signin.password_accepted',
        'operator:signin.failed',
        'operator:signin.succeeded',
      ]) {
        assert.ok(actions.includes(action), `${action} in ${actions.join(', ')}`);
      }
      assert.ok(trail.every((e) => e.actor.kind === 'operator' && e.actor.email === 'sign.in@ops.example'));
      // The token-based command line stays an operator without an email.
      const cli = (await platform.services.audit.list({ action: 'operator.invited' })).find(
        (e) => e.object === 'sign.in@ops.example',
      );
      assert.deepEqual(cli?.actor, { kind: 'operator' });
    });

    it('a portal session opens nothing in the back office, a back-office session nothing in the portal', async () => {
      const shop = await createMerchant(platform, 'Two Doors Shop');
      const person = await portalUser(platform, shop);
      const portal = await PortalClient.signIn(platform, person.email, person.password);
      assert.equal((await portal.get('/portal/api/session')).status, 200);
      const ops = await operator(platform, 'admin');
      // Each door reads its own cookie only: the other's is not even looked at…
      const portalCookie = portal.cookie as string;
      const opsCookie = ops.cookie as string;
      for (const path of ['/session', '/orders', '/operators']) {
        const crossed = await fetch(`${platform.url}${BACKOFFICE}${path}`, { headers: { cookie: portalCookie } });
        assert.equal(crossed.status, 401, path);
      }
      const back = await fetch(`${platform.url}/portal/api/session`, { headers: { cookie: opsCookie } });
      assert.equal(back.status, 401);
      // …and a token moved into the other's cookie name is no session there either.
      const portalToken = portalCookie.split('=')[1] as string;
      const opsToken = opsCookie.split('=')[1] as string;
      const moved = await fetch(`${platform.url}${BACKOFFICE}/session`, {
        headers: { cookie: `paygate_backoffice=${portalToken}` },
      });
      assert.equal(moved.status, 401);
      const movedBack = await fetch(`${platform.url}/portal/api/session`, {
        headers: { cookie: `paygate_portal=${opsToken}` },
      });
      assert.equal(movedBack.status, 401);
      // Merchants' people cannot sign in to the back office with their portal password.
      const refused = await new OperatorClient(platform).signIn(person.email, person.password);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.msg, 'LOGIN_FAILED');
    });

    it('sessions are listed and ended, and end after 30 minutes without a request', async () => {
      const ops = await operator(platform, 'finance');
      const other = new OperatorClient(platform);
      other.totpSecret = ops.totpSecret;
      await other.signIn(ops.email, PASSWORD);
      platform.advance(30_000);
      assert.equal(
        (await other.post(`${BACKOFFICE}/session/second-factor`, { code: other.code(platform) })).status,
        200,
      );
      const listed = await ops.get<{ id: string; current: boolean }[]>(`${BACKOFFICE}/sessions`);
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.body.data?.length, 2);
      const theOther = listed.body.data?.find((s) => !s.current);
      const ended = await ops.post(`${BACKOFFICE}/sessions/${theOther?.id}/end`, {});
      assert.equal(ended.status, 200, ended.text);
      assert.equal((await other.get(`${BACKOFFICE}/session`)).status, 401);
      platform.advance(OPERATOR_SESSION_IDLE_MS + 60_000);
      assert.equal((await ops.get(`${BACKOFFICE}/session`)).status, 401, 'idle past 30 minutes');
    });

    it('paygate operator invite|list|remove: a reset for an existing operator, --role changes it, the last admin stays', async () => {
      const fresh = await startTestPlatform({ database });
      try {
        const noRole = await admin(fresh, 'POST', '/operators', { email: 'norole@ops.example' });
        assert.equal(noRole.status, 400, 'a new operator needs a role');
        const boss = await operator(fresh, 'admin', 'boss@ops.example');
        const invited = await admin(fresh, 'POST', '/operators', { email: 'helper@ops.example', role: 'support' });
        assert.equal(invited.status, 200);
        assert.match(invited.body.data.setupUrl, /\/backoffice\/setup#token=[A-Za-z0-9_-]{43}$/);
        assert.equal(invited.body.data.existingOperator, false);
        const listed = await admin(fresh, 'GET', '/operators');
        assert.deepEqual(
          listed.body.data.operators.map((o: { email: string; role: string }) => [o.email, o.role]),
          [
            ['boss@ops.example', 'admin'],
            ['helper@ops.example', 'support'],
          ],
        );
        // The only admin is neither demoted nor removed, from the command line or the back office.
        const demote = await admin(fresh, 'POST', '/operators', { email: 'boss@ops.example', role: 'auditor' });
        assert.equal(demote.status, 409, JSON.stringify(demote.body));
        assert.equal((await admin(fresh, 'POST', '/operators/remove', { email: 'boss@ops.example' })).status, 409);
        const selfDemote = await boss.post(`${BACKOFFICE}/operators/role`, {
          email: 'boss@ops.example',
          role: 'support',
        });
        assert.equal(selfDemote.status, 409, selfDemote.text);
        // A reset: a new link for an existing operator (the old password works until it is used), and a new role.
        const reset = await admin(fresh, 'POST', '/operators', { email: 'helper@ops.example', role: 'finance' });
        assert.equal(reset.body.data.existingOperator, true);
        assert.equal(reset.body.data.role, 'finance');
        const helper = new OperatorClient(fresh);
        assert.equal((await helper.setup(new URL(reset.body.data.setupUrl).hash.slice(7))).status, 200);
        await helper.setUpTotp(fresh);
        assert.equal((await helper.get<{ role: string }>(`${BACKOFFICE}/session`)).body.data?.role, 'finance');
        // Admins invite, change roles and remove in the back office; the answer names no link when SMTP sends it.
        const byAdmin = await boss.post<{ setupUrl?: string; emailed: boolean }>(`${BACKOFFICE}/operators`, {
          email: 'second.admin@ops.example',
          role: 'admin',
        });
        assert.equal(byAdmin.status, 200, byAdmin.text);
        assert.equal(byAdmin.body.data?.emailed, false);
        assert.match(byAdmin.body.data?.setupUrl ?? '', /#token=/, 'without SMTP the link goes to the admin who asked');
        const removed = await admin(fresh, 'POST', '/operators/remove', { email: 'helper@ops.example' });
        assert.equal(removed.status, 200);
        assert.equal((await helper.get(`${BACKOFFICE}/session`)).status, 401, 'a removed operator is signed out');
        assert.equal((await new OperatorClient(fresh).signIn('helper@ops.example', PASSWORD)).status, 401);
      } finally {
        await fresh.close();
      }
    });
  });
}
