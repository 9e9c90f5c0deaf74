import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateSigningKey } from '@paygate/protocol';
import {
  CAPABILITY_ROLES,
  type Capability,
  PUBLIC_ROUTES,
  type Role,
  ROLES,
  ROUTE_ACCESS,
} from '../src/modules/portal/access.js';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { PASSWORD, PortalClient, portalUser, setup } from './portal-harness.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

interface Person {
  email: string;
  role: string;
  activated: boolean;
}

/** A route's path with its parameters filled in (values that exist nowhere: the check comes first). */
const concrete = (path: string) =>
  path
    .replace(':orderNo', 'P000000000000000001')
    .replace(':eventId', 'evt_01JAAAAAAAAAAAAAAAAAAAAAAA')
    .replace(':sessionId', '999999999')
    .replace(':passkeyId', '999999999');

/** `METHOD /path` of every route in Fastify's printed route tree. */
function routesOf(tree: string): string[] {
  const stack: string[] = [];
  const found: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)(?:└──|├──) (\S+)(?: \(([^)]+)\))?/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = (depth > 0 ? (stack[depth - 1] ?? '') : '') + match[2];
    stack.length = depth;
    stack[depth] = path;
    for (const method of match[3]?.split(', ') ?? []) found.push(`${method} ${path}`);
  }
  return found;
}

