// A supervisor (systemd, a test, a rolling restart) may read the start-up announcement and send
// SIGTERM at once. The server, the worker and the simulators install their handlers before they
// announce, so that stop is graceful (exit 0), never a death by the signal.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freshPostgres } from './harness.js';

const ROOT = join(import.meta.dirname, '../../..');
const PRELOAD = join(import.meta.dirname, 'fixtures/signal-at-announcement.mjs');

async function stoppedAtAnnouncement(
  entry: string,
  args: readonly string[],
  text: string,
  env: Record<string, string>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const child = spawn(
    process.execPath,
    ['--import', PRELOAD, '--conditions=source', '--import', 'tsx', entry, ...args],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '', LOG_LEVEL: 'info', SIGNAL_AT_TEXT: text, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code, signal] = (await new Promise((resolve) => child.once('exit', (...result) => resolve(result)))) as [
    number | null,
    NodeJS.Signals | null,
  ];
  clearTimeout(timer);
  return { code, signal, output };
}

describe('a SIGTERM the instant a process announces itself', () => {
  it('the API server stops gracefully (exit 0, "stopped" logged)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-signal-'));
    try {
      const result = await stoppedAtAnnouncement(join(ROOT, 'packages/server/src/main.ts'), [], 'paygate listening', {
        PORT: '0',
        PAYGATE_DATA_DIR: dataDir,
        PAYGATE_WORKERS: 'false',
        PAYGATE_SHUTDOWN_DRAIN: '0',
        DATABASE_URL: '',
      });
      assert.deepEqual([result.code, result.signal], [0, null], result.output);
      assert.match(result.output, /"msg":"stopped"/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it(
    'the webhook worker stops gracefully (exit 0)',
    { skip: process.env.TEST_DATABASE_URL ? false : 'the worker runs on PostgreSQL: set TEST_DATABASE_URL' },
    async () => {
      const pg = await freshPostgres();
      const dataDir = mkdtempSync(join(tmpdir(), 'paygate-signal-'));
      try {
        const env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: pg.url };
        // The worker signs with the platform's keys: one start of the server creates them.
        const first = await stoppedAtAnnouncement(join(ROOT, 'packages/server/src/main.ts'), [], 'paygate listening', {
          ...env,
          PORT: '0',
          PAYGATE_WORKERS: 'false',
          PAYGATE_SHUTDOWN_DRAIN: '0',
        });
        assert.equal(first.code, 0, first.output);
        const result = await stoppedAtAnnouncement(
          join(ROOT, 'packages/server/src/cli/main.ts'),
          ['worker'],
          'paygate worker started',
          { ...env, PAYGATE_SHUTDOWN_TIMEOUT: '1s' },
        );
        assert.deepEqual([result.code, result.signal], [0, null], result.output);
        assert.match(result.output, /paygate worker stopping/);
      } finally {
        await pg.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );

  it('a simulator (paygate-psp, on the simulator kit) stops gracefully (exit 0)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-signal-psp-'));
    try {
      const result = await stoppedAtAnnouncement(
        join(ROOT, 'packages/psp-simulator/src/main.ts'),
        [],
        'paygate-psp listening',
        { PSP_PORT: '0', PSP_SECRET: 'signal-test-secret', PSP_DATA_DIR: dataDir },
      );
      assert.deepEqual([result.code, result.signal], [0, null], result.output);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
