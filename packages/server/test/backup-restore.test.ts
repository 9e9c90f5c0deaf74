// Production on the embedded database is a decision, and it has a backup (issue 39, point 4):
// production without DATABASE_URL refuses to start unless PAYGATE_EMBEDDED_PRODUCTION=true, and
// then warns once; `paygate backup` takes an online backup of a running server's embedded
// database and `paygate restore` puts it in place for a stopped one. The restore drill: writes
// under way, a backup, more writes, stop, restore into a fresh data directory, start: every order
// acknowledged before the backup began is there, those acknowledged after it ended are not.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildRead, buildWrite, databases, paymentInput, startTestPlatform, type TestMerchant } from './harness.js';
import {
  lastLines,
  onboard,
  runCli,
  runCliAsync,
  runPlatform,
  type SpawnedPlatform,
  spawnPlatform,
  stopSpawned,
  waitFor,
} from './spawned.js';

const ADMIN_TOKEN = 'backup-restore-admin-token-0123456789';
const MASTER_KEY = Buffer.alloc(32, 11).toString('base64');

async function createPayment(
  url: string,
  merchant: TestMerchant,
  merchantOrderNo: string,
): Promise<string | undefined> {
  const signed = buildWrite(merchant, '/api/v1/payments', paymentInput({ merchantOrderNo }));
  const response = await fetch(`${url}/api/v1/payments`, {
    method: 'POST',
    headers: signed.headers,
    body: new Uint8Array(signed.body),
  });
  const body = (await response.json()) as { data?: { orderNo: string } };
  return response.status === 200 ? body.data?.orderNo : undefined;
}

