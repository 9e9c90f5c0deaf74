/**
 * A worker of the deploy/ recipe (deploy/cluster.mjs) is ready again after a restart however much
 * it printed before. Found by the fault campaign (npm run chaos, 2026-12-01): a worker's start
 * was read as its start line among the lines added to the 200-line tail since the spawn, and once
 * the tail was full a restart added none, so every restarted worker was taken for one that never
 * started and SIGKILLed when `start()` gave up (no webhook was delivered until the next restart).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Proc } from '../../../deploy/cluster.mjs';

/** A stand-in worker: `lines` lines of chatter, then its start line (split across two writes), then it waits. */
const WORKER = `
const lines = Number(process.argv[1]);
for (let i = 0; i < lines; i++) process.stdout.write('{"msg":"channel poll","i":' + i + '}\\n');
process.stdout.write('{"msg":"paygate worker');
setTimeout(() => process.stdout.write(' started"}\\n'), 50);
setInterval(() => {}, 1000);
`;

test('a worker that printed more than the tail keeps is ready again after a restart', async () => {
  const logDir = mkdtempSync(join(tmpdir(), 'paygate-cluster-restart-'));
  const worker = new Proc({
    name: 'worker1',
    kind: 'worker',
    command: process.execPath,
    args: ['-e', WORKER, '300'],
    env: { PATH: process.env.PATH ?? '' },
    logDir,
  });
  try {
    await worker.start(5_000);
    assert.equal(worker.tail.length, 200, 'the tail is full');
    assert.deepEqual(await worker.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
    await worker.start(5_000);
    assert.ok(worker.running, 'the restarted worker runs');
    assert.equal(worker.exits.length, 1, 'only the kill ended a run');
  } finally {
    await worker.stop('SIGKILL');
    rmSync(logDir, { recursive: true, force: true });
  }
});
