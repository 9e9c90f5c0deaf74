import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generateSigningKey, signingKeyToPem } from '@paygate/protocol';
import { openDatabase } from '../src/db/db.js';
import { DomainError } from '../src/errors.js';
import { createMerchant, databases, freshPostgres, get, post, startTestPlatform } from './harness.js';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const SERVER = join(ROOT, 'packages/server/src/main.ts');
const CLI = join(ROOT, 'packages/server/src/cli/main.ts');

/** Starts `npm start`'s entry point as a real process and waits until it listens. */
async function startServer(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; logs: () => string }> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', SERVER], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const match = /"url":"(http:\/\/[^"]+)".*"msg":"paygate listening"/.exec(output);
    if (match?.[1]) return { child, url: match[1], logs: () => output };
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}

function paygate(args: string[], env: Record<string, string>) {
  return run(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

for (const database of databases()) {
  describe(`operator command line against a running server (${database})`, () => {
    let dataDir: string;
    let server: Awaited<ReturnType<typeof startServer>>;
    let env: Record<string, string>;
    let dropDb: (() => Promise<void>) | undefined;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'paygate-operator-'));
      env = { PAYGATE_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
      if (database === 'postgres') {
        const db = await freshPostgres();
        env.DATABASE_URL = db.url;
        dropDb = db.drop;
      }
      server = await startServer(env);
    });

    after(async () => {
      if (server.child.exitCode === null) await stop(server.child);
      await dropDb?.();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('merchant create --json prints the fixed onboarding object, for base64 and PEM keys', async () => {
      const key = generateSigningKey();
      const { stdout } = await paygate(
        ['merchant', 'create', '--name', 'Shop', '--public-key', key.publicKey.toString('base64'), '--json'],
        env,
      );
      const created = JSON.parse(stdout);
      assert.deepEqual(Object.keys(created), ['accessKey', 'environment', 'bodyKey', 'webhookKeys']);
      assert.match(created.accessKey, /^ak_test_[a-z0-9]+$/);
      assert.equal(created.environment, 'sandbox');
      assert.match(created.bodyKey.keyId, /^bk_test_/);
      assert.equal(Buffer.from(created.bodyKey.publicKey, 'base64').length, 32);
      assert.equal(created.webhookKeys.length, 1);
      assert.match(created.webhookKeys[0].keyid, /^wk_test_/);
      assert.equal(Buffer.from(created.webhookKeys[0].publicKey, 'base64').length, 32);

      const pem = signingKeyToPem(generateSigningKey()).publicKeyPem;
      const fromPem = JSON.parse(
        (await paygate(['merchant', 'create', '--name', 'PEM shop', '--public-key', pem, '--json'], env)).stdout,
      );
      assert.match(fromPem.accessKey, /^ak_test_/);
    });

    it('refuses a malformed key with a clear message and a non-zero exit', async () => {
      await assert.rejects(
        paygate(['merchant', 'create', '--name', 'Bad', '--public-key', 'not-a-key', '--json'], env),
        (error: { stderr: string; code: number }) => {
          assert.equal(error.code, 1);
          assert.match(error.stderr, /VALIDATION_FAILED/);
          return true;
        },
      );
    });

    it('adds, lists and retires merchant keys (two active at most), and rotates platform keys', async () => {
      const first = generateSigningKey();
      const { accessKey } = JSON.parse(
        (
          await paygate(
            ['merchant', 'create', '--name', 'Rotating', '--public-key', first.publicKey.toString('base64'), '--json'],
            env,
          )
        ).stdout,
      );
      const second = generateSigningKey().publicKey.toString('base64');
      const added = JSON.parse(
        (await paygate(['merchant', 'add-key', '--access-key', accessKey, '--public-key', second, '--json'], env))
          .stdout,
      );
      assert.equal(added.filter((k: { status: string }) => k.status === 'active').length, 2);
      await assert.rejects(
        paygate(
          [
            'merchant',
            'add-key',
            '--access-key',
            accessKey,
            '--public-key',
            generateSigningKey().publicKey.toString('base64'),
            '--json',
          ],
          env,
        ),
        /INVALID_STATE/,
      );
      const retired = JSON.parse(
        (
          await paygate(
            [
              'merchant',
              'retire-key',
              '--access-key',
              accessKey,
              '--key',
              first.publicKey.toString('base64'),
              '--json',
            ],
            env,
          )
        ).stdout,
      );
      assert.deepEqual(
        retired.map((k: { status: string }) => k.status),
        ['retired', 'active'],
      );

      const before = JSON.parse((await paygate(['keys', 'list', '--json'], env)).stdout);
      const rotated = JSON.parse((await paygate(['keys', 'rotate', '--kind', 'body', '--json'], env)).stdout);
      const keys = JSON.parse((await paygate(['keys', 'list', '--json'], env)).stdout);
      const bodies = keys.filter((k: { kind: string }) => k.kind === 'body');
      assert.equal(bodies.length, before.filter((k: { kind: string }) => k.kind === 'body').length + 1);
      assert.equal(bodies.find((k: { status: string }) => k.status === 'active').keyId, rotated.keyId);
      const old = bodies.find((k: { keyId: string }) => k.keyId !== rotated.keyId);
      assert.equal(old.status, 'enabled');
      const retiredKey = JSON.parse((await paygate(['keys', 'retire', '--key-id', old.keyId, '--json'], env)).stdout);
      assert.equal(retiredKey.status, 'retired');
      await assert.rejects(paygate(['keys', 'retire', '--key-id', rotated.keyId, '--json'], env), /INVALID_STATE/);
    });

    it('serves health and readiness, and echoes Request-Id', async () => {
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      assert.match(health.headers.get('request-id') ?? '', /^req_/);
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
    });

    it('keeps the operator API behind its token', async () => {
      const response = await fetch(`${server.url}/admin/v1/merchants`, { headers: { authorization: 'Bearer wrong' } });
      assert.equal(response.status, 401);
    });

    it('logs JSON lines with a request id and never the query string', async () => {
      await fetch(`${server.url}/api/v1/payments?orderNo=P000000000000000001&secret=leak-me`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const lines = server
        .logs()
        .split('\n')
        .filter((line) => line.includes('"reqId"'));
      assert.ok(lines.length > 0);
      assert.doesNotMatch(server.logs(), /leak-me/);
      for (const line of lines) assert.match(JSON.parse(line).reqId, /^req_/);
    });

    it('stops gracefully on SIGTERM with exit code 0', async () => {
      assert.equal(await stop(server.child), 0);
    });
  });
}

describe('keys at rest', () => {
  it('generates the sandbox master key into the data directory (0600) and stores platform private keys sealed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-keys-'));
    try {
      const server = await startServer({ PAYGATE_DATA_DIR: dataDir });
      const { stdout } = await paygate(['keys', 'list', '--json'], { PAYGATE_DATA_DIR: dataDir });
      assert.equal(JSON.parse(stdout).length, 2);
      assert.equal(await stop(server.child), 0);
      const masterFile = join(dataDir, 'master.key');
      assert.ok(existsSync(masterFile));
      assert.equal(statSync(masterFile).mode & 0o777, 0o600);
      assert.equal(statSync(join(dataDir, 'admin.token')).mode & 0o777, 0o600);
      const db = await openDatabase({ dataDir });
      try {
        const rows = (
          await db.query<{ secret_sealed: Uint8Array; public_key: Uint8Array }>(
            'SELECT secret_sealed, public_key FROM platform_keys',
          )
        ).rows;
        assert.equal(rows.length, 2);
        for (const row of rows) {
          // nonce (24) + ciphertext + tag (16): never the bare 32- or 64-byte key.
          assert.ok(row.secret_sealed.length === 24 + 32 + 16 || row.secret_sealed.length === 24 + 64 + 16);
        }
        assert.ok(readFileSync(masterFile, 'utf8').trim().length > 0);
      } finally {
        await db.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start in production without PAYGATE_MASTER_KEY', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-prod-'));
    try {
      await assert.rejects(
        startServer({ PAYGATE_DATA_DIR: dataDir, PAYGATE_ENV: 'production' }),
        /PAYGATE_MASTER_KEY is required/,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('environments', () => {
  it(
    'a sandbox access key does not work on a production platform over the same database',
    {
      skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL',
    },
    async () => {
      const db = await freshPostgres();
      const sandbox = await startTestPlatform({ databaseUrl: db.url });
      const production = await startTestPlatform({ databaseUrl: db.url, env: { PAYGATE_ENV: 'production' } });
      try {
        const merchant = await createMerchant(sandbox);
        assert.equal((await get(sandbox, merchant, '/api/v1/payments/list')).status, 200);
        const refused = await get(production, merchant, '/api/v1/payments/list');
        assert.equal(refused.status, 401);
        assert.deepEqual(refused.body, { msg: 'UNAUTHORIZED' });
        // Production has no sandbox helpers.
        const live = await createMerchant(production);
        assert.match(live.accessKey, /^ak_live_/);
        const helpers = await fetch(`${production.url}/api/v1/sandbox/payments/simulate`, { method: 'POST' });
        assert.equal(helpers.status, 401);
        // Signed by a live merchant, the receiver check does not exist either.
        const check = await post(production, live, '/api/v1/sandbox/webhooks/check', { url: 'https://shop.example/h' });
        assert.equal(check.status, 404, JSON.stringify(check.body));
      } finally {
        await sandbox.close();
        await production.close();
        await db.drop();
      }
    },
  );
});

describe('merchant names', () => {
  it('refuses a name with a control character (a NUL answered 500: PostgreSQL text cannot hold it)', async () => {
    const platform = await startTestPlatform();
    try {
      const publicKey = generateSigningKey().publicKey.toString('base64');
      for (const name of ['\u0000', 'Shop\u0000', 'Shop\u001b[31m', 'Shop\u0085']) {
        await assert.rejects(
          platform.services.merchants.create(name, publicKey),
          (error: unknown) =>
            error instanceof DomainError &&
            error.code === 'VALIDATION_FAILED' &&
            error.fieldErrors.some((field) => field.field === 'name' && field.message.includes('control characters')),
          JSON.stringify(name),
        );
      }
      await platform.services.merchants.create('Shop ação', publicKey);
    } finally {
      await platform.close();
    }
  });
});
