// The production walkthroughs run as written (issue 39, point 1): the shell blocks of
// docs/channels.md's walkthroughs (psp, Pix, SEPA) are taken from the document and run, as printed, by bash in
// a temporary directory that holds what the quick start left there (its keys, its onboarding file,
// its environment), against the processes they start. Only the way `npx` and `npm` find the
// repository's programs is the test's (small shims on PATH run them from the sources); every
// command line is the document's. It ends with a webhook the merchant's https receiver verified.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '../../..');

/** The fenced `sh` blocks of one section of a document (from its heading to the next heading). */
export function shellBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section ${heading}`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/\n#{2,6} /);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

/**
 * `npx` and `npm` for the walkthrough: the commands the documents use, run from the repository's
 * sources (a fresh checkout runs them from its build; tests run the sources, as the other
 * process tests do). Anything else is refused loudly, so a document cannot use a command the test
 * does not know.
 */
function shims(dir: string): void {
  const node = `"${process.execPath}" --conditions=source --import "${join(ROOT, 'node_modules/tsx/dist/loader.mjs')}"`;
  writeFileSync(
    join(dir, 'npx'),
    `#!/bin/sh
case "$1" in
  paygate-merchant) shift; exec ${node} "${ROOT}/packages/merchant/src/cli/main.ts" "$@" ;;
  paygate) shift; exec ${node} "${ROOT}/packages/server/src/cli/main.ts" "$@" ;;
  paygate-pix) shift; exec ${node} "${ROOT}/packages/pix-simulator/src/main.ts" "$@" ;;
  paygate-psp) shift; exec ${node} "${ROOT}/packages/psp-simulator/src/main.ts" "$@" ;;
  paygate-bank) shift; exec ${node} "${ROOT}/packages/bank-simulator/src/main.ts" "$@" ;;
  *) echo "walkthrough shim: npx $* is not known to the test" >&2; exit 127 ;;
esac
`,
  );
  writeFileSync(
    join(dir, 'npm'),
    `#!/bin/sh
case "$*" in
  start) exec ${node} "${ROOT}/packages/server/src/main.ts" ;;
  ci|"run build") exit 0 ;;
  *) echo "walkthrough shim: npm $* is not known to the test" >&2; exit 127 ;;
