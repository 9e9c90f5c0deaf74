import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { startSimulator, stopSimulator } from '@paygate/simulator-kit/test-support';
import { SECRET, call, control, orderNo, startReceiver, tempDir, waitFor } from './helpers.js';

const BIN = fileURLToPath(new URL('../bin/paygate-psp.js', import.meta.url));

/** Starts `paygate-psp` as its own process (as `npx paygate-psp` does) and waits for its "listening" line. */
async function startProcess(env: Record<string, string>) {
  const { child, lines, listening } = await startSimulator<{ url: string }>(
    BIN,
    'paygate-psp',
    { PSP_PORT: '0', PSP_TICK_MS: '20', PSP_RETRY_BASE_MS: '20', PSP_RETRY_MAX_MS: '50', ...env },
    20_000,
  );
  return { child, url: listening.url, lines };
}

describe('the paygate-psp process', () => {
  const temp = tempDir();
  after(() => temp.remove());

  test('refuses to start without PSP_SECRET, with one clear line', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PSP_DATA_DIR: temp.dir };
    delete env.PSP_SECRET;
    const result = spawnSync(process.execPath, [BIN], { env, encoding: 'utf8', timeout: 20_000 });
    assert.equal(result.status, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /^paygate-psp: PSP_SECRET is required/);
  });

  test('a second simulator on the same data directory is refused at once, naming the owner', async () => {
    const env = { PSP_SECRET: SECRET, PSP_DATA_DIR: `${temp.dir}/owned` };
    const first = await startProcess(env);
    try {
      const second = spawnSync(process.execPath, [BIN], {
        env: { ...process.env, NODE_OPTIONS: '', PSP_PORT: '0', ...env },
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.equal(second.status, 1);
      assert.equal(second.stderr.trim().split('\n').length, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(
          `^paygate-psp: the data directory ${temp.dir}/owned is in use by paygate-psp \\(pid ${first.child.pid}\\)`,
        ),
      );
    } finally {
      await stopSimulator(first, 'SIGKILL');
    }
    // The kernel dropped the dead owner's lock: the next start is not blocked.
    const next = await startProcess(env);
    await stopSimulator(next);
  });

  test('kill -9 with a notification pending: after a restart it is delivered, same bytes; state intact', async () => {
    const statuses = Array.from({ length: 10_000 }, () => 500);
    const receiver = await startReceiver(statuses);
    const env = { PSP_SECRET: SECRET, PSP_DATA_DIR: `${temp.dir}/state` };
    try {
      const first = await startProcess(env);
      const reference = orderNo('P');
      const created = await call(first.url, 'POST', '/v1/charges', {
        reference,
        amount: '77.70',
        currency: 'BRL',
        method: 'PIX',
        notifyUrl: receiver.url,
      });
      assert.equal(created.status, 201);
      const w = orderNo('W');
      const transfer = await call(first.url, 'POST', '/v1/transfers', {
        reference: w,
        amount: '12.00',
        currency: 'BRL',
        payee: { name: 'Ana', accountNumber: '1' },
        notifyUrl: receiver.url,
      });
      assert.deepEqual(
        (await control(first.url, '/control/payments/complete', { reference, status: 'SUCCEEDED' })).body,
        {
          ok: true,
        },
      );
      await waitFor(() => receiver.attempts.length >= 2, 'failed attempts before the kill');
      await stopSimulator(first, 'SIGKILL');
      const before = receiver.attempts[0]?.raw;
      assert.ok(before);
      assert.equal(receiver.received.length, 0);

      statuses.length = 0; // the platform is back: every delivery is acknowledged from now on
      const second = await startProcess(env);
      await waitFor(() => receiver.received.length === 1, 'the pending notification after the restart');
      assert.equal(receiver.received[0]?.raw, before, 'exactly the notification pending before the kill');
      assert.equal(receiver.received[0]?.body.object.status, 'paid');

      const charge = await call(second.url, 'GET', `/v1/charges?reference=${reference}`);
      assert.equal(charge.body.id, created.body.id);
      assert.equal(charge.body.status, 'paid');
      assert.equal((await call(second.url, 'GET', `/v1/transfers/${transfer.body.id}`)).body.status, 'queued');
      // Idempotency on reference survives the restart too.
      const again = await call(second.url, 'POST', '/v1/charges', {
        reference,
        amount: '77.70',
        currency: 'BRL',
        method: 'PIX',
        notifyUrl: receiver.url,
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.id, created.body.id);

      assert.equal(await stopSimulator(second), 0, 'SIGTERM stops gracefully');
      assert.ok(second.lines.some((line) => line.includes('"msg":"stopped"')));
      for (const line of second.lines.filter((l) => l.startsWith('{'))) JSON.parse(line); // JSON lines
    } finally {
      await receiver.close();
    }
  });
});
