/**
 * `paygate-merchant` on a user's mistake: one line on stderr, `paygate-merchant: …`, a non-zero
 * exit and no stack trace; `--debug` anywhere on the command line adds the trace. And `keygen`'s
 * care for the private key: created 0600 (a --force replacement too) and a warning when it lands
 * in a git work tree that does not ignore it.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CliError } from '../src/cli/config.js';
import { reportFailure } from '../src/cli/failure.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const MERCHANT = join(ROOT, 'packages/merchant/src/cli/main.ts');
const TSX = ['--conditions=source', '--import', 'tsx'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without any PAYGATE_ setting of the machine running the tests. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PAYGATE_')));
  return { ...env, ...extra };
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...TSX, MERCHANT, ...args],
      { cwd: ROOT, env: cleanEnv(env) },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const STACK_FRAME = /^\s+at /m;

/**
 * Asserts the mistake is reported in one line without a trace, and with the trace under --debug
 * (placed first, in the middle or last, by `row`).
 */
async function assertOneLine(
  args: string[],
  env: Record<string, string>,
  expected: RegExp,
  row: number,
): Promise<void> {
  const what = args.join(' ');
  const plain = await run(args, env);
  assert.notEqual(plain.code, 0, `${what}: exit code`);
  assert.ok(plain.stderr.endsWith('\n'), `${what}: ${plain.stderr}`);
  const lines = plain.stderr.slice(0, -1).split('\n');
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${plain.stderr}`);
  assert.match(lines[0] as string, /^paygate-merchant: /, what);
  assert.doesNotMatch(plain.stderr, /internal error/, what);
  assert.doesNotMatch(plain.stderr, STACK_FRAME, what);
  assert.match(plain.stderr, expected, what);

  const at = [0, Math.floor(args.length / 2), args.length][row % 3] as number;
  const debugArgs = [...args.slice(0, at), '--debug', ...args.slice(at)];
  const debug = await run(debugArgs, env);
  assert.equal(debug.code, plain.code, `${debugArgs.join(' ')}: same exit code`);
  assert.equal(debug.stderr.split('\n')[0], lines[0], `${debugArgs.join(' ')}: same first line`);
  assert.match(debug.stderr, STACK_FRAME, `${debugArgs.join(' ')}: the trace, got:\n${debug.stderr}`);
}

describe('paygate-merchant: a mistake is one line on stderr, --debug shows the trace', () => {
  let dir: string;
  let keyFile: string;
  let publicKey: string;
  let busy: Server;
  let busyPort: number;
  let config: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paygate-merchant-errors-'));
    const keygen = await run(['keygen', '--out', join(dir, 'keys')]);
    assert.equal(keygen.code, 0, keygen.stderr);
    keyFile = join(dir, 'keys/private.pem');
    publicKey = keygen.stdout.trim();
    writeFileSync(join(dir, 'garbage.pem'), 'not a key\n');
    writeFileSync(join(dir, 'bad.json'), '{"merchantOrderNo": ');
    writeFileSync(join(dir, 'onboarding-bad.json'), '{"accessKey": 1}');
    writeFileSync(join(dir, 'headers.http'), 'POST /webhook HTTP/1.1\r\ncontent-type: application/json\r\n\r\n');
    writeFileSync(join(dir, 'body.json'), '{}');
    config = [
      '--access-key',
      'ak_test_abcdefghijklmnopqrstuv',
      '--body-key-id',
      'bk_test_1',
      '--body-public-key',
      // Any 32 bytes are a usable X25519 public key except the few small-order points.
      randomBytes(32).toString('base64'),
    ];
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });

  after(() => {
    busy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const balances = () => ['request', 'GET', '/api/v1/balances', '--url', 'http://127.0.0.1:1'];
  const webhookKeys = () => ['--webhook-keys', JSON.stringify([{ keyid: 'wk_test_1', publicKey }])];

  const classes: Record<string, () => Array<[string[], Record<string, string>, RegExp]>> = {
    'missing file': () => [
      [
        [...balances(), ...config, '--private-key', join(dir, 'nope.pem')],
        {},
        /cannot read private key file .*nope\.pem/,
      ],
      [
        [
          'request',
          'POST',
          '/api/v1/payments',
          '--json',
          `@${join(dir, 'nope.json')}`,
          '--private-key',
          keyFile,
          ...config,
        ],
        {},
        /cannot read .*nope\.json/,
      ],
      [
        ['verify-webhook', '--headers', join(dir, 'nope.http'), '--body', join(dir, 'body.json'), ...webhookKeys()],
        {},
        /cannot read the captured webhook/,
      ],
      [[...balances(), '--onboarding', join(dir, 'nope-onboarding.json')], {}, /cannot read onboarding file/],
      [['keygen', '--out', join(dir, 'garbage.pem')], {}, /garbage\.pem/],
    ],
    'bad key': () => [
      [[...balances(), ...config, '--private-key', join(dir, 'garbage.pem')], {}, /privateKey: /],
      [
        [...balances(), ...config, '--private-key', join(dir, 'keys/public.pem')],
        {},
        /privateKey: this is a public key \(a PEM "PUBLIC KEY" block\); give the private key instead, the private\.pem/,
      ],
      [
        [
          'request',
          'GET',
          '/api/v1/balances',
          '--url',
          'http://127.0.0.1:1/api/v1',
          ...config,
          '--private-key',
          keyFile,
        ],
        {},
        /baseUrl: http:\/\/127\.0\.0\.1:1\/api\/v1 ends in \/api\/v1, .*without it: http:\/\/127\.0\.0\.1:1$/m,
      ],
      [
        [...balances(), '--private-key', keyFile, ...config.slice(0, 4), '--body-public-key', 'nope'],
        {},
        /bodyKey\.publicKey: /,
      ],
      [
        [...balances(), '--private-key', keyFile, '--access-key', 'sk_nope', ...config.slice(2)],
        {},
        /accessKey: expected ak_test_/,
      ],
      [
        ['listen', '--port', '0', '--webhook-keys', '[{"keyid":"wk_test_1","publicKey":"short"}]'],
        {},
        /webhookKeys\[0\]\.publicKey: /,
      ],
    ],
    'unreachable server': () => [
      [[...balances(), '--private-key', keyFile, ...config], {}, /no answer from the platform after 1 attempt/],
      [['listen', '--port', String(busyPort), ...webhookKeys()], {}, /EADDRINUSE/],
    ],
    'wrong flag': () => [
      [['request', 'GET', '/api/v1/balances', '--nope'], {}, /Unknown option '--nope'.*paygate-merchant --help/],
      [['keygen', '--out'], {}, /--out.*argument missing/],
      [['listen', '--port', 'eighty'], {}, /listen: /],
      [['request', 'DELETE', '/api/v1/payments'], {}, /METHOD is GET or POST/],
      [['verify-webhook', '--body', join(dir, 'body.json')], {}, /needs --headers FILE and --body FILE/],
    ],
    'unknown command': () => [
      [['frobnicate'], {}, /^paygate-merchant: unknown command: frobnicate; paygate-merchant --help lists/],
      [['reqest', 'GET', '/api/v1/balances'], {}, /unknown command: reqest/],
    ],
    'bad JSON argument': () => [
      [
        ['request', 'POST', '/api/v1/payments', '--json', '{not json', '--private-key', keyFile, ...config],
        {},
        /--json is not valid JSON/,
      ],
      [
        [
          'request',
          'POST',
          '/api/v1/payments',
          '--json',
          `@${join(dir, 'bad.json')}`,
          '--private-key',
          keyFile,
          ...config,
        ],
        {},
        /--json is not valid JSON/,
      ],
      [['listen', '--port', '0', '--webhook-keys', 'nope'], {}, /the webhook keys is not valid JSON/],
      [['listen', '--port', '0', '--webhook-keys', '[]'], {}, /must be a JSON list/],
    ],
    'bad env config': () => [
      [balances(), { PAYGATE_PRIVATE_KEY: join(dir, 'nope.pem'), PAYGATE_ONBOARDING: '' }, /missing configuration/],
      [
        ['request', 'GET', '/api/v1/balances'],
        {
          PAYGATE_URL: 'not a url',
          PAYGATE_PRIVATE_KEY: keyFile,
          PAYGATE_ACCESS_KEY: config[1] as string,
          PAYGATE_BODY_KEY_ID: 'bk_test_1',
          PAYGATE_BODY_PUBLIC_KEY: config[5] as string,
        },
        /baseUrl: /,
      ],
      [
        ['request', 'GET', '/api/v1/balances', ...config],
        { PAYGATE_PRIVATE_KEY: join(dir, 'nope.pem') },
        /cannot read private key file/,
      ],
      [
        ['verify-webhook', '--headers', join(dir, 'headers.http'), '--body', join(dir, 'body.json')],
        { PAYGATE_WEBHOOK_KEYS: '{' },
        /the webhook keys is not valid JSON/,
      ],
      [
        balances(),
        { PAYGATE_ONBOARDING: join(dir, 'onboarding-bad.json') },
        /onboarding file .*onboarding-bad\.json: /,
      ],
    ],
  };

  for (const [name, rows] of Object.entries(classes)) {
    it(name, async () => {
      // Rows in parallel: each is two short processes.
      await Promise.all(rows().map(([args, env, expected], row) => assertOneLine(args, env, expected, row)));
    });
  }
});

describe('paygate-merchant: a fault of ours is told apart from a mistake', () => {
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
      'paygate-merchant: internal error: offset out of range in the middle (run with --debug for the trace)\n',
    );
    const traced = report(new RangeError('offset out of range'), true);
    assert.match(
      traced.text,
      /^paygate-merchant: internal error: offset out of range\nRangeError: offset out of range\n\s+at /,
    );

    const mistake = report(new CliError('--now is Unix seconds', 2), false);
    assert.deepEqual(mistake, { code: 2, text: 'paygate-merchant: --now is Unix seconds\n' });
  });
});

describe('paygate-merchant keygen and the private key', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'paygate-keygen-'));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('--force writes a new file (0600) and never the new key into the old one, whatever its mode', async () => {
    const keys = join(dir, 'force');
    mkdirSync(keys);
    writeFileSync(join(keys, 'private.pem'), 'old key\n', { mode: 0o644 });
    // A second name for the old file: an in-place rewrite would show through it.
    linkSync(join(keys, 'private.pem'), join(dir, 'old-link.pem'));

    const refused = await run(['keygen', '--out', keys]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /exists already; pass --force/);

    const forced = await run(['keygen', '--out', keys, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(statSync(join(keys, 'private.pem')).mode & 0o777, 0o600);
    assert.match(readFileSync(join(keys, 'private.pem'), 'utf8'), /BEGIN PRIVATE KEY/);
    assert.equal(readFileSync(join(dir, 'old-link.pem'), 'utf8'), 'old key\n');
    assert.notEqual(statSync(join(keys, 'private.pem')).ino, statSync(join(dir, 'old-link.pem')).ino);
  });

  it('warns when the key lands in a git work tree that does not ignore it, and not when it is ignored', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, '.gitignore'), 'ignored-keys/\n');

    const exposed = await run(['keygen', '--out', join(repo, 'keys')]);
    assert.equal(exposed.code, 0, exposed.stderr);
    assert.match(exposed.stderr, /warning: .*private\.pem is inside a git work tree and not ignored/);
    assert.equal(statSync(join(repo, 'keys/private.pem')).mode & 0o777, 0o600);

    const ignored = await run(['keygen', '--out', join(repo, 'ignored-keys')]);
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.doesNotMatch(ignored.stderr, /warning/);

    const outside = await run(['keygen', '--out', join(dir, 'no-repo')]);
    assert.equal(outside.code, 0, outside.stderr);
    assert.doesNotMatch(outside.stderr, /warning/);
  });
});
