/**
 * The back office's one route table (modules/backoffice/access.ts), walked with every role as the
 * portal's roles test walks the portal's: every route the API serves is declared and every
 * declared route is served; a role without the route's capability gets 403 FORBIDDEN naming the
 * roles it takes, and a refused write changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  OPERATOR_CAPABILITY_ROLES,
  OPERATOR_ROLES,
  OPERATOR_ROUTE_ACCESS,
  type OperatorCapability,
  type OperatorRole,
} from '../src/modules/backoffice/access.js';
import { PUBLIC_ROUTES } from '../src/modules/accounts/access.js';
import { createMerchant, databases, startTestPlatform, type TestMerchant, type TestPlatform } from './harness.js';
import { BACKOFFICE, operator, type OperatorClient } from './backoffice-harness.js';
import { PASSWORD } from './portal-harness.js';

const concrete = (path: string) =>
  path
    .replace(':orderNo', 'P000000000000000001')
    .replace(':eventId', 'evt_01JAAAAAAAAAAAAAAAAAAAAAAA')
    .replace(':sessionId', '999999999')
    .replace(':passkeyId', '999999999')
    .replace(':accessKey', 'ak_test_nosuchmerchant')
    .replace(':id', 'adj_nosuch')
    .replace(':name', 'nosuchchannel')
    .replace(':msgId', 'nosuchfile')
    .replace(':file', 'nosuchfile.xml');

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
  describe(`back-office roles (${database})`, () => {
    let platform: TestPlatform;
    let shop: TestMerchant;
    const clients = new Map<OperatorRole, OperatorClient>();
    const client = (role: OperatorRole) => clients.get(role) as OperatorClient;

    before(async () => {
      platform = await startTestPlatform({ database });
      shop = await createMerchant(platform, 'Roles Shop');
      for (const role of OPERATOR_ROLES) clients.set(role, await operator(platform, role));
    });
    after(async () => {
      await platform.close();
    });

    it('every route the back-office API serves is in its route table (or public), and every declared route exists', () => {
      const served = routesOf(platform.app.printRoutes({ commonPrefix: false }))
        .filter((route) => / \/backoffice\/api\//.test(route) && !/^(HEAD|OPTIONS) /.test(route))
        .map((route) => route.replace(' /backoffice/api/', ' /'));
      assert.ok(served.length >= 50, served.join('\n'));
      assert.deepEqual([...served].sort(), [...Object.keys(OPERATOR_ROUTE_ACCESS), ...PUBLIC_ROUTES].sort());
    });

    it('the session says the role and what it may do', async () => {
      for (const role of OPERATOR_ROLES) {
        const session = await client(role).get<{ role: string; capabilities: string[] }>(`${BACKOFFICE}/session`);
        assert.equal(session.body.data?.role, role);
        const expected = (Object.keys(OPERATOR_CAPABILITY_ROLES) as OperatorCapability[]).filter((c) =>
          OPERATOR_CAPABILITY_ROLES[c].includes(role),
        );
        assert.deepEqual(session.body.data?.capabilities, expected);
      }
    });

    it('walks every declared route with every role: 403 FORBIDDEN naming the roles exactly where not allowed', async () => {
      const routes = Object.entries(OPERATOR_ROUTE_ACCESS) as [string, OperatorCapability][];
      routes.sort(([a], [b]) => Number(a === 'POST /session/logout') - Number(b === 'POST /session/logout'));
      for (const [key, capability] of routes) {
        const [method, path] = key.split(' ') as ['GET' | 'POST', string];
        for (const role of OPERATOR_ROLES) {
          const response = await client(role).request(method, `${BACKOFFICE}${concrete(path)}`, { body: {} });
          const allowed = OPERATOR_CAPABILITY_ROLES[capability].includes(role);
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
              new RegExp(`you have the ${role} role: it takes the .*admin`),
              label,
            );
            for (const needed of OPERATOR_CAPABILITY_ROLES[capability]) {
              assert.match(response.body.message ?? '', new RegExp(needed), label);
            }
          }
        }
      }
      // Signed out by the walk's last route: signed in again (with the code) for the tests below.
      for (const role of OPERATOR_ROLES) {
        const again = client(role);
        await again.signIn(again.email, PASSWORD);
        platform.advance(30_000);
        const checked = await again.post(`${BACKOFFICE}/session/second-factor`, { code: again.code(platform) });
        assert.equal(checked.status, 200, checked.text);
      }
    });

    it('a refused write changes nothing', async () => {
      const merchant = shop.accessKey;
      for (const role of ['support', 'auditor'] as const) {
        const proposed = await client(role).post(`${BACKOFFICE}/adjustments`, {
          merchant,
          currency: 'BRL',
          amount: '10.00',
          reason: 'goodwill credit',
        });
        assert.equal(proposed.status, 403, proposed.text);
      }
      const listed = await client('auditor').get<{ adjustments: unknown[] }>(`${BACKOFFICE}/adjustments`);
      assert.deepEqual(listed.body.data?.adjustments, []);
      for (const role of ['finance', 'auditor'] as const) {
        const replay = await client(role).post(`${BACKOFFICE}/events/replay`, { merchant, from: 0, to: Date.now() });
        assert.equal(replay.status, 403, replay.text);
        const disable = await client(role).post(`${BACKOFFICE}/merchants/${merchant}/disable`, {});
        assert.equal(disable.status, 403);
      }
      const page = await client('support').get<{ disabled: boolean }>(`${BACKOFFICE}/merchants/${merchant}`);
      assert.equal(page.body.data?.disabled, false);
      const invite = await client('finance').post(`${BACKOFFICE}/operators`, { email: 'x@ops.example', role: 'admin' });
      assert.equal(invite.status, 403);
      const people = await client('admin').get<{ operators: { email: string }[] }>(`${BACKOFFICE}/operators`);
      assert.ok(!people.body.data?.operators.some((o) => o.email === 'x@ops.example'));
      const refusals = await platform.services.audit.list({ action: 'adjustment.proposed' });
      assert.deepEqual(refusals, []);
    });
  });
}
