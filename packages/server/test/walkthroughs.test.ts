// The production walkthroughs run as written (issue 39, point 1): the shell blocks of
// docs/channels.md's Pix walkthrough are taken from the document and run, as printed, by bash in
// a temporary directory that holds what the quick start left there (its keys, its onboarding file,
// its environment), against the processes they start. Only the way `npx` and `npm` find the
// repository's programs is the test's (small shims on PATH run them from the sources); every
// command line is the document's. It ends with a webhook the merchant's https receiver verified.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';

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

describe('docs/channels.md: the Pix production walkthrough, as printed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-walkthrough-'));
  const work = join(dir, 'shop');
  const bin = join(dir, 'bin');
  let group: number | undefined;
  after(() => {
    // Everything the walkthrough left running is in the process group of the shell that ran it.
    if (group !== undefined) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs from the quick start terminal and ends with a verified webhook', async () => {
    const ports = [8081, 9200, 9201, 4443];
    const busy: number[] = [];
    for (const port of ports) if (!(await portFree(port))) busy.push(port);
    assert.deepEqual(busy, [], `the walkthrough's ports must be free: ${busy.join(', ')} in use`);

    const blocks = shellBlocks(
      readFileSync(join(ROOT, 'docs/channels.md'), 'utf8'),
      '### A production walkthrough with `npx paygate-pix`',
    );
    assert.equal(blocks.length, 2, 'the walkthrough has its two shell blocks');
    mkdirSync(work, { recursive: true });
    mkdirSync(bin);
    shims(bin);
    // What the quick start left in its terminal's directory, which the walkthrough must not touch.
    mkdirSync(join(work, 'merchant-keys'));
    const quickStart = {
      'merchant-keys/private.pem': 'the quick start private key\n',
      'merchant-keys/public.pem': 'the quick start public key\n',
      'merchant.json': '{"accessKey":"ak_test_quickstart"}\n',
    };
    for (const [file, text] of Object.entries(quickStart)) writeFileSync(join(work, file), text);
    writeFileSync(join(work, 'walkthrough.sh'), blocks.join('\n'));

    const shell = spawn('bash', ['-e', 'walkthrough.sh'], {
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
        LOG_LEVEL: 'info',
        PIX_DATA_DIR: '',
        PAYGATE_PUBLIC_URL: '',
      },
    });
    group = shell.pid;
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    shell.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const status = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
    const logs = () =>
      ['platform-pix-live.log', 'pix-live.log']
        .map((file) => {
          try {
            return `--- ${file}\n${readFileSync(join(work, file), 'utf8').slice(-3000)}`;
          } catch {
            return `--- ${file}: none`;
          }
        })
        .join('\n');
    assert.equal(status, 0, `the walkthrough failed:\n${output}\n${logs()}`);

    // The receiver: https with its certificate made into merchant-tls/ and its fingerprint printed.
    assert.match(
      output,
      /certificate .*merchant-tls\/cert\.pem \(self-signed\), SHA-256 fingerprint ([0-9A-F]{2}:){31}[0-9A-F]{2}/,
    );
    assert.match(output, /listening on https:\/\/127\.0\.0\.1:4443/);
    // The payment settled through the provider, with the payer it reported.
    assert.match(output, /"status": "SUCCEEDED"/);
    assert.match(output, /"documentNumber": "01234567890"/);
    // ... and its webhook reached the receiver over https and was verified there.
    const deadline = Date.now() + 30_000;
    while (!/#1 verified PAYMENT SUCCEEDED evt_\S+: order P\S+ \(PIX-1\), BRL 10\.00/.test(output)) {
      assert.ok(Date.now() < deadline, `no verified webhook:\n${output}\n${logs()}`);
      await sleep(200);
    }
    // The master key was kept, readable by its owner alone; the quick start's files are untouched.
    assert.equal(statSync(join(work, 'pix-live-master.key')).mode & 0o777, 0o600);
    for (const [file, text] of Object.entries(quickStart))
      assert.equal(readFileSync(join(work, file), 'utf8'), text, file);
    assert.doesNotMatch(readFileSync(join(work, 'platform-pix-live.log'), 'utf8'), /"level":(50|60)/);
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
