/**
 * `npm test` with filters (scripts/test.mjs): it runs the test files whose path contains a filter
 * and type-checks only their packages (each one's build with its references, and its check
 * configs), so one suite takes seconds, not the whole repository's type check.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