/** An error with its causes (fetch's "fetch failed" says what failed only in its cause). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let at: unknown = error; at instanceof Error && parts.length < 4; at = at.cause) {
    parts.push(`${at.name}: ${at.message}${'code' in at ? ` (${String(at.code)})` : ''}`);
  }
  return parts.join(' ← ') || String(error);
}

async function paymentStatus(url: string, merchant: TestMerchant, orderNo: string): Promise<string> {
  const query = `orderNo=${orderNo}`;
  const response = await fetch(`${url}/api/v1/payments?${query}`, {
    headers: buildRead(merchant, '/api/v1/payments', query).headers,
  });
  const body = (await response.json()) as { msg: string; data?: { status: string } };
  return response.status === 200 ? (body.data?.status ?? '?') : body.msg;
}

describe('production on the embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-embedded-production-'));
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    PAYGATE_ENV: 'production',
    PAYGATE_MASTER_KEY: MASTER_KEY,
    PAYGATE_DATA_DIR: join(dir, 'data'),
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_SHUTDOWN_DRAIN: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: '',
  };
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to start without PAYGATE_EMBEDDED_PRODUCTION, in one line', () => {
    const refused = runPlatform(env);
    assert.equal(refused.status, 1);
    assert.equal(
      refused.stderr.trim(),
      'paygate: invalid configuration: production needs DATABASE_URL (PostgreSQL); to run production on the embedded database (one process, no replica; back it up with paygate backup) set PAYGATE_EMBEDDED_PRODUCTION=true',
    );
  });

  it('starts with PAYGATE_EMBEDDED_PRODUCTION=true and warns once', async () => {
    const platform = await spawnPlatform({ ...env, PAYGATE_EMBEDDED_PRODUCTION: 'true' });
    try {
      // The lines after 'paygate listening' arrive on their own time: wait for the warning, the last.
      for (let waited = 0; !platform.output().includes('take backups with') && waited < 10_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const warnings = platform
        .output()
        .split('\n')
        .filter((line) => line.includes('production on the embedded database'));
      assert.equal(warnings.length, 1, platform.output());
      assert.equal((JSON.parse(warnings[0] as string) as { level: number }).level, 40);
      // The start-up log says where everything is (issue 39, point 5).
      const base = platform.url;
      assert.ok(
        platform
          .output()
          .includes(
            `the merchant API is at ${base}/api/v1, the portal at ${base}/portal, the API reference at ${base}/docs; ` +
              'npx paygate takes the operator token from PAYGATE_ADMIN_TOKEN',
          ),
        platform.output(),
      );
    } finally {
      await stopSpawned(platform, 'SIGTERM');
    }
  });
});

describe('paygate backup and restore: the drill', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-backup-'));
  const live = join(dir, 'live');
  const restored = join(dir, 'restored');
  const file = join(dir, 'paygate.tar.gz');
  const env = (dataDir: string): Record<string, string> => ({
    HOST: '127.0.0.1',
    PORT: '0',
    PAYGATE_DATA_DIR: dataDir,
    PAYGATE_MASTER_KEY: MASTER_KEY,
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_SHUTDOWN_DRAIN: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: '',
  });
  let platform: SpawnedPlatform | undefined;
  after(async () => {
    if (platform) await stopSpawned(platform, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every order acknowledged before the backup, through a restore into a fresh data directory', async (t) => {
    platform = await spawnPlatform(env(live));
    const url = platform.url;
    const merchant = await onboard(url, ADMIN_TOKEN);
    // A light write load: two clients creating payments one after another, all the time. A create
    // that gets no answer (the connection failed) is not acknowledged: the drill's promises are
    // about acknowledged orders only, so the load goes on, and what failed is kept to be told.
    const acknowledged: string[] = [];
    const unanswered: string[] = [];
    let stop = false;
    // However the test ends, the load ends with it (a failed assertion must not leave it running).
    t.after(() => {
      stop = true;
    });
    let sequence = 0;
    const client = async () => {
      while (!stop) {
        const orderNo = await createPayment(url, merchant, `drill-${sequence++}`).catch(async (error: unknown) => {
          unanswered.push(describeError(error));
          await new Promise((resolve) => setTimeout(resolve, 100));
          return undefined;
        });
        if (orderNo) acknowledged.push(orderNo);
      }
    };
    const load = Promise.all([client(), client()]);
    /** Waits until `count` creates are acknowledged; fails (it never hangs) if the load stops getting answers. */
    const acknowledgedReach = (count: number) =>
      waitFor(
        () => acknowledged.length >= count || undefined,
        `${count} creates acknowledged`,
        60_000,
        () =>
          [
            `${acknowledged.length} acknowledged; ${unanswered.length} unanswered: ${unanswered.slice(0, 3).join('; ')}`,
            lastLines('the platform', platform),
          ].join('\n'),
      );
    await acknowledgedReach(30);

    const before = [...acknowledged];
    const backup = await runCliAsync(['backup', '--out', file, '--json'], { ...env(live), PAYGATE_URL: url });
    const afterBackup = acknowledged.length;
    assert.equal(backup.status, 0, backup.stderr);
    const report = JSON.parse(backup.stdout) as { file: string; bytes: number };
    assert.equal(report.file, file);
    assert.equal(statSync(file).size, report.bytes);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'a backup holds payers: its owner reads it alone');
    const taken = platform
      .output()
      .split('\n')
      .find((line) => line.includes('"backup taken"'));
    assert.ok(taken, 'the server logs the backup it took');
    const { bytes, ms } = JSON.parse(taken) as { bytes: number; ms: number };
    t.diagnostic(`backup: ${bytes} bytes taken in ${ms} ms; ${acknowledged.length - before.length} creates during it`);

    // A backup never overwrites a file; a restore is refused while a server owns the directory.
    // (Run without blocking this process: the load goes on meanwhile.)
    const again = await runCliAsync(['backup', '--out', file], { ...env(live), PAYGATE_URL: url });
    assert.equal(again.status, 1);
    assert.equal(again.stderr.trim(), `paygate: ${file} exists: give a new file name (a backup never overwrites one)`);
    const busy = await runCliAsync(['restore', '--from', file], env(live));
    assert.equal(busy.status, 1);
    assert.equal(
      busy.stderr.trim(),
      `paygate: the data directory ${live} is in use by paygate server (pid ${platform.child.pid}); stop it first, or use another directory`,
    );

    await acknowledgedReach(afterBackup + 20);
    stop = true;
    await load;
    if (unanswered.length > 0) {
      t.diagnostic(
        `${unanswered.length} creates without an answer (not acknowledged): ${unanswered.slice(0, 3).join('; ')}`,
      );
    }
    const later = acknowledged.slice(afterBackup);
    await stopSpawned(platform, 'SIGTERM');
    platform = undefined;

    // The stopped server's own directory holds a database: refused without --replace.
    const occupied = runCli(['restore', '--from', file], env(live));
    assert.equal(occupied.status, 1);
    assert.match(occupied.stderr, /already holds a database: restore into a new PAYGATE_DATA_DIR, or add --replace/);

    const restore = runCli(['restore', '--from', file, '--json'], env(restored));
    assert.equal(restore.status, 0, restore.stderr);
    assert.deepEqual((JSON.parse(restore.stdout) as { pending: string[] }).pending, []);

    platform = await spawnPlatform(env(restored));
    for (const orderNo of before)
      assert.equal(await paymentStatus(platform.url, merchant, orderNo), 'PENDING', orderNo);
    for (const orderNo of later) {
      assert.equal(await paymentStatus(platform.url, merchant, orderNo), 'ORDER_NOT_FOUND', `${orderNo} came after`);
    }
    // The platform keys opened with the kept master key: a new signed and sealed create works.
    assert.ok(await createPayment(platform.url, merchant, 'after-restore'));
    await stopSpawned(platform, 'SIGTERM');
    platform = undefined;

    // --replace keeps the database that was there, aside.
    const replaced = runCli(['restore', '--from', file, '--replace', '--json'], env(live));
    assert.equal(replaced.status, 0, replaced.stderr);
    assert.match((JSON.parse(replaced.stdout) as { replaced: string }).replaced, /pgdata\.replaced-/);
  });

  it('refuses a file that is not a backup, changing nothing', () => {
    const bogus = runCli(
      ['restore', '--from', join(import.meta.dirname, 'backup-restore.test.ts')],
      env(join(dir, 'x')),
    );
    assert.equal(bogus.status, 1);
    assert.match(bogus.stderr, /is not a paygate backup/);
  });
});

for (const database of databases().filter((kind) => kind === 'postgres')) {
  describe(`paygate backup on PostgreSQL (${database})`, () => {
    it('is refused, naming pg_dump', async () => {
      const platform = await startTestPlatform({ database });
      try {
        const response = await fetch(`${platform.url}/admin/v1/backup`, {
          headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' },
        });
        assert.equal(response.status, 409);
        const body = (await response.json()) as { msg: string; message: string };
        assert.equal(body.msg, 'CONFLICT');
        assert.match(body.message, /pg_dump/);
      } finally {
        await platform.close();
      }
    });
  });
}
