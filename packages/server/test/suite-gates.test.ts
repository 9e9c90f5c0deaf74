/**
 * The switches the README gives for `npm test` do what it says: PAYGATE_SKIP_BROWSER=1 skips
 * every browser suite (none tries to start Chromium), and under PAYGATE_REQUIRE_PYTHON=1 (set by
 * .ci/run) the Python reference client's suite runs or fails, never skips.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** Every test file of the repository that drives a browser. */
function browserSuites(): string[] {
  const files: string[] = [];
  for (const group of ['packages', 'examples']) {
    for (const name of readdirSync(join(ROOT, group))) {
      const dir = join(ROOT, group, name, 'test');
      let entries: string[];
      try {
        entries = readdirSync(dir);
      } catch {
        continue;
      }
      for (const entry of entries.filter((e) => e.endsWith('.test.ts'))) {
        const text = readFileSync(join(dir, entry), 'utf8');
        if (/^import [^;]* from '(playwright-core|\.\/browser\.js)';$/m.test(text)) files.push(join(dir, entry));
      }
    }
  }
  return files;
}

function nodeTest(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // TAP named: since Node 23 the default reporter is spec even when the output is a pipe.
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', '--test', '--test-reporter=tap', ...args],
      {
        cwd: ROOT,
        // NODE_TEST_CONTEXT would make the child a subtest reporter of this run instead of a runner.
        env: { ...process.env, NODE_TEST_CONTEXT: undefined, TEST_DATABASE_URL: undefined, ...env },
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

it('PAYGATE_SKIP_BROWSER=1 skips every browser suite: none starts Chromium', async () => {
  const files = browserSuites();
  assert.ok(files.length >= 4, files.join('\n'));
  for (const file of files) {
    assert.match(
      readFileSync(file, 'utf8'),
      /describe\(\s*['`][^'`]* in Chromium['`]/,
      `${file}: a suite "… in Chromium"`,
    );
  }
  const { code, output } = await nodeTest(['--test-name-pattern=in Chromium', ...files], {
    PAYGATE_SKIP_BROWSER: '1',
    CHROMIUM_PATH: '/nonexistent/chromium',
  });
  assert.equal(code, 0, output);
  assert.match(output, /^# fail 0$/m, output);
  const skipped = output.match(/# SKIP PAYGATE_SKIP_BROWSER=1: the browser \(Chromium\) tests are skipped/g) ?? [];
  assert.ok(skipped.length >= files.length, output);
});

it('under PAYGATE_REQUIRE_PYTHON=1 a Python without PyNaCl fails the Python suite; otherwise it is skipped', async () => {
  const suite = join(ROOT, 'examples/python/test/python.test.ts');
  const missing = { PAYGATE_PYTHON: '/nonexistent/python3', PAYGATE_SKIP_PYTHON: undefined };
  const skipped = await nodeTest([suite], { ...missing, PAYGATE_REQUIRE_PYTHON: undefined });
  assert.equal(skipped.code, 0, skipped.output);
  assert.match(skipped.output, /# SKIP \/nonexistent\/python3 lacks PyNaCl or cryptography/);
  const required = await nodeTest([suite], { ...missing, PAYGATE_REQUIRE_PYTHON: '1' });
  assert.notEqual(required.code, 0, required.output);
  assert.match(required.output, /^# fail [1-9]/m, required.output);
});
