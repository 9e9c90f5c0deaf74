/**
 * The summary `npm test` prints after its TAP stream (scripts/test-summary-reporter.mjs): a test
 * file whose process dies mid-run is named with how it ended and the last lines it wrote to
 * stderr, since a CI log may keep only the summary.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

const REPORTER = new URL('../../../scripts/test-summary-reporter.mjs', import.meta.url).pathname;

it('a test file killed mid-run is reported with its signal and its last stderr lines; other failures as before', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-summary-'));
  try {
    writeFileSync(
      join(dir, 'killed.test.mjs'),
      `import { it } from 'node:test';
it('first', () => { console.error('the first test ran'); });
it('second', async () => { console.error('about to be killed'); process.kill(process.pid, 'SIGKILL'); });
it('third', () => {});
`,
    );
    writeFileSync(
      join(dir, 'failing.test.mjs'),
      `import { it } from 'node:test';
it('fails', () => { throw new Error('plainly'); });
`,
    );
    const results = join(dir, 'results.jsonl');
    const run = spawnSync(
      process.execPath,
      [
        '--test',
        `--test-reporter=${REPORTER}`,
        `--test-reporter-destination=${results}`,
        'killed.test.mjs',
        'failing.test.mjs',
      ],
      { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } }, // not as a child of this run's runner
    );
    assert.notEqual(run.status, 0);
    const lines = readFileSync(results, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const killed = lines.find((line) => line.name === 'killed.test.mjs');
    assert.deepEqual(killed, {
      file: join(dir, 'killed.test.mjs'),
      name: 'killed.test.mjs',
      status: 'fail',
      failureType: 'testCodeFailure',
      error: 'test failed (signal SIGKILL)',
      stderr: ['the first test ran', 'about to be killed'],
    });
    assert.deepEqual(
      lines.find((line) => line.name === 'fails'),
      {
        file: join(dir, 'failing.test.mjs'),
        name: 'fails',
        status: 'fail',
        failureType: 'testCodeFailure',
        error: 'plainly',
      },
    );
    assert.ok(!lines.some((line) => line.name === 'third'), 'the test after the kill never ran');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
