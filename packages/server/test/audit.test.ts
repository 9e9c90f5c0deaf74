import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generateSigningKey } from '@paygate/protocol';
import pg from 'pg';
import { openDatabase } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { Audit } from '../src/modules/audit/service.js';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { ADMIN_TOKEN, PASSWORD, PortalClient, portalUser } from './portal-harness.js';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const CLI = join(ROOT, 'packages/server/src/cli/main.ts');

interface Entry {
  id: string;
  at: string;
  actor: { kind: string; email?: string };
  action: string;
  merchant: string | null;
  object?: string;
  detail?: Record<string, unknown>;
  ip?: string;
  requestId?: string;
}

for (const database of databases()) {
  describe(`the audit trail (${database})`, () => {
    let platform: TestPlatform;
    let shop: TestMerchant;
    let owner: { email: string; password: string };
    let client: PortalClient;

    const paygate = async (args: string[]) => {
      try {
        const { stdout } = await run(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, ...args], {
          cwd: ROOT,
          env: { ...process.env, PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN },
        });
        return { code: 0, stdout };
      } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        return { code: failed.code, stdout: failed.stdout + failed.stderr };
      }
    };
    const admin = (method: 'GET' | 'POST', path: string, body?: unknown) =>
      fetch(`${platform.url}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const trail = async (accessKey?: string): Promise<Entry[]> => {
      const response = await admin('GET', accessKey ? `/merchants/${accessKey}/audit` : '/audit');
      return ((await response.json()) as { data: { entries: Entry[] } }).data.entries;
    };

    before(async () => {
      platform = await startTestPlatform({ database });
      shop = await createMerchant(platform, 'Audited Shop');
      owner = await portalUser(platform, shop);
      client = await PortalClient.signIn(platform, owner.email, PASSWORD);
    });
    after(() => platform.close());

    it('records every change, by whom, with the request id and address, in the order made', async () => {
      const key = generateSigningKey();
      const added = await client.post<{ publicKeys: { id: string; publicKey: string }[] }>('/portal/api/keys', {
        publicKey: Buffer.from(key.publicKey).toString('base64'),
      });
      assert.equal(added.status, 200, added.text);
      const addedId = added.body.data?.publicKeys.at(-1)?.id as string;
      assert.equal((await client.post('/portal/api/keys/retire', { key: addedId })).status, 200);

      const payment = await post<{ orderNo: string }>(platform, shop, '/api/v1/payments', paymentInput());
      const orderNo = payment.body.data?.orderNo as string;
      const canceled = await client.post(`/portal/api/payments/${orderNo}/cancel`);
      assert.equal(canceled.status, 200, canceled.text);
      const paid = await post<{ orderNo: string }>(platform, shop, '/api/v1/payments', paymentInput());
      const paidNo = paid.body.data?.orderNo as string;
      await client.post(`/portal/api/sandbox/payments/${paidNo}/simulate`, { status: 'SUCCEEDED' });
      const detail = await client.get<{ events: { eventId: string }[] }>(`/portal/api/payments/${paidNo}`);
      const eventId = detail.body.data?.events[0]?.eventId as string;
      assert.equal((await client.post(`/portal/api/events/${eventId}/resend`)).status, 200);
      const now = Date.now();
      assert.equal((await client.post('/portal/api/events/recover', { from: now - 60_000, to: now })).status, 200);

      assert.equal(
        (await client.post('/portal/api/people', { email: 'fin@audited.example', role: 'finance' })).status,
        200,
      );
      assert.equal(
        (await client.post('/portal/api/people/role', { email: 'fin@audited.example', role: 'viewer' })).status,
        200,
      );
      assert.equal((await client.post('/portal/api/people/remove', { email: 'fin@audited.example' })).status, 200);
      assert.equal((await new PortalClient(platform).signIn(owner.email, 'a wrong password!!')).status, 401);
      assert.equal((await new PortalClient(platform).signIn('nobody@audited.example', 'whatever pass')).status, 401);

      assert.equal((await admin('POST', `/merchants/${shop.accessKey}/disable`)).status, 200);
      assert.equal((await admin('POST', `/merchants/${shop.accessKey}/enable`)).status, 200);
      // Disabling ended the merchant's sessions: sign in again (recorded too).
      client = await PortalClient.signIn(platform, owner.email, PASSWORD);
      assert.equal((await admin('POST', '/master-key/reseal')).status, 200);
      assert.equal((await admin('POST', '/events/resend', { eventId })).status, 200);
      const onboarded = await admin('POST', '/merchants', {
        name: 'Onboarded Shop',
        publicKey: Buffer.from(generateSigningKey().publicKey).toString('base64'),
      });
      assert.equal(onboarded.status, 200);
      const onboardedKey = ((await onboarded.json()) as { data: { accessKey: string } }).data.accessKey;
      const created = await trail(onboardedKey);
      assert.deepEqual(
        created.map((e) => [e.actor.kind, e.action, e.detail]),
        [['operator', 'merchant.created', { name: 'Onboarded Shop' }]],
      );

      const entries = await trail();
      const mine = entries.filter((e) => e.merchant === shop.accessKey);
      const actions = mine.map((e) => `${e.actor.kind}:${e.action}`);
      assert.deepEqual(actions, [
        'operator:person.invited',
        'user:password.set',
        'user:signin.succeeded',
        'user:key.added',
        'user:key.retired',
        'user:order.canceled',
        'user:sandbox.order_moved',
        'user:event.resent',
        'user:events.recovered',
        'user:person.invited',
        'user:person.role_changed',
        'user:person.removed',
        'user:signin.failed',
        'operator:merchant.disabled',
        'operator:merchant.enabled',
        'user:signin.succeeded',
        'operator:event.resent',
      ]);
      const byAction = (action: string) => mine.find((e) => e.action === action) as Entry;
      assert.equal(byAction('key.added').object, addedId);
      assert.equal(byAction('key.added').actor.email, owner.email);
      assert.match(byAction('key.added').requestId ?? '', /^req_/);
      assert.equal(byAction('key.added').ip, '127.0.0.1');
      assert.equal(byAction('order.canceled').object, orderNo);
      assert.equal(byAction('person.role_changed').object, 'fin@audited.example');
      assert.deepEqual(byAction('person.role_changed').detail, { from: 'finance', to: 'viewer' });
      assert.deepEqual(byAction('signin.failed').detail, { reason: 'wrong password' });
      assert.deepEqual(byAction('sandbox.order_moved').detail, { from: 'PENDING', to: 'SUCCEEDED' });
      assert.equal(byAction('sandbox.order_moved').object, paidNo);
      const unknown = entries.find((e) => e.action === 'signin.failed' && e.object === 'nobody@audited.example');
      assert.equal(unknown?.merchant, null, 'a failed sign-in of no user is recorded, for no merchant');
      const resealed = entries.find((e) => e.action === 'master-key.resealed');
      assert.deepEqual(resealed?.actor, { kind: 'operator' });
      assert.equal(resealed?.merchant, null);
      assert.ok(entries.some((e) => e.action === 'platform-key.created' && e.actor.kind === 'system'));
      for (let i = 1; i < entries.length; i++) {
        assert.ok(Number(entries[i]?.id) > Number(entries[i - 1]?.id), 'oldest first');
      }
    });

    it('a refused change leaves no entry: it is written in the change’s transaction', async () => {
      const payment = await post<{ orderNo: string }>(platform, shop, '/api/v1/payments', paymentInput());
      const orderNo = payment.body.data?.orderNo as string;
      await client.post(`/portal/api/sandbox/payments/${orderNo}/simulate`, { status: 'FAILED' });
      const before = (await trail(shop.accessKey)).length;
      const again = await client.post(`/portal/api/sandbox/payments/${orderNo}/simulate`, { status: 'SUCCEEDED' });
      assert.equal(again.status, 409, 'a FAILED payment cannot move');
      const refused = await client.post(`/portal/api/payments/${orderNo}/cancel`);
      assert.equal(refused.status, 409, refused.text);
      const lastKey = await client.post('/portal/api/keys/retire', { key: 'no-such-key' });
      assert.equal(lastKey.status, 404);
      assert.equal((await trail(shop.accessKey)).length, before);
    });

    it('owners read, filter and export their merchant’s trail in the portal; others may not', async () => {
      const all = await client.get<{ entries: Entry[] }>('/portal/api/audit');
      assert.equal(all.status, 200, all.text);
      const entries = all.body.data?.entries ?? [];
      assert.ok(entries.length > 5);
      assert.ok(entries.every((e) => e.merchant === shop.accessKey));
      assert.ok(Number(entries[0]?.id) > Number(entries.at(-1)?.id), 'the page shows the newest first');

      const keys = await client.get<{ entries: Entry[] }>('/portal/api/audit?action=key.added');
      assert.deepEqual(
        keys.body.data?.entries.map((e) => e.action),
        ['key.added'],
      );
      const byPerson = await client.get<{ entries: Entry[] }>(
        `/portal/api/audit?person=${encodeURIComponent(owner.email.toUpperCase())}`,
      );
      assert.ok(byPerson.body.data?.entries.every((e) => e.actor.email === owner.email));
      assert.ok((byPerson.body.data?.entries.length ?? 0) > 3);
      const future = await client.get<{ entries: Entry[] }>(`/portal/api/audit?from=${Date.now() + 3_600_000}`);
      assert.deepEqual(future.body.data?.entries, []);

      const csv = await client.get('/portal/api/audit/export.csv?action=key.retired');
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      const lines = csv.text.trim().split('\r\n');
      assert.equal(lines[0], 'id,at,actorKind,actorEmail,action,object,detail,ip,requestId');
      assert.equal(lines.length, 2);
      assert.match(lines[1] ?? '', /,user,.*,key\.retired,/);

      const viewer = await portalUser(platform, shop, PASSWORD, 'viewer');
      const viewerClient = await PortalClient.signIn(platform, viewer.email, PASSWORD);
      const refused = await viewerClient.get('/portal/api/audit');
      assert.equal(refused.status, 403);
      assert.equal(refused.body.msg, 'FORBIDDEN');
    });

    it('is append-only: the database refuses UPDATE, DELETE and TRUNCATE', async () => {
      const { db } = platform.services;
      await assert.rejects(db.query(`UPDATE audit_entries SET action = 'x' WHERE id = 1`), /append-only/);
      await assert.rejects(db.query('DELETE FROM audit_entries WHERE id = 1'), /append-only/);
      await assert.rejects(db.query('TRUNCATE audit_entries'), /append-only/);
      if (database === 'postgres') {
        // The table's owner (the role that migrated) holds no UPDATE or DELETE privilege on it.
        const granted = await db.query<{ update: boolean; delete: boolean }>(
          `SELECT has_table_privilege(tableowner, 'audit_entries', 'UPDATE') AS update,
                  has_table_privilege(tableowner, 'audit_entries', 'DELETE') AS delete
             FROM pg_tables WHERE tablename = 'audit_entries'`,
        );
        const row = granted.rows[0];
        // A superuser owner bypasses privileges (the test server runs as one); any other owner does not hold them.
        const superuser = await db.query<{ rolsuper: boolean }>(
          'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
        );
        if (!superuser.rows[0]?.rolsuper) assert.deepEqual(row, { update: false, delete: false });
        const acl = await db.query<{ acl: string | null }>(
          `SELECT relacl::text AS acl FROM pg_class WHERE relname = 'audit_entries'`,
        );
        assert.doesNotMatch(
          acl.rows[0]?.acl ?? '',
          /=[a-zA-Z]*[wdD][a-zA-Z]*\//,
          'no role is granted UPDATE, DELETE or TRUNCATE',
        );
      }
    });

    it('concurrent writers chain one after the other', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          client.post('/portal/api/people', { email: `c${i}@audited.example`, role: 'viewer' }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        results.map(() => 200),
      );
      const verified = (await (await admin('GET', '/audit/verify')).json()) as { data: { ok: boolean } };
      assert.equal(verified.data.ok, true);
    });

    it('`paygate audit list` and `paygate audit verify`: clean, then an edited and a deleted row are caught', async () => {
      const listed = await paygate(['audit', 'list', '--access-key', shop.accessKey, '--json']);
      assert.equal(listed.code, 0, listed.stdout);
      const parsed = JSON.parse(listed.stdout) as { entries: Entry[] };
      assert.deepEqual(Object.keys(parsed), ['entries']);
      const first = parsed.entries[0] as Entry;
      assert.match(first.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(first.actor, { kind: 'operator' });
      assert.equal(first.action, 'person.invited');
      assert.equal(first.merchant, shop.accessKey);
      assert.ok(parsed.entries.every((e) => e.merchant === shop.accessKey));
      const everything = JSON.parse((await paygate(['audit', 'list', '--json'])).stdout) as { entries: Entry[] };
      assert.ok(everything.entries.length > parsed.entries.length);

      const invited = await paygate([
        'user',
        'invite',
        '--access-key',
        shop.accessKey,
        '--email',
        'cli-viewer@audited.example',
        '--role',
        'viewer',
        '--json',
      ]);
      assert.equal(invited.code, 0, invited.stdout);
      const invitation = JSON.parse(invited.stdout) as { setupUrl: string; role: string };
      assert.match(invitation.setupUrl, /token=/);
      assert.equal(invitation.role, 'viewer');
      const badRole = await paygate([
        'user',
        'invite',
        '--access-key',
        shop.accessKey,
        '--email',
        'x@y.example',
        '--role',
        'boss',
      ]);
      assert.equal(badRole.code, 1, badRole.stdout);
      assert.match(badRole.stdout, /role/);

      const total = (await platform.services.audit.list()).length;
      const clean = await paygate(['audit', 'verify']);
      assert.equal(clean.code, 0, clean.stdout);
      assert.match(clean.stdout, new RegExp(`${total} entries checked`));

      // Tampering, as only someone who can switch the trigger off could: an edited row…
      const { db } = platform.services;
      const victim = parsed.entries[3] as Entry;
      await db.query('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_no_change');
      try {
        const original = await db.query<{ action: string }>('SELECT action FROM audit_entries WHERE id = $1', [
          BigInt(victim.id),
        ]);
        await db.query(`UPDATE audit_entries SET action = 'nothing.happened' WHERE id = $1`, [BigInt(victim.id)]);
        const edited = await paygate(['audit', 'verify']);
        assert.equal(edited.code, 1, edited.stdout);
        assert.match(edited.stdout, new RegExp(`broken at entry ${victim.id} \\(nothing\\.happened`));
        assert.match(edited.stdout, /the entry was changed/);
        await db.query('UPDATE audit_entries SET action = $2 WHERE id = $1', [
          BigInt(victim.id),
          original.rows[0]?.action,
        ]);
        assert.equal((await paygate(['audit', 'verify'])).code, 0);

        // …and a deleted one.
        const removed = parsed.entries[5] as Entry;
        await db.query('DELETE FROM audit_entries WHERE id = $1', [BigInt(removed.id)]);
        const deleted = await paygate(['audit', 'verify', '--json']);
        assert.equal(deleted.code, 1, deleted.stdout);
        const report = JSON.parse(deleted.stdout) as { ok: boolean; broken: { id: string; reason: string } };
        assert.equal(report.ok, false);
        assert.equal(report.broken.id, String(Number(removed.id) + 1));
        assert.match(report.broken.reason, new RegExp(`entry ${removed.id} is missing`));
      } finally {
        await db.query('ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_no_change');
      }
    });
  });
}

if (process.env.TEST_DATABASE_URL) {
  describe('the audit trail under a platform role that is not a superuser (postgres)', () => {
    it('the role that migrated, and owns the table, can neither update nor delete entries, trigger or not', async () => {
      const base = process.env.TEST_DATABASE_URL as string;
      const suffix = randomBytes(4).toString('hex');
      const role = `paygate_app_${suffix}`;
      const name = `paygate_audit_${suffix}`;
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      try {
        await admin.query(`CREATE ROLE ${role} LOGIN`);
        await admin.query(`CREATE DATABASE ${name} OWNER ${role}`);
        const url = new URL(base);
        url.username = role;
        url.pathname = `/${name}`;
        const db = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir() });
        try {
          await migrate(db);
          const audit = new Audit(db);
          await audit.recordAlone({ actor: { kind: 'system' } }, { action: 'test.entry', merchant: null });
          await assert.rejects(db.query(`UPDATE audit_entries SET action = 'x'`), /permission denied/);
          await assert.rejects(db.query('DELETE FROM audit_entries'), /permission denied/);
          await assert.rejects(db.query('TRUNCATE audit_entries'), /permission denied/);
          // Even with the trigger off (the owner may do that), the privileges are gone.
          await db.query('ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_no_change');
          await assert.rejects(db.query(`UPDATE audit_entries SET action = 'x'`), /permission denied/);
          assert.deepEqual(await audit.verify(), { ok: true, checked: 1 });
        } finally {
          await db.close();
        }
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${role}`);
        await admin.end();
      }
    });
  });
}
