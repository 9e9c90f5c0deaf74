/**
 * `paygate operator invite|list|remove` (decisions.md, "Back office"): the command line invites
 * the first admin from the host, lists the operators and removes one; its JSON is the fixed shape
 * (`{"setupUrl": "…token=…", …}`, `{"operators": [{"email", "role", …}]}`); the last admin stays;
 * its audit entries are the token's, `{"kind": "operator"}` without an email.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databases, startTestPlatform, type TestPlatform } from './harness.js';
import { BACKOFFICE, OperatorClient } from './backoffice-harness.js';
import { ADMIN_TOKEN } from './portal-harness.js';
import { runCliAsync } from './spawned.js';

for (const database of databases()) {
  describe(`paygate operator (${database})`, () => {
    let platform: TestPlatform;
    let env: Record<string, string>;
    before(async () => {
      platform = await startTestPlatform({ database });
      env = { PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN };
    });
    after(async () => {
      await platform.close();
    });

    it('invites the first admin, who sets a password and a second factor; lists; removes; keeps the last admin', async () => {
      const invited = await runCliAsync(
        ['operator', 'invite', '--email', 'Root@Ops.example', '--role', 'admin', '--json'],
        env,
      );
      assert.equal(invited.status, 0, invited.stderr);
      const printed = JSON.parse(invited.stdout) as {
        setupUrl: string;
        email: string;
        role: string;
        expiresAt: number;
      };
      assert.match(
        printed.setupUrl,
        new RegExp(`^${platform.config.publicUrl}/backoffice/setup#token=[A-Za-z0-9_-]{43}$`),
      );
      assert.equal(printed.email, 'root@ops.example');
      assert.equal(printed.role, 'admin');
      assert.ok(Math.abs(printed.expiresAt - (platform.services.now() + 72 * 3_600_000)) < 60_000, 'valid 72 h');
      const root = new OperatorClient(platform);
      assert.equal((await root.setup(new URL(printed.setupUrl).hash.slice('#token='.length))).status, 200);
      await root.setUpTotp(platform);
      assert.equal((await root.get(`${BACKOFFICE}/operators`)).status, 200);

      const second = await runCliAsync(
        ['operator', 'invite', '--email', 'desk@ops.example', '--role', 'support', '--json'],
        env,
      );
      assert.equal(second.status, 0, second.stderr);
      const listed = await runCliAsync(['operator', 'list', '--json'], env);
      assert.equal(listed.status, 0, listed.stderr);
      const { operators } = JSON.parse(listed.stdout) as {
        operators: { email: string; role: string; activated: boolean }[];
      };
      assert.deepEqual(
        operators.map((o) => [o.email, o.role, o.activated]),
        [
          ['root@ops.example', 'admin', true],
          ['desk@ops.example', 'support', false],
        ],
      );
      const badRole = await runCliAsync(['operator', 'invite', '--email', 'x@ops.example', '--role', 'owner'], env);
      assert.notEqual(badRole.status, 0);
      const last = await runCliAsync(['operator', 'remove', '--email', 'root@ops.example'], env);
      assert.notEqual(last.status, 0, 'the last admin is kept');
      assert.match(last.stderr, /last admin/);
      const removed = await runCliAsync(['operator', 'remove', '--email', 'desk@ops.example', '--json'], env);
      assert.equal(removed.status, 0, removed.stderr);
      const after = JSON.parse((await runCliAsync(['operator', 'list', '--json'], env)).stdout) as {
        operators: { email: string }[];
      };
      assert.deepEqual(
        after.operators.map((o) => o.email),
        ['root@ops.example'],
      );
      const entries = await platform.services.audit.list({ action: 'operator.removed' });
      assert.deepEqual(entries.at(-1)?.actor, { kind: 'operator' }, "the token's command line has no email");
    });
  });
}