esac
`,
  );
  chmodSync(join(dir, 'npx'), 0o755);
  chmodSync(join(dir, 'npm'), 0o755);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** What a walkthrough's shell printed, and the logs its background servers wrote. */
interface Ran {
  readonly output: () => string;
  readonly logs: () => string;
}

describe('docs/channels.md: the production walkthroughs, as printed, after the quick start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-walkthrough-'));
  const work = join(dir, 'shop');
  const bin = join(dir, 'bin');
  const groups: number[] = [];
  const document = readFileSync(join(ROOT, 'docs/channels.md'), 'utf8');
  // What the quick start left in its terminal's directory, which no walkthrough may touch.
  const quickStart = {
    'merchant-keys/private.pem': 'the quick start private key\n',
    'merchant-keys/public.pem': 'the quick start public key\n',
    'merchant.json': '{"accessKey":"ak_test_quickstart"}\n',
  };

  before(() => {
    mkdirSync(join(work, 'merchant-keys'), { recursive: true });
    // The quick start's terminal is in a checkout: the repository's .gitignore, committed.
    writeFileSync(join(work, '.gitignore'), readFileSync(join(ROOT, '.gitignore')));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: work, stdio: 'pipe' });
    git('init', '--quiet');
    git('add', '.gitignore');
    git(
      '-c',
      'user.name=walkthrough',
      '-c',
      'user.email=walkthrough@example.com',
      'commit',
      '--quiet',
      '-m',
      'checkout',
    );
    mkdirSync(bin);
    shims(bin);
    for (const [file, text] of Object.entries(quickStart)) writeFileSync(join(work, file), text);
  });

  after(() => {
    // Everything a walkthrough left running is in the process group of the shell that ran it.
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the section's shell blocks as one bash script in the quick start's directory and terminal. */
  async function walkthrough(heading: string, blocks: number, ports: number[], logFiles: string[]): Promise<Ran> {
    const busy: number[] = [];
    for (const port of ports) if (!(await portFree(port))) busy.push(port);
    assert.deepEqual(busy, [], `the walkthrough's ports must be free: ${busy.join(', ')} in use`);
    const script = shellBlocks(document, heading);
    assert.equal(script.length, blocks, `${heading} has ${blocks} shell blocks`);
    const file = `${ports[0]}.sh`;
    writeFileSync(join(work, file), script.join('\n'));
    const shell = spawn('bash', ['-e', file], {
      cwd: work,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PATH: `${bin}:${process.env.PATH}`,
        // The quick start's terminal: its exports are still set.
        PAYGATE_URL: 'http://127.0.0.1:8080',
        PAYGATE_PRIVATE_KEY: 'merchant-keys/private.pem',
        PAYGATE_ONBOARDING: 'merchant.json',
        PAYGATE_DATA_DIR: '',
        DATABASE_URL: '',
        PAYGATE_ENV: '',
        PAYGATE_PUBLIC_URL: '',
        PIX_DATA_DIR: '',
        PSP_DATA_DIR: '',
        BANK_DATA_DIR: '',
        LOG_LEVEL: 'info',
      },
    });
    groups.push(shell.pid as number);
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    shell.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const status = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
    const logs = () =>
      logFiles
        .map((log) => {
          try {
            return `--- ${log}\n${readFileSync(join(work, log), 'utf8').slice(-3000)}`;
          } catch {
            return `--- ${log}: none`;
          }
        })
        .join('\n');
    assert.equal(status, 0, `the walkthrough failed:\n${output}\n${logs()}`);
    for (const log of logFiles.filter((name) => name.startsWith('platform'))) {
      assert.doesNotMatch(readFileSync(join(work, log), 'utf8'), /"level":(50|60)/, `${log} has no error`);
    }
    return { output: () => output, logs };
  }

  /** Waits for the receiver to have printed `pattern`. */
  async function printed(ran: Ran, pattern: RegExp): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!pattern.test(ran.output())) {
      assert.ok(Date.now() < deadline, `not printed: ${pattern}\n${ran.output()}\n${ran.logs()}`);
      await sleep(200);
    }
  }

  const fingerprintOf = (output: string) => /SHA-256 fingerprint ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})/.exec(output)?.[1];
  let receiverFingerprint: string | undefined;

  function quickStartUntouched(): void {
    for (const [file, text] of Object.entries(quickStart))
      assert.equal(readFileSync(join(work, file), 'utf8'), text, file);
  }

  it('the psp walkthrough: a payment, a payout and its return, each webhook verified over https', async () => {
    const ran = await walkthrough(
      '## A production walkthrough with `npx paygate-psp`',
      3,
      [8082, 9100, 4444],
      ['platform-live.log', 'psp-live.log'],
    );
    const output = ran.output();
    assert.match(
      output,
      /certificate .*merchant-tls\/cert\.pem \(self-signed\), SHA-256 fingerprint ([0-9A-F]{2}:){31}[0-9A-F]{2}/,
    );
    assert.match(output, /listening on https:\/\/127\.0\.0\.1:4444/);
    receiverFingerprint = fingerprintOf(output);
    assert.match(output, /"status": "REFUNDED"/);
    await printed(ran, /#\d+ verified PAYMENT SUCCEEDED evt_\S+: order P\S+ \(L-1\), BRL 10\.00/);
    await printed(ran, /#\d+ verified PAYOUT SUCCEEDED evt_\S+: order W\S+ \(L-W1\), BRL 5\.00/);
    await printed(ran, /#\d+ verified PAYOUT REFUNDED evt_\S+: order W\S+ \(L-W1\), BRL 5\.00/);
    assert.equal(statSync(join(work, 'live-master.key')).mode & 0o777, 0o600);
    quickStartUntouched();
  });

  it('the Pix walkthrough, after it in the same directory: a Pix paid at the provider, its webhook verified over https', async () => {
    const ran = await walkthrough(
      '### A production walkthrough with `npx paygate-pix`',
      2,
      [8081, 9200, 9201, 4443],
      ['platform-pix-live.log', 'pix-live.log'],
    );
    const output = ran.output();
    // The receiver's certificate of the psp walkthrough is reused: the same fingerprint.
    assert.match(
      output,
      /certificate .*merchant-tls\/cert\.pem \(self-signed\), SHA-256 fingerprint ([0-9A-F]{2}:){31}[0-9A-F]{2}/,
    );
    assert.match(output, /listening on https:\/\/127\.0\.0\.1:4443/);
    if (receiverFingerprint) assert.equal(fingerprintOf(output), receiverFingerprint);
    assert.match(output, /"status": "SUCCEEDED"/);
    assert.match(output, /"documentNumber": "01234567890"/);
    await printed(ran, /#1 verified PAYMENT SUCCEEDED evt_\S+: order P\S+ \(PIX-1\), BRL 10\.00/);
    assert.equal(statSync(join(work, 'pix-live-master.key')).mode & 0o777, 0o600);
    quickStartUntouched();
  });

  it('the SEPA walkthrough, after them in the same directory: funded by a bank transfer, payouts by notification, statement and instant, each webhook verified', async () => {
    const ran = await walkthrough(
      '### A production walkthrough with `npx paygate-bank`',
      4,
      [8083, 2222, 9400, 4445],
      ['platform-bank-live.log', 'bank-live.log'],
    );
    const output = ran.output();
    assert.match(output, /listening on https:\/\/127\.0\.0\.1:4445/);
    if (receiverFingerprint) assert.equal(fingerprintOf(output), receiverFingerprint);
    assert.match(output, /"bankTransfer": \{/);
    assert.match(output, /"reference": "RF\d{20}"/);
    assert.match(output, /"name": "Ana Souza"/);
    // paygate channels files: the bank's intermediate and final statuses; health: the next cut-off.
    assert.match(output, /block ACTC, ACTC, block ACSP, ACSC/);
    assert.match(output, /next cut-off: \d{4}-\d{2}-\d{2} 15:00 Europe\/Brussels/);
    await printed(ran, /#\d+ verified PAYMENT SUCCEEDED evt_\S+: order P\S+ \(B-1\), EUR 100\.00/);
    await printed(ran, /#\d+ verified PAYOUT SUCCEEDED evt_\S+: order W\S+ \(B-W1\), EUR 12\.30/);
    await printed(ran, /#\d+ verified PAYOUT SUCCEEDED evt_\S+: order W\S+ \(B-W2\), EUR 20\.00/);
    await printed(ran, /#\d+ verified PAYOUT SUCCEEDED evt_\S+: order W\S+ \(B-W3\), EUR 7\.50/);
    assert.equal(statSync(join(work, 'bank-live-master.key')).mode & 0o777, 0o600);
    const bank = JSON.parse(readFileSync(join(work, 'channels-bank-live.json'), 'utf8')) as {
      channels: { instant?: boolean; cutOffs?: string[] }[];
    };
    assert.deepEqual([bank.channels[0]?.instant, bank.channels[0]?.cutOffs], [true, ['15:00']]);
    quickStartUntouched();
  });

  it("git leaves every file the quick start and the walkthroughs wrote to the checkout's .gitignore: keys, certificates, channels files, master keys, data", () => {
    const status = execFileSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all'], {
      cwd: work,
      encoding: 'utf8',
    });
    const lines = status.split('\n').filter((line) => line !== '');
    // The shell scripts are the test's own (the document's blocks, written out to run them).
    const untracked = lines.filter((line) => line.startsWith('?? ') && !/^\?\? \d+\.sh$/.test(line));
    assert.deepEqual(untracked, [], `files a walkthrough wrote that git would add:\n${untracked.join('\n')}`);
    const ignored = lines.filter((line) => line.startsWith('!! ')).map((line) => line.slice(3));
    for (const secret of [
      'merchant-keys/private.pem',
      'merchant.json',
      'live-master.key',
      'pix-live-master.key',
      'bank-live-master.key',
      'merchant-tls/key.pem',
      'merchant-tls/cert.pem',
      'channels-bank-live.json',
    ]) {
      assert.ok(
        ignored.some((path) => path === secret || secret.startsWith(path.endsWith('/') ? path : `${path}/`)),
        `${secret} is not among git's ignored files:\n${ignored.join('\n')}`,
      );
    }
    assert.ok(ignored.length >= 9);
    // The secrets the documents name outside the walkthroughs (the SEPA set-up's key pair, the Pix
    // client's certificate and key, a channels file): ignored too.
    const documented = ['keys/bank_ed25519', 'keys/bank_ed25519.pub', 'client-key.pem', 'client.pem', 'channels.json'];
    const checked = execFileSync('git', ['check-ignore', ...documented], { cwd: work, encoding: 'utf8' });
    assert.deepEqual(checked.trim().split('\n'), documented);
  });
});

describe('PAYGATE_WEBHOOK_EXTRA_CA', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-extra-ca-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is off unless set, and a file without a certificate stops the start in one line', async () => {
    const { ConfigError, parseConfig } = await import('../src/config.js');
    assert.equal(parseConfig({}).webhookExtraCa, undefined);
    const empty = join(dir, 'empty.pem');
    writeFileSync(empty, 'not a certificate\n');
    assert.throws(
      () => parseConfig({ PAYGATE_WEBHOOK_EXTRA_CA: empty }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          `invalid configuration: PAYGATE_WEBHOOK_EXTRA_CA ${empty} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
    assert.throws(
      () => parseConfig({ PAYGATE_WEBHOOK_EXTRA_CA: join(dir, 'missing.pem') }),
      /cannot be read \(ENOENT\)/,
    );
  });
});
