/**
 * The command line against a real server process (`npm start`'s entry point): keygen → the
 * operator's `paygate merchant create` → `paygate-merchant request` creates and queries a
 * payment; `listen` verifies a real delivery and saves it; `verify-webhook` checks the capture
 * and says what is wrong with altered copies.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const ROOT = new URL('../../../', import.meta.url).pathname;
const SERVER = join(ROOT, 'packages/server/src/main.ts');
const OPERATOR = join(ROOT, 'packages/server/src/cli/main.ts');
const MERCHANT = join(ROOT, 'packages/merchant/src/cli/main.ts');
const BIN = join(ROOT, 'packages/merchant/bin/paygate-merchant.js');
const TSX = ['--conditions=source', '--import', 'tsx'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...TSX, file, ...args],
      { cwd: ROOT, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A long-running process whose output is collected; `waitFor` resolves on the first match. */
function start(file: string, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [...TSX, file, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  return {
    child,
    output: () => output,
    async waitFor(pattern: RegExp, what: string): Promise<RegExpExecArray> {
      // A deadline only so that a broken run ends; nothing is asserted about time.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`${what}: the process exited: ${output}`);
        if (Date.now() > deadline) throw new Error(`${what}: not seen in: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('paygate-merchant against a running server', () => {
  let dir: string;
  let server: ReturnType<typeof start>;
  let serverUrl: string;
  let operatorEnv: Record<string, string>;
  let env: Record<string, string>;
  let onboarding: { accessKey: string; bodyKey: { keyId: string; publicKey: string } };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paygate-merchant-cli-'));
    operatorEnv = { PAYGATE_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'info', PORT: '0' };
    server = start(SERVER, [], operatorEnv);
    serverUrl = (
      await server.waitFor(/"url":"(http:\/\/[^"]+)".*"msg":"paygate listening"/, 'server start')
    )[1] as string;
  });

  after(async () => {
    await stop(server.child);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keygen writes the key pair (private key 0600) and prints the public key to upload', async () => {
    const keys = join(dir, 'keys');
    const result = await run(MERCHANT, ['keygen', '--out', keys], {});
    assert.equal(result.code, 0, result.stderr);
    assert.equal(Buffer.from(result.stdout.trim(), 'base64').length, 32);
    assert.equal(statSync(join(keys, 'private.pem')).mode & 0o777, 0o600);
    assert.match(readFileSync(join(keys, 'public.pem'), 'utf8'), /BEGIN PUBLIC KEY/);
    assert.match(result.stderr, /paygate merchant create .*--public-key @/);

    const again = await run(MERCHANT, ['keygen', '--out', keys], {});
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists already; pass --force/);
  });

  it("keygen's onboarding hint is named after its key folder, so a second pair does not overwrite merchant.json", async () => {
    const live = await run(MERCHANT, ['keygen', '--out', join(dir, 'merchant-keys-live')], {});
    assert.equal(live.code, 0, live.stderr);
    assert.match(live.stderr, /--json > merchant-live\.json\n/);
  });

  it('onboards with the operator CLI, then creates and queries a payment with `request`', async () => {
    const created = await run(
      OPERATOR,
      ['merchant', 'create', '--name', 'CLI shop', '--public-key', `@${join(dir, 'keys/public.pem')}`, '--json'],
      operatorEnv,
    );
    assert.equal(created.code, 0, created.stderr);
    writeFileSync(join(dir, 'merchant.json'), created.stdout);
    onboarding = JSON.parse(created.stdout);
    env = {
      PAYGATE_URL: serverUrl,
      PAYGATE_PRIVATE_KEY: join(dir, 'keys/private.pem'),
      PAYGATE_ONBOARDING: join(dir, 'merchant.json'),
    };

    const body = JSON.stringify({
      merchantOrderNo: 'cli-order-1',
      currency: 'BRL',
      amount: '42.00',
      paymentMethod: { code: 'PIX' },
      webhookUrl: 'https://merchant.example/webhook/payment',
    });
    const create = await run(MERCHANT, ['request', 'POST', '/api/v1/payments', '--json', body], env);
    assert.equal(create.code, 0, create.stderr);
    const payment = JSON.parse(create.stdout);
    assert.equal(payment.msg, 'SUCCESS');
    assert.equal(payment.data.status, 'PENDING');

    const query = await run(
      MERCHANT,
      ['request', 'GET', `/api/v1/payments?orderNo=${payment.data.orderNo}`, '--verbose'],
      env,
    );
    assert.equal(query.code, 0, query.stderr);
    assert.equal(JSON.parse(query.stdout).data.merchantOrderNo, 'cli-order-1');
    assert.match(
      query.stderr,
      new RegExp(`> signature-input: merchant=\\("@method" "@path" "@query" "merchant-access-key"\\)`),
    );
    assert.match(query.stderr, new RegExp(`"@query": \\?orderNo=${payment.data.orderNo}`));
    assert.match(query.stderr, /< 200 \(Request-Id req_/);
  });

  it('takes its configuration from flags and variables alike, and names what is missing', async () => {
    const explicit = await run(
      MERCHANT,
      [
        'request',
        'get',
        '/api/v1/payments?merchantOrderNo=cli-order-1',
        '--url',
        serverUrl,
        '--private-key',
        join(dir, 'keys/private.pem'),
        '--access-key',
        onboarding.accessKey,
      ],
      { PAYGATE_BODY_KEY_ID: onboarding.bodyKey.keyId, PAYGATE_BODY_PUBLIC_KEY: onboarding.bodyKey.publicKey },
    );
    assert.equal(explicit.code, 0, explicit.stderr);
    assert.equal(JSON.parse(explicit.stdout).data.amount, '42.00');

    const missing = await run(MERCHANT, ['request', 'GET', '/api/v1/balances'], { PAYGATE_URL: serverUrl });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing configuration: --access-key \(PAYGATE_ACCESS_KEY\), --private-key FILE/);
  });

  it('exits 1 with the API error body, and 2 on usage errors', async () => {
    const notFound = await run(MERCHANT, ['request', 'GET', '/api/v1/payments?merchantOrderNo=nope'], env);
    assert.equal(notFound.code, 1);
    assert.equal(JSON.parse(notFound.stdout).msg, 'ORDER_NOT_FOUND');

    for (const args of [
      ['request', 'DELETE', '/api/v1/payments'],
      ['request', 'POST', '/api/v1/payments'],
      ['request', 'POST', '/api/v1/payments', '--json', '{not json'],
      ['request', 'GET', 'api/v1/payments'],
      ['listen', '--port', 'eighty'],
      ['frobnicate'],
    ]) {
      const result = await run(MERCHANT, args, env);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.ok(result.stderr.length > 0);
    }
  });

  it('listen verifies a real delivery and saves it; verify-webhook checks the capture and explains failures', async () => {
    const captured = join(dir, 'captured');
    const listener = start(MERCHANT, ['listen', '--port', '0', '--save', captured], env);
    try {
      const url = (await listener.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 'listen'))[1] as string;
      const create = await run(
        MERCHANT,
        [
          'request',
          'POST',
          '/api/v1/payments',
          '--json',
          JSON.stringify({
            merchantOrderNo: 'cli-order-2',
            currency: 'BRL',
            amount: '9.90',
            paymentMethod: { code: 'PIX' },
            webhookUrl: `${url}/webhook/payment?source=cli`,
          }),
        ],
        env,
      );
      const orderNo = JSON.parse(create.stdout).data.orderNo as string;
      const paid = await run(
        MERCHANT,
        [
          'request',
          'POST',
          '/api/v1/sandbox/payments/simulate',
          '--json',
          JSON.stringify({ orderNo, status: 'SUCCEEDED' }),
        ],
        env,
      );
      assert.equal(paid.code, 0, paid.stderr);
      // The server's own dispatcher delivers it.
      await listener.waitFor(
        new RegExp(`#1 verified PAYMENT SUCCEEDED evt_\\w+: order ${orderNo} \\(cli-order-2\\), BRL 9\\.90`),
        'delivery',
      );
    } finally {
      await stop(listener.child);
    }

    const headers = join(captured, 'webhook-1.http');
    const body = join(captured, 'webhook-1.body');
    assert.match(readFileSync(headers, 'utf8'), /^POST \/webhook\/payment\?source=cli HTTP\/1\.1\r\n/);
    const ok = await run(MERCHANT, ['verify-webhook', '--headers', headers, '--body', body], env);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^verified: PAYMENT SUCCEEDED/);

    const tampered = join(dir, 'tampered.body');
    writeFileSync(tampered, readFileSync(body, 'utf8').replace('9.90', '99.90'));
    const bad = await run(MERCHANT, ['verify-webhook', '--headers', headers, '--body', tampered], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /refused at the digest check: Content-Digest does not match the body/);
    assert.match(bad.stdout, /parsed and re-serialized/);

    const moved = await run(
      MERCHANT,
      ['verify-webhook', '--headers', headers, '--body', body, '--url', 'http://127.0.0.1/webhook/payment'],
      env,
    );
    assert.equal(moved.code, 1);
    assert.match(moved.stdout, /refused at the signature check/);
    assert.match(moved.stdout, /"@query": \?\n/);

    const later = await run(
      MERCHANT,
      ['verify-webhook', '--headers', headers, '--body', body, '--now', '4102444800'],
      env,
    );
    assert.equal(later.code, 1);
    assert.match(later.stdout, /refused at the signature-input check: the signature has expired/);
    assert.match(later.stdout, /everything else verifies, so the delivery is authentic and only too old/);
  });

  it('the bin starts (build or sources)', async () => {
    const result = await new Promise<Run>((resolve) =>
      execFile(process.execPath, [BIN, '--help'], { cwd: ROOT }, (error, stdout, stderr) =>
        resolve({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /paygate-merchant keygen/);
  });
});
