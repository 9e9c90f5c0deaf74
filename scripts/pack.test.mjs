// `npm run test:pack`: the three publishable packages as a shop outside this repository gets them.
// Packs them (scripts/release.mjs), installs the tarballs into a fresh project in a temporary
// directory with nothing else from the workspace and without optional dependencies (so without
// the native sodium-native: the pure-JavaScript path), starts the platform from this repository
// (sandbox, embedded database, a free port), onboards the shop with the installed
// `paygate-merchant keygen`, and runs a small shop there: create a payment, pay it in the
// sandbox, verify its webhook from the raw body. Also: `require()` of each package works.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';

const root = realpathSync(new URL('..', import.meta.url).pathname);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const work = realpathSync(mkdtempSync(join(tmpdir(), 'paygate-pack-')));
const project = join(work, 'shop');
const dataDir = join(work, 'platform');
let platform;
let platformUrl;

const SHOP = `
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cryptoImplementation } from '@paygate/protocol';
import { nodeWebhookHandler, parseOnboarding, PaygateClient, WebhookVerifier } from '@paygate/merchant';

const onboarding = parseOnboarding(JSON.parse(readFileSync('merchant.json', 'utf8')));
const paygate = new PaygateClient({
  baseUrl: process.env.PAYGATE_URL,
  accessKey: onboarding.accessKey,
  privateKey: readFileSync('merchant-keys/private.pem', 'utf8'),
  bodyKey: onboarding.bodyKey,
});
const verifier = new WebhookVerifier({ webhookKeys: onboarding.webhookKeys });
let resolveEvent;
const received = new Promise((resolve) => (resolveEvent = resolve));
const server = createServer(nodeWebhookHandler({ verifier, onEvent: async (event) => resolveEvent(event) }));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const payment = await paygate.payments.create({
  merchantOrderNo: 'pack-' + Date.now(),
  currency: 'BRL',
  amount: '10.00',
  paymentMethod: { code: 'PIX' },
  webhookUrl: 'http://127.0.0.1:' + server.address().port + '/webhook',
});
await paygate.sandbox.simulatePayment({ orderNo: payment.orderNo, status: 'SUCCEEDED' });
const event = await Promise.race([
  received,
  new Promise((_, reject) => setTimeout(() => reject(new Error('no webhook within 60 s')), 60_000)),
]);
const final = await paygate.payments.query({ orderNo: payment.orderNo });
server.close();
console.log(JSON.stringify({ crypto: cryptoImplementation, orderNo: payment.orderNo, created: payment.status, event, final: final.status }));
`;

function run(command, args, options = {}) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

