// What the operator command line tells a newcomer (issue 39, point 5): a token of another server
// is named as such instead of a bare UNAUTHORIZED, and times are printed in ISO 8601.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMerchant, startTestPlatform, type TestPlatform } from './harness.js';
import { runCliAsync } from './spawned.js';

describe('paygate: which server, and when', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-operator-cli-'));
  let platform: TestPlatform;
  before(async () => {
    platform = await startTestPlatform();
    await createMerchant(platform, 'ISO shop');
  });
  after(async () => {
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A data directory as a server that ran from it leaves it: its token and its server.json. */
  function dataDir(name: string, serverInfo?: Record<string, unknown>): string {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, 'admin.token'), `${name}-token-0123456789abcdefghij\n`, { mode: 0o600 });
    if (serverInfo) writeFileSync(join(path, 'server.json'), `${JSON.stringify(serverInfo)}\n`);
    return path;
  }

  it('every operator answer names the server that gave it', async () => {
    const response = await fetch(`${platform.url}/admin/v1/merchants`);
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('paygate-server-id'), platform.serverId);
    assert.match(platform.serverId, /^srv_[0-9a-f]{16}$/);
  });

  it("says when PAYGATE_URL is another server than the data directory's token belongs to", async () => {
    const other = dataDir('other', {
      url: 'http://127.0.0.1:8080',
      pid: 4242,
      environment: 'sandbox',
      serverId: 'srv_0000000000000000',
    });
    const result = await runCliAsync(['merchant', 'list'], { PAYGATE_DATA_DIR: other, PAYGATE_URL: platform.url });
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr.trim(),
      `paygate: UNAUTHORIZED: ${platform.url} is another server than the one whose operator token is in ${join(other, 'admin.token')} ` +
        `(that one ran at http://127.0.0.1:8080, pid 4242): point PAYGATE_DATA_DIR at the data directory of the server at ` +
        `${platform.url}, or PAYGATE_URL at http://127.0.0.1:8080, or set PAYGATE_ADMIN_TOKEN to that server's token`,
    );
  });

  it('names where the refused token came from when it cannot tell more', async () => {
    const fresh = dataDir('fresh');
    const result = await runCliAsync(['merchant', 'list'], { PAYGATE_DATA_DIR: fresh, PAYGATE_URL: platform.url });
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr.trim(),
      `paygate: UNAUTHORIZED: the server at ${platform.url} refused the operator token from ${join(fresh, 'admin.token')}; ` +
        `no server has run from ${fresh}: is PAYGATE_DATA_DIR the data directory of the server at ${platform.url}?`,
    );
    const given = await runCliAsync(['merchant', 'list'], {
      PAYGATE_ADMIN_TOKEN: 'a-wrong-token-0123456789abcdef',
      PAYGATE_URL: platform.url,
    });
    assert.match(
      given.stderr,
      /refused the operator token from PAYGATE_ADMIN_TOKEN; is it the PAYGATE_ADMIN_TOKEN that server was started with\?/,
    );
  });

  it('prints merchant list times in ISO 8601, and --json as the API gives them', async () => {
    const env = { PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: 'test-admin-token-0123456789abcdef' };
    const table = await runCliAsync(['merchant', 'list'], env);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /ISO shop/);
    assert.match(table.stdout, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/);
    assert.doesNotMatch(table.stdout, /\b\d{13}\b/, 'no raw milliseconds');
    const json = await runCliAsync(['merchant', 'list', '--json'], env);
    assert.equal(typeof (JSON.parse(json.stdout) as { createdAt: unknown }[])[0]?.createdAt, 'number');
  });
});
