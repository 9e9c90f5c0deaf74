import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { Cob } from '@paygate/pix';
import { startSimulator, stopSimulator } from '@paygate/simulator-kit/test-support';
import { clientTls, cobBody, control, newTxid, pixClient, startReceiver, tempDir, waitFor } from './helpers.js';
import { tlsFiles } from '../src/certs.js';

const BIN = fileURLToPath(new URL('../bin/paygate-pix.js', import.meta.url));

interface Running {
  child: ChildProcess;
  url: string;
  controlUrl: string;
  lines: string[];
  channel: Record<string, string>;
}

/** Starts `paygate-pix` as its own process (as `npx paygate-pix` does) and waits for its "listening" line. */
async function startProcess(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const { child, lines, listening } = await startSimulator<{ url: string; controlUrl: string }>(BIN, 'paygate-pix', {
    PIX_DATA_DIR: dataDir,
    PIX_PORT: '0',
    PIX_CONTROL_PORT: '0',
    PIX_TICK_MS: '20',
    PIX_RETRY_BASE_MS: '20',
    PIX_RETRY_MAX_MS: '50',
    ...env,
  });
  const snippet = lines[lines.findIndex((line) => line.startsWith('paygate-pix: the pix-api channel')) + 1] as string;
  return { child, url: listening.url, controlUrl: listening.controlUrl, lines, channel: JSON.parse(snippet) };
}

function clientFor(running: Running, dataDir: string) {
  return pixClient(running.url, clientTls(tlsFiles(dataDir)), running.channel.clientId!, running.channel.clientSecret!);
}

describe('the paygate-pix process', () => {
  const temp = tempDir();
  after(() => temp.remove());

  test('a second simulator on the same data directory exits at once, naming the directory and the owner pid', async () => {
    const dir = join(temp.dir, 'locked');
    const first = await startProcess(dir);
    try {
      const second = spawnSync(process.execPath, [BIN], {
        env: { ...process.env, NODE_OPTIONS: '', PIX_DATA_DIR: dir, PIX_PORT: '0', PIX_CONTROL_PORT: '0' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(second.status, 1);
      const lines = second.stderr.trim().split('\n');
      assert.equal(lines.length, 1, second.stderr);
      assert.equal(
        lines[0],
        `paygate-pix: the data directory ${dir} is in use by paygate-pix (pid ${first.child.pid}); stop it first, or use another directory`,
      );
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'owner.lock'), 'utf8')), {
        pid: first.child.pid,
        role: 'paygate-pix',
      });
    } finally {
      assert.equal(await stopSimulator(first, 'SIGTERM'), 0, 'SIGTERM stops gracefully');
    }
    // Released on exit: the directory can be used again.
    const third = await startProcess(dir);
    await stopSimulator(third, 'SIGTERM');
  });

  test('a bad setting stops the start with one line', () => {
    const result = spawnSync(process.execPath, [BIN], {
      env: { ...process.env, NODE_OPTIONS: '', PIX_DATA_DIR: join(temp.dir, 'bad'), PIX_PORT: 'x' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(result.status, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /^paygate-pix: PIX_PORT must be a whole number/);
  });

  test('a restart keeps the charges, the webhook, the credentials, the certificates and the issued tokens', async () => {
    const dir = join(temp.dir, 'restart');
    const first = await startProcess(dir);
    const client = clientFor(first, dir);
    const token = await client.accessToken();
    const txid = newTxid();
    const created = await client.call('PUT', `/cob/${txid}`, token, cobBody(first.channel.pixKey!));
    assert.equal(created.status, 201);
    const hook = `/webhook/${encodeURIComponent(first.channel.pixKey!)}`;
    await client.call('PUT', hook, token, { webhookUrl: 'http://127.0.0.1:1/channels/pix/notifications' });
    assert.equal(await stopSimulator(first, 'SIGTERM'), 0);
    assert.ok(first.lines.some((line) => line.includes('"msg":"stopped"')));
    for (const line of first.lines.filter((l) => l.startsWith('{"level"'))) JSON.parse(line);

    const second = await startProcess(dir, { PIX_PORT: new URL(first.url).port });
    try {
      const { url: _u1, ...before } = first.channel;
      const { url: _u2, ...now } = second.channel;
      assert.deepEqual(now, before, 'the same channel settings');
      const again = clientFor(second, dir);
      const cob = await again.call('GET', `/cob/${txid}`, token);
      assert.equal(cob.status, 200, 'the token issued before the restart still works');
      assert.deepEqual(cob.body, created.body);
      assert.equal((await again.call('GET', hook, token)).status, 200);
    } finally {
      await stopSimulator(second, 'SIGTERM');
    }
  });

  test('SIGKILL while a callback is in flight: after a restart the paid charge is there and the callback is delivered', async () => {
    const dir = join(temp.dir, 'kill');
    const statuses = [0]; // the first delivery is held open: the simulator is mid-notification when killed
    const receiver = await startReceiver(statuses);
    try {
      const first = await startProcess(dir);
      const client = clientFor(first, dir);
      const token = await client.accessToken();
      await client.call('PUT', `/webhook/${encodeURIComponent(first.channel.pixKey!)}`, token, {
        webhookUrl: receiver.url,
      });
      const txid = newTxid();
      await client.call('PUT', `/cob/${txid}`, token, cobBody(first.channel.pixKey!, '77.70'));
      const paid = await control(first.controlUrl, '/control/pay', {
        txid,
        payer: { name: 'Ana', cpf: '00012345678' },
      });
      assert.equal(paid.status, 200);
      await waitFor(() => receiver.attempts.length === 1, 'the callback to be in flight');
      await stopSimulator(first, 'SIGKILL');
      assert.equal(receiver.received.length, 0);

      const second = await startProcess(dir);
      try {
        await waitFor(() => receiver.received.length === 1, 'the callback after the restart');
        assert.equal(receiver.received[0]?.raw, receiver.attempts[0]?.raw, 'the same callback');
        const cob = Cob.parse((await clientFor(second, dir).call('GET', `/cob/${txid}`, token)).body);
        assert.equal(cob.status, 'CONCLUIDA');
        assert.deepEqual(cob.pix?.[0]?.pagador, { nome: 'Ana', cpf: '00012345678' });
        assert.equal(cob.pix?.[0]?.endToEndId, paid.body.pix[0].endToEndId);
      } finally {
        await stopSimulator(second, 'SIGTERM');
      }
    } finally {
      await receiver.close();
    }
  });
});
