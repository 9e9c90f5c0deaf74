/**
 * `npm test` with filters (scripts/test.mjs): it runs the test files whose path contains a filter
 * and type-checks only their packages (each one's build with its references, and its check
 * configs), so one suite takes seconds, not the whole repository's type check. And the deadline
 * each test file process runs under (scripts/file-deadline.mjs).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';

const ROOT = new URL('../../../', import.meta.url).pathname;

function dryRun(...args: string[]): string[] {
  const run = spawnSync(process.execPath, ['scripts/test.mjs', '--dry-run', ...args], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim().split('\n');
}

it('a filtered run type-checks the packages of the files it runs, and only those', () => {
  assert.deepEqual(dryRun('packages/dir-lock'), [
    'tsc -b packages/dir-lock/tsconfig.json',
    'tsc -p packages/dir-lock/tsconfig.check.json',
    'packages/dir-lock/test/dir-lock.test.ts',
  ]);
  const two = dryRun('packages/server/test/ledger.test.ts', 'packages/merchant/test/cli.test.ts');
  assert.deepEqual(two.slice(0, 3), [
    'tsc -b packages/merchant/tsconfig.json packages/server/tsconfig.json',
    'tsc -p packages/merchant/tsconfig.test.json',
    'tsc -p packages/server/tsconfig.check.json',
  ]);
  assert.deepEqual(two.slice(3), ['packages/merchant/test/cli.test.ts', 'packages/server/test/ledger.test.ts']);
});

it('an unfiltered run type-checks everything: the whole build and every check config', () => {
  const lines = dryRun();
  assert.equal(lines[0], 'tsc -b');
  for (const config of ['packages/server/tsconfig.check.json', 'packages/portal/tsconfig.test.json']) {
    assert.ok(lines.includes(`tsc -p ${config}`), config);
  }
  assert.ok(lines.includes('packages/server/test/test-runner.test.ts'));
  // tools/ (the fault campaign) is tested and type-checked like a package.
  assert.ok(lines.includes('tsc -p tools/chaos/tsconfig.check.json'));
  assert.ok(lines.includes('tools/chaos/test/checker.test.ts'));
});

it('a filter on tools/chaos runs its tests and type-checks it', () => {
  assert.deepEqual(dryRun('tools/chaos'), [
    'tsc -p tools/chaos/tsconfig.check.json',
    'tools/chaos/test/checker.test.ts',
    'tools/chaos/test/schedule.test.ts',
  ]);
});

it('npm test leaves the end-to-end suites to npm run test:e2e; a filter names either kind', () => {
  const everyday = dryRun();
  const endToEnd = dryRun('--e2e');
  const files = (lines: string[]) => lines.filter((line) => line.endsWith('.test.ts'));
  for (const file of ['packages/server/test/channels-e2e.test.ts', 'packages/portal/test/portal.test.ts']) {
    assert.ok(files(endToEnd).includes(file), file);
    assert.ok(!files(everyday).includes(file), file);
  }
  assert.ok(!files(endToEnd).includes('packages/server/test/ledger.test.ts'));
  // Between them, every test file runs exactly once.
  const all = [...files(everyday), ...files(endToEnd)];
  assert.equal(new Set(all).size, all.length);
  assert.deepEqual(files(dryRun('channels-e2e')), ['packages/server/test/channels-e2e.test.ts']);
  // The end-to-end run type-checks the packages it runs, not the whole build.
  assert.ok(!endToEnd.includes('tsc -b'));
});

it(
  'a test file whose process hangs for good is killed with its processes and reported failed; the run goes on',
  { timeout: 60_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'paygate-deadline-'));
    try {
      // Blocked the way a deadlock in V8 blocks: the thread waits forever and no timer of the test
      // runner inside that process can fire. Before it blocks it starts a process of its own.
      writeFileSync(
        join(dir, 'hang.test.mjs'),
        `import { spawn } from 'node:child_process';
       import { writeFileSync } from 'node:fs';
       import { it } from 'node:test';
       it('blocks', () => {
         const started = spawn('sleep', ['600'], { stdio: 'ignore' });
         writeFileSync(${JSON.stringify(join(dir, 'started.pid'))}, String(started.pid));
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
       });`,
      );
      writeFileSync(join(dir, 'fine.test.mjs'), `import { it } from 'node:test'; it('passes', () => {});`);
      // Outside this test's own runner: a nested `node --test` must not see NODE_TEST_CONTEXT.
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_TEST_CONTEXT'));
      // Its own process group, so that however this test ends nothing it started outlives it.
      const runner = spawn(
        process.execPath,
        [
          join(ROOT, 'scripts/file-deadline.mjs'),
          process.execPath,
          '--test',
          '--test-reporter=tap',
          join(dir, 'hang.test.mjs'),
          join(dir, 'fine.test.mjs'),
        ],
        {
          cwd: dir,
          env: { ...env, PAYGATE_TEST_FILE_MINUTES: '0.05' },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        },
      );
      t.after(() => {
        try {
          process.kill(-(runner.pid as number), 'SIGKILL');
        } catch {
          // Ended, as it should have.
        }
      });
      const run = await finish(runner);
      assert.notEqual(run.code, 0);
      assert.match(
        run.stderr,
        /file-deadline: \S*hang\.test\.mjs ran for 0\.05 min .*SIGKILLed it and the 1 process it started/,
      );
      assert.match(run.stdout, /^not ok \d+ - \S*hang\.test\.mjs$/m);
      assert.match(run.stdout, /^# pass 1$/m);
      const started = Number(readFileSync(join(dir, 'started.pid'), 'utf8'));
      assert.ok(await dead(started), 'the process the hung file started is gone too');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** Waits for `child` to exit; its exit code and what it printed. */
function finish(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Whether process `pid` ends (gone, or a zombie nobody has reaped yet) within five seconds. */
async function dead(pid: number): Promise<boolean> {
  for (let tries = 0; tries < 100; tries++) {
    let state: string | undefined;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    } catch {
      return true;
    }
    if (state === 'Z') return true;
    await sleep(50);
  }
  return false;
}
