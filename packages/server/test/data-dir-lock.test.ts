// One owner per embedded data directory (issue: two `npm start` on one PAYGATE_DATA_DIR both
// served, and the first one's acknowledged orders were gone after a restart). The platform, the
// worker and every command that would open the embedded database are refused while a process
// owns the directory, with one line naming it and the owner's pid; a SIGKILLed owner leaves no
// lock behind, and what it acknowledged is there after the next start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SETTLEMENT_HEADER } from '../src/modules/reconciliation/service.js';
import { buildRead, buildWrite, paymentInput, type TestMerchant } from './harness.js';
import {
  onboard,
  runCli,
  runCliAsync,
  runPlatform,
  type SpawnedPlatform,
  spawnPlatform,
  stopSpawned,
} from './spawned.js';

const ADMIN_TOKEN = 'data-dir-lock-admin-token-0123456789';
const ROOT = join(import.meta.dirname, '../../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

async function createPayment(url: string, merchant: TestMerchant): Promise<{ status: number; orderNo?: string }> {
  const signed = buildWrite(merchant, '/api/v1/payments', paymentInput());
  const response = await fetch(`${url}/api/v1/payments`, {
    method: 'POST',
    headers: signed.headers,
    body: new Uint8Array(signed.body),
  });
  const body = (await response.json()) as { data?: { orderNo: string } };
  return { status: response.status, ...(body.data ? { orderNo: body.data.orderNo } : {}) };
}

async function queryPayment(url: string, merchant: TestMerchant, orderNo: string): Promise<number> {
  const query = `orderNo=${orderNo}`;
  const response = await fetch(`${url}/api/v1/payments?${query}`, {
    headers: buildRead(merchant, '/api/v1/payments', query).headers,
  });
  await response.arrayBuffer();
  return response.status;
}

describe('one owner per embedded data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-lock-'));
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    PAYGATE_DATA_DIR: dir,
    PAYGATE_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_SHUTDOWN_DRAIN: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: '',
  };
  let owner: SpawnedPlatform;
  let merchant: TestMerchant;
  const acknowledged: string[] = [];

  /** The one line every refused opener prints, naming the directory and the owner's pid. */
  function assertRefused(result: { status: number | null; stderr: string }, what: string) {
    assert.equal(result.status, 1, `${what}: ${result.stderr}`);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `${what} says one line: ${result.stderr}`);
    assert.equal(
      lines[0],
      `paygate: the data directory ${dir} is in use by paygate server (pid ${owner.child.pid}); stop it first, or use another directory`,
      what,
    );
  }

  before(async () => {
    owner = await spawnPlatform(env);
    merchant = await onboard(owner.url, ADMIN_TOKEN);
    for (let i = 0; i < 20; i++) {
      const created = await createPayment(owner.url, merchant);
      assert.equal(created.status, 200);
      acknowledged.push(created.orderNo as string);
    }
  });

  after(async () => {
    await stopSpawned(owner, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second platform at once', () => {
    assertRefused(runPlatform(env), 'a second platform');
  });

  it('refuses `paygate worker` and `paygate migrate`', () => {
    assertRefused(runCli(['worker'], env), 'paygate worker');
    assertRefused(runCli(['migrate'], env), 'paygate migrate');
  });

  it('`paygate reconcile` goes through the running server (found by server.json) instead', async () => {
    const file = join(dir, 'settlement.csv');
    writeFileSync(file, `${SETTLEMENT_HEADER}\n`);
    const reconciled = await runCliAsync(
      ['reconcile', '--channel', 'psp', '--file', file, '--date', '2026-11-25'],
      env,
    );
    assert.equal(reconciled.status, 0, reconciled.stderr);
    assert.equal(reconciled.stdout, 'psp 2026-11-25: 0 lines, 0 matched, 0 mismatches\n');
  });

  it('refuses a second `npm start` before it rebuilds anything', () => {
    const second = spawnSync(npm, ['start'], {
      cwd: ROOT,
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.notEqual(second.status, 0);
    assert.ok(
      second.stderr.includes(
        `paygate: the data directory ${dir} is in use by paygate server (pid ${owner.child.pid}); stop it first, or use another directory`,
      ),
      second.stderr,
    );
    const said = `${second.stdout}\n${second.stderr}`;
    assert.doesNotMatch(said, /> paygate@\S* build|tsc -b/, 'nothing was rebuilt');
  });

  it('still serves the commands that go through the running server', () => {
    const listed = runCli(['merchant', 'list', '--json'], { ...env, PAYGATE_URL: owner.url });
    assert.equal(listed.status, 0, listed.stderr);
    assert.ok((JSON.parse(listed.stdout) as unknown[]).length >= 1);
  });

  it('starts again after the owner is SIGKILLed, with every acknowledged order', async () => {
    await stopSpawned(owner, 'SIGKILL');
    owner = await spawnPlatform(env);
    for (const orderNo of acknowledged) assert.equal(await queryPayment(owner.url, merchant, orderNo), 200, orderNo);
    // The numbering goes on from where the killed owner stopped: no order number is issued twice.
    const next = await createPayment(owner.url, merchant);
    assert.equal(next.status, 200);
    assert.ok(!acknowledged.includes(next.orderNo as string));
  });

  it('refuses a second platform on a data directory whose owner stopped cleanly and came back', async () => {
    await stopSpawned(owner, 'SIGTERM');
    owner = await spawnPlatform(env);
    assertRefused(runPlatform(env), 'a second platform after a restart');
  });
});
