/**
 * The operator command line (`npx paygate`) on an operator's mistake: one line on stderr,
 * `paygate: …`, a non-zero exit and no stack trace; `--debug` anywhere on the command line adds
 * the trace. A fault of ours says "internal error".
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateSigningKey } from '@paygate/protocol';
import { reportFailure } from '../src/cli/failure.js';
import { ConfigError } from '../src/config.js';
import { databases, startTestPlatform, type TestPlatform } from './harness.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const CLI = join(ROOT, 'packages/server/src/cli/main.ts');
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function paygate(args: string[], env: Record<string, string>): Promise<Run> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PAYGATE_') && name !== 'DATABASE_URL'),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', CLI, ...args],
      { cwd: ROOT, env: { ...base, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const STACK_FRAME = /^\s+at /m;

/**
 * Asserts the mistake is reported in one line without a trace, and with the trace under --debug
 * (placed first, in the middle or last, by `row`).
 */
async function assertOneLine(args: string[], env: Record<string, string>, expected: RegExp, row: number) {
  const what = args.join(' ');
  const plain = await paygate(args, env);
  assert.notEqual(plain.code, 0, `${what}: exit code`);
  assert.ok(plain.stderr.endsWith('\n'), `${what}: ${plain.stderr}`);
  const lines = plain.stderr.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${plain.stderr}`);
  assert.match(lines[0] as string, /^paygate: /, what);
  assert.doesNotMatch(plain.stderr, /internal error/, what);
  assert.doesNotMatch(plain.stderr, STACK_FRAME, what);
  assert.match(plain.stderr, expected, what);
  assert.equal(plain.stdout, '', `${what}: nothing on stdout`);

  const at = [0, Math.floor(args.length / 2), args.length][row % 3] as number;
  const debugArgs = [...args.slice(0, at), '--debug', ...args.slice(at)];
  const debug = await paygate(debugArgs, env);
  assert.equal(debug.code, plain.code, `${debugArgs.join(' ')}: same exit code`);
  assert.equal(debug.stderr.split('\n')[0], lines[0], `${debugArgs.join(' ')}: same first line`);
  assert.match(debug.stderr, STACK_FRAME, `${debugArgs.join(' ')}: the trace, got:\n${debug.stderr}`);
}

for (const database of databases()) {
  describe(`paygate: a mistake is one line on stderr, --debug shows the trace (${database})`, () => {
    let platform: TestPlatform;
    let dataDir: string;
    let env: Record<string, string>;
    const publicKey = generateSigningKey().publicKey.toString('base64');

    before(async () => {
      platform = await startTestPlatform({ database });
      dataDir = mkdtempSync(join(tmpdir(), 'paygate-cli-errors-'));
      env = { PAYGATE_DATA_DIR: dataDir, PAYGATE_URL: platform.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN };
    });

    after(async () => {
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const classes: Record<string, () => Array<[string[], Record<string, string>, RegExp]>> = {
      'missing file': () => [
        [
          ['merchant', 'create', '--name', 'Shop', '--public-key', `@${join(dataDir, 'nope.pem')}`, '--json'],
          env,
          /cannot read the public key file .*nope\.pem/,
        ],
        [
          ['merchant', 'add-key', '--access-key', 'ak_test_nope', '--public-key', `@${dataDir}`],
          env,
          /cannot read the public key file .*EISDIR/,
        ],
      ],
      'bad key': () => [
        [['merchant', 'create', '--name', 'Shop', '--public-key', 'not-a-key', '--json'], env, /VALIDATION_FAILED/],
        [['merchant', 'keys', '--access-key', 'ak_test_nope', '--json'], env, /NOT_FOUND/],
        [['merchant', 'list'], { ...env, PAYGATE_ADMIN_TOKEN: 'not-the-token-0123456789abcdef' }, /UNAUTHORIZED/],
        [['keys', 'retire', '--key-id', 'bk_test_nope'], env, /: /],
      ],
      'unreachable server': () => [
        [
          ['merchant', 'create', '--name', 'Shop', '--public-key', publicKey, '--json'],
          { ...env, PAYGATE_URL: 'http://127.0.0.1:1' },
          /cannot reach the Paygate server at http:\/\/127\.0\.0\.1:1/,
        ],
        [
          ['migrate'],
          { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/paygate' },
          /the database is unavailable: .*ECONNREFUSED/,
        ],
      ],
      'wrong flag': () => [
        [
          ['merchant', 'list', '--nme', 'Shop'],
          env,
          /^paygate: Unknown option '--nme'; paygate --help shows the usage$/m,
        ],
        [['merchant', 'create', '--public-key', publicKey, '--name'], env, /--name <value>' argument missing/],
        [['merchant', 'create', '--public-key', publicKey], env, /^paygate: --name is required; paygate --help/],
        [['keys', 'rotate', '--kind', 'purple'], env, /VALIDATION_FAILED/],
      ],
      'unknown command': () => [
        [['frobnicate'], env, /^paygate: unknown command: frobnicate; paygate --help lists the commands$/m],
        [['merchant', 'frobnicate', '--json'], env, /unknown command: merchant frobnicate/],
      ],
      'bad JSON argument': () => [
        [['merchant', 'list', '--json=yes'], env, /Option '--json' does not take an argument/],
        [['keys', 'list', '--json=1'], env, /'--json' does not take an argument/],
      ],
      'bad env config': () => [
        [['merchant', 'list'], { ...env, PORT: 'eighty' }, /^paygate: invalid configuration: .*PORT/],
        [['merchant', 'list'], { ...env, PAYGATE_ENV: 'staging' }, /invalid configuration: .*PAYGATE_ENV/],
        [['merchant', 'list'], { ...env, PAYGATE_URL: 'not a url' }, /cannot reach the Paygate server at not a url/],
        [['worker'], { PAYGATE_DATA_DIR: dataDir }, /^paygate: paygate worker needs DATABASE_URL/],
      ],
    };

    for (const [name, rows] of Object.entries(classes)) {
      it(name, async () => {
        // Rows in parallel: each is two short processes.
        await Promise.all(rows().map(([args, rowEnv, expected], row) => assertOneLine(args, rowEnv, expected, row)));
      });
    }
  });
}

describe('paygate: a fault of ours is told apart from a mistake', () => {
  it('says "internal error" and points at --debug, which adds the trace', () => {
    const report = (error: unknown, debug: boolean) => {
      let text = '';
      const code = reportFailure(error, debug, (chunk) => void (text += chunk));
      return { code, text };
    };
    const ours = report(new RangeError('offset out of range\nin the middle'), false);
    assert.equal(ours.code, 1);
    assert.equal(
      ours.text,
      'paygate: internal error: offset out of range in the middle (run with --debug for the trace)\n',
    );
    const traced = report(new RangeError('offset out of range'), true);
    assert.match(traced.text, /^paygate: internal error: offset out of range\nRangeError: offset out of range\n\s+at /);

    const mistake = report(new ConfigError('invalid configuration: PORT: expected a number'), false);
    assert.deepEqual(mistake, { code: 1, text: 'paygate: invalid configuration: PORT: expected a number\n' });
  });
});