for (const database of databases()) {
  describe(`portal roles and teammates (${database})`, () => {
    let platform: TestPlatform;
    let smtp: SmtpSink;
    let shop: TestMerchant;
    const clients = new Map<Role, PortalClient>();
    const emails = new Map<Role, string>();

    before(async () => {
      smtp = await startSmtpSink();
      platform = await startTestPlatform({ database, env: { PAYGATE_SMTP_URL: smtp.url } });
      shop = await createMerchant(platform, 'Roles Shop');
      for (const role of ROLES) {
        const user = await portalUser(platform, shop, PASSWORD, role);
        emails.set(role, user.email);
        clients.set(role, await PortalClient.signIn(platform, user.email, PASSWORD));
      }
    });
    after(async () => {
      await platform.close();
      await smtp.close();
    });

    const client = (role: Role) => clients.get(role) as PortalClient;

    it('every route the portal API serves is declared in ROUTE_ACCESS (or public), and every declared route exists', () => {
      const served = routesOf(platform.app.printRoutes({ commonPrefix: false }))
        .filter((route) => / \/portal\/api\//.test(route) && !/^(HEAD|OPTIONS) /.test(route))
        .map((route) => route.replace(' /portal/api/', ' /'));
      assert.ok(served.length >= 40, served.join('\n'));
      const declared = [...Object.keys(ROUTE_ACCESS), ...PUBLIC_ROUTES];
      assert.deepEqual([...served].sort(), [...declared].sort());
    });

    it('the session says the role and what it may do', async () => {
      for (const role of ROLES) {
        const session = await client(role).get<{ role: string; capabilities: string[] }>('/portal/api/session');
        assert.equal(session.body.data?.role, role);
        const expected = (Object.keys(CAPABILITY_ROLES) as Capability[]).filter((c) =>
          CAPABILITY_ROLES[c].includes(role),
        );
        assert.deepEqual(session.body.data?.capabilities, expected);
      }
      assert.deepEqual(client('viewer') && CAPABILITY_ROLES.people, ['owner']);
    });

    it('walks every declared route with every role: 403 FORBIDDEN naming the role exactly where not allowed', async () => {
      const routes = Object.entries(ROUTE_ACCESS) as [string, Capability][];
      // Signing out ends the client's session: walked last.
      routes.sort(([a], [b]) => Number(a === 'POST /session/logout') - Number(b === 'POST /session/logout'));
      assert.ok(routes.length >= 30);
      for (const [key, capability] of routes) {
        const [method, path] = key.split(' ') as ['GET' | 'POST', string];
        assert.ok(!PUBLIC_ROUTES.includes(key));
        assert.ok(
          platform.app.hasRoute({ method, url: `/portal/api${path}` }),
          `${key} is declared but the portal API has no such route`,
        );
        for (const role of ROLES) {
          const response = await client(role).request(method, `/portal/api${concrete(path)}`, { body: {} });
          const allowed = CAPABILITY_ROLES[capability].includes(role);
          const label = `${key} as ${role}: ${response.status} ${response.text.slice(0, 200)}`;
          if (allowed) {
            assert.notEqual(response.body.msg, 'FORBIDDEN', label);
            assert.notEqual(response.status, 401, label);
            assert.ok(response.status < 500, label);
            assert.notEqual(response.body.message, 'no such endpoint', label);
          } else {
            assert.equal(response.status, 403, label);
            assert.equal(response.body.msg, 'FORBIDDEN', label);
            assert.match(
              response.body.message ?? '',
              new RegExp(`you have the ${role} role: it takes the .*owner`),
              label,
            );
            for (const needed of CAPABILITY_ROLES[capability])
              assert.match(response.body.message ?? '', new RegExp(needed));
          }
        }
      }
      // The signed-out clients sign in again for the tests below.
      for (const role of ROLES)
        clients.set(role, await PortalClient.signIn(platform, emails.get(role) as string, PASSWORD));
    });

    it('a refused write changes nothing: the viewer cannot cancel or add a key, the developer cannot cancel', async () => {
      const created = await post<{ orderNo: string }>(platform, shop, '/api/v1/payments', paymentInput());
      const orderNo = created.body.data?.orderNo as string;
      for (const role of ['viewer', 'developer'] as const) {
        const cancel = await client(role).post(`/portal/api/payments/${orderNo}/cancel`);
        assert.equal(cancel.status, 403);
        assert.equal(cancel.body.msg, 'FORBIDDEN');
      }
      const payment = await client('viewer').get<{ payment: { status: string } }>(`/portal/api/payments/${orderNo}`);
      assert.equal(payment.body.data?.payment.status, 'PENDING');

      const before = await client('viewer').get<{ publicKeys: unknown[] }>('/portal/api/credentials');
      const key = generateSigningKey();
      const refused = await client('viewer').post('/portal/api/keys', {
        publicKey: Buffer.from(key.publicKey).toString('base64'),
      });
      assert.equal(refused.status, 403);
      assert.match(refused.body.message ?? '', /owner or developer role to manage API keys/);
      const afterwards = await client('viewer').get<{ publicKeys: unknown[] }>('/portal/api/credentials');
      assert.deepEqual(afterwards.body.data?.publicKeys, before.body.data?.publicKeys);

      const canceled = await client('finance').post<{ status: string }>(`/portal/api/payments/${orderNo}/cancel`);
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal(canceled.body.data?.status, 'CANCELED');
    });

    it('owners invite by email (through SMTP), change roles and remove people', async () => {
      const owner = client('owner');
      const invited = await owner.post<{ email: string; role: string; emailed: boolean; people: Person[] }>(
        '/portal/api/people',
        { email: 'New.Dev@Roles.example', role: 'developer' },
      );
      assert.equal(invited.status, 200, invited.text);
      assert.equal(invited.body.data?.email, 'new.dev@roles.example');
      assert.equal(invited.body.data?.emailed, true);
      assert.ok(!invited.text.includes('token='), 'the setup link is not answered to the inviter');
      const person = invited.body.data?.people.find((p) => p.email === 'new.dev@roles.example');
      assert.deepEqual(person && { role: person.role, activated: person.activated }, {
        role: 'developer',
        activated: false,
      });

      const mail = smtp.mails.find((m) => m.to.includes('new.dev@roles.example'));
      assert.ok(mail, 'the invitation was emailed');
      const link = /\/portal\/setup#token=([A-Za-z0-9_-]{43})/.exec(
        // The body is quoted-printable: soft line breaks and `=3D` for `=`.
        mail.data.replace(/=\r\n/g, '').replace(/=3D/g, '='),
      );
      assert.ok(link?.[1], mail.data);
      assert.equal((await setup(platform, link[1], PASSWORD)).status, 200);
      const dev = await PortalClient.signIn(platform, 'new.dev@roles.example', PASSWORD);
      const session = await dev.get<{ role: string }>('/portal/api/session');
      assert.equal(session.body.data?.role, 'developer');

      const again = await owner.post('/portal/api/people', { email: 'new.dev@roles.example', role: 'viewer' });
      assert.equal(
        again.status,
        409,
        'an activated teammate is not invited again (the link would reset their password)',
      );
      const noRole = await owner.post('/portal/api/people', { email: 'x@roles.example' });
      assert.equal(noRole.status, 400);

      const changed = await owner.post<Person[]>('/portal/api/people/role', {
        email: 'new.dev@roles.example',
        role: 'viewer',
      });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.body.data?.find((p) => p.email === 'new.dev@roles.example')?.role, 'viewer');
      assert.equal((await dev.get<{ role: string }>('/portal/api/session')).body.data?.role, 'viewer');
      assert.equal((await dev.post('/portal/api/keys/retire', { key: '1' })).status, 403);

      const removed = await owner.post<Person[]>('/portal/api/people/remove', { email: 'new.dev@roles.example' });
      assert.equal(removed.status, 200, removed.text);
      assert.ok(!removed.body.data?.some((p) => p.email === 'new.dev@roles.example'));
      assert.equal((await dev.get('/portal/api/session')).status, 401, 'a removed person is signed out');
      const signIn = await new PortalClient(platform).signIn('new.dev@roles.example', PASSWORD);
      assert.equal(signIn.status, 401);
      assert.equal((await owner.post('/portal/api/people/remove', { email: 'nobody@roles.example' })).status, 404);
    });

    it('the last owner cannot be removed or demoted (409 with a reason)', async () => {
      const solo = await createMerchant(platform, 'Solo Shop');
      const first = await portalUser(platform, solo);
      const owner = await PortalClient.signIn(platform, first.email, PASSWORD);
      const demote = await owner.post('/portal/api/people/role', { email: first.email, role: 'viewer' });
      assert.equal(demote.status, 409);
      assert.equal(demote.body.msg, 'CONFLICT');
      assert.match(demote.body.message ?? '', /last owner cannot be demoted/);
      const remove = await owner.post('/portal/api/people/remove', { email: first.email });
      assert.equal(remove.status, 409);
      assert.match(remove.body.message ?? '', /last owner cannot be removed/);

      // An owner who has not accepted the invitation yet does not count.
      const pending = await owner.post('/portal/api/people', { email: 'second@solo.example', role: 'owner' });
      assert.equal(pending.status, 200, pending.text);
      assert.equal((await owner.post('/portal/api/people/remove', { email: first.email })).status, 409);

      // …and the operator's invitation cannot demote the last owner either.
      const operatorDemote = await fetch(`${platform.url}/admin/v1/merchants/${solo.accessKey}/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${platform.config.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: first.email, role: 'finance' }),
      });
      assert.equal(operatorDemote.status, 409);

      const second = await portalUser(platform, solo, PASSWORD, 'owner');
      const demoted = await owner.post<Person[]>('/portal/api/people/role', { email: first.email, role: 'viewer' });
      assert.equal(demoted.status, 200, demoted.text);
      const other = await PortalClient.signIn(platform, second.email, PASSWORD);
      const last = await other.post('/portal/api/people/remove', { email: second.email });
      assert.equal(last.status, 409);
    });

    it('an operator invitation defaults to owner; --role sets another and is checked', async () => {
      const shop2 = await createMerchant(platform, 'Default Role Shop');
      const plain = await portalUser(platform, shop2);
      const c = await PortalClient.signIn(platform, plain.email, PASSWORD);
      assert.equal((await c.get<{ role: string }>('/portal/api/session')).body.data?.role, 'owner');
      const bad = await fetch(`${platform.url}/admin/v1/merchants/${shop2.accessKey}/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${platform.config.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'x@y.example', role: 'admin' }),
      });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /role/);
    });
  });
}