async function waitFor(check, what, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the packed SDK in a project of its own', () => {
  before(async () => {
    assert.ok(relative(root, work).startsWith('..'), `${work} is outside ${root}`);
    const tarballs = run(process.execPath, [join(root, 'scripts/release.mjs'), join(work, 'tarballs')], { cwd: root })
      .trim()
      .split('\n');
    writeFileSync(join(work, 'tarballs.txt'), tarballs.join('\n'));
    run(process.execPath, ['-e', `require('node:fs').mkdirSync(${JSON.stringify(project)})`]);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'pack-shop', version: '1.0.0', private: true, type: 'module' }, null, 2),
    );
    run(npm, ['install', '--omit=optional', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], {
      cwd: project,
    });

    platform = spawn(process.execPath, [join(root, 'packages/server/dist/main.js')], {
      cwd: work,
      env: {
        ...process.env,
        PAYGATE_ENV: 'sandbox',
        HOST: '127.0.0.1',
        PORT: '0',
        PAYGATE_DATA_DIR: dataDir,
        DATABASE_URL: '',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const serverFile = join(dataDir, 'server.json');
    platformUrl = await waitFor(
      () =>
        existsSync(serverFile) &&
        JSON.parse(readFileSync(serverFile, 'utf8')).pid === platform.pid &&
        JSON.parse(readFileSync(serverFile, 'utf8')).url,
      'the platform to start',
    );
  });

  after(() => {
    platform?.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  });

  it('installs the three tarballs and nothing else of the workspace, without the native addon', () => {
    const installed = (name) => existsSync(join(project, 'node_modules', name, 'package.json'));
    for (const name of ['@paygate/protocol', '@paygate/wire', '@paygate/merchant', 'zod', '@noble/curves']) {
      assert.ok(installed(name), name);
    }
    for (const name of ['@paygate/server', '@paygate/psp-simulator', 'sodium-native', 'tsx']) {
      assert.ok(!installed(name), `${name} must not be installed`);
    }
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/@paygate/merchant/package.json'), 'utf8'));
    assert.equal(manifest.dependencies['@paygate/protocol'], '^0.1.0');
  });

  it('loads each package with require() as well as import', () => {
    const out = run(
      process.execPath,
      [
        '-e',
        "for (const p of ['@paygate/protocol', '@paygate/wire', '@paygate/merchant']) console.log(p, typeof require(p))",
      ],
      { cwd: project },
    );
    assert.equal(out.trim().split('\n').length, 3);
    assert.match(out, /@paygate\/merchant object/);
  });

  it('ships @paygate/protocol/web with its types, which signs and verifies from the tarball', () => {
    assert.ok(existsSync(join(project, 'node_modules/@paygate/protocol/dist/web/index.d.ts')));
    const script = `
      import { signingKeyFrom, signReadRequest, verify, parseSignatureBytes } from '@paygate/protocol/web';
      const key = (await signingKeyFrom(crypto.getRandomValues(new Uint8Array(32)))).value;
      const signed = await signReadRequest({ path: '/api/v1/payments', query: 'orderNo=P1' },
        { accessKey: 'ak_test_Abc123Def456', key, created: 1767225600, nonce: crypto.randomUUID() });
      const signature = parseSignatureBytes(signed.headers.signature, 'merchant').value;
      console.log(await verify(signed.signatureBase, signature, key.publicKey));
    `;
    const out = run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    assert.equal(out.trim(), 'true');
  });

  it('ships @paygate/merchant/web with its types, its WebhookVerifier loading keys', () => {
    assert.ok(existsSync(join(project, 'node_modules/@paygate/merchant/dist/web.d.ts')));
    const script = `
      import { WebhookVerifier } from '@paygate/merchant/web';
      const verifier = new WebhookVerifier({ webhookKeys: [{ keyid: 'wk_1', publicKey: 'LjRmSHH+b7SugXO0u7ETcxRhcGWiv8hlRNXotmCWeQ8=' }] });
      console.log(verifier.keyids.join());
    `;
    const out = run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    assert.equal(out.trim(), 'wk_1');
  });

  it('takes a sandbox payment end to end: create, pay, a webhook verified from the raw body', () => {
    run(join(project, 'node_modules/.bin/paygate-merchant'), ['keygen', '--out', 'merchant-keys'], { cwd: project });
    const onboarding = run(
      process.execPath,
      [
        join(root, 'packages/server/bin/paygate.js'),
        'merchant',
        'create',
        '--name',
        'Pack shop',
        '--public-key',
        '@merchant-keys/public.pem',
        '--json',
      ],
      { cwd: project, env: { ...process.env, PAYGATE_URL: platformUrl, PAYGATE_DATA_DIR: dataDir } },
    );
    writeFileSync(join(project, 'merchant.json'), onboarding);
    writeFileSync(join(project, 'shop.mjs'), SHOP);
    const result = JSON.parse(
      run(process.execPath, ['shop.mjs'], { cwd: project, env: { ...process.env, PAYGATE_URL: platformUrl } }),
    );
    assert.equal(result.crypto, 'noble');
    assert.equal(result.created, 'PENDING');
    assert.equal(result.event.orderNo, result.orderNo);
    assert.equal(result.event.status, 'SUCCEEDED');
    assert.equal(result.final, 'SUCCEEDED');
  });
});
