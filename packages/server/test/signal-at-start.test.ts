// A supervisor (systemd, a test, a rolling restart) may read the start-up announcement and send
// SIGTERM at once. The server, the worker and the simulators install their handlers before they
// announce, so that stop is graceful (exit 0), never a death by the signal.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freshPostgres } from './harness.js';
import { spawnNode } from './spawned.js';

const ROOT = join(import.meta.dirname, '../../..');
const PRELOAD = join(import.meta.dirname, 'fixtures/signal-at-announcement.mjs');

/** Runs `entry` until it exits, with a SIGTERM raised the instant it writes `text`; its exit code (null: killed by the signal). */
async function stoppedAtAnnouncement(
  entry: string,
  args: readonly string[],
  text: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const run = spawnNode(entry, { LOG_LEVEL: 'info', SIGNAL_AT_TEXT: text, ...env }, args, ['--import', PRELOAD]);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 120_000);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, output: run.output() };
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
      assert.equal(result.code, 0, result.output);
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
        assert.equal(result.code, 0, result.output);
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
      assert.equal(result.code, 0, result.output);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
