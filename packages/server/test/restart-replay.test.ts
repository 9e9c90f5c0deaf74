// Replay protection across a restart: a signed request answered before the platform process
// stopped (SIGTERM) or died (SIGKILL) is refused when replayed to the restarted process inside
// its signature window, on both databases. Every nonce is decided by a committed insert before
// the request does anything (modules/auth/service.ts), so what a process answered survives it.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { boxPublicKeyFrom, generateSigningKey } from '@paygate/protocol';
import { buildRead, buildWrite, databases, freshPostgres, paymentInput, type TestMerchant } from './harness.js';

const ROOT = join(import.meta.dirname, '../../..');
const SERVER = join(ROOT, 'packages/server/src/main.ts');
const ADMIN_TOKEN = 'restart-replay-admin-token-0123456789';

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<unknown>;
}

/** Starts the platform as its own process and waits for it to listen. */
async function startPlatform(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', SERVER], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const match = /"url":"(http:\/\/[^"]+)".*"msg":"paygate listening"/.exec(output);
    if (match) return { child, url: match[1] as string, exited };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the platform did not start:\n${output.slice(-4000)}`);
    }
    await sleep(50);
  }
}

async function stop(running: Running, signal: NodeJS.Signals): Promise<void> {
  running.child.kill(signal);
  await running.exited;
}

/** One signed request, kept so that the very same bytes can be sent again. */
interface Recorded {
  readonly method: 'GET' | 'POST';
  readonly target: string;
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
}

function recordCreate(merchant: TestMerchant): Recorded {
  const signed = buildWrite(merchant, '/api/v1/payments', paymentInput());
  return { method: 'POST', target: '/api/v1/payments', headers: signed.headers, body: new Uint8Array(signed.body) };
}

function recordBalances(merchant: TestMerchant): Recorded {
  return { method: 'GET', target: '/api/v1/balances', headers: buildRead(merchant, '/api/v1/balances').headers };
}

async function send(url: string, request: Recorded): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url + request.target, {
    method: request.method,
    headers: request.headers,
    ...(request.body ? { body: request.body } : {}),
  });
  return { status: response.status, body: await response.json() };
}

for (const database of databases()) {
  describe(`a request answered before a restart is refused when replayed after it (${database})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'paygate-restart-replay-'));
    const env: Record<string, string> = {
      HOST: '127.0.0.1',
      PORT: '0',
      PAYGATE_DATA_DIR: dir,
      PAYGATE_MASTER_KEY: Buffer.alloc(32, 5).toString('base64'),
      PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      PAYGATE_SHUTDOWN_DRAIN: '0',
      LOG_LEVEL: 'info',
    };
    let dropDb: (() => Promise<void>) | undefined;
    let merchant: TestMerchant;
    let platform: Running | undefined;

    before(async () => {
      if (database === 'postgres') {
        const fresh = await freshPostgres();
        env.DATABASE_URL = fresh.url;
        dropDb = fresh.drop;
      }
      platform = await startPlatform(env);
      const key = generateSigningKey();
      const response = await fetch(`${platform.url}/admin/v1/merchants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Replay shop', publicKey: key.publicKey.toString('base64') }),
      });
      assert.equal(response.status, 200);
      const { data } = (await response.json()) as {
        data: { accessKey: string; bodyKey: { keyId: string; publicKey: string } };
      };
      const bodyKey = boxPublicKeyFrom(data.bodyKey.publicKey);
      if (!bodyKey.ok) throw new Error('bad body key');
      merchant = {
        accessKey: data.accessKey,
        key,
        bodyKey: { keyId: data.bodyKey.keyId, publicKey: bodyKey.value },
        webhookKeys: [],
      };
    });

    after(async () => {
      if (platform && platform.child.exitCode === null && platform.child.signalCode === null) {
        await stop(platform, 'SIGKILL');
      }
      await dropDb?.();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      it(`${signal === 'SIGTERM' ? 'stopped' : 'killed'} (${signal}) right after answering`, async () => {
        const running = platform as Running;
        const requests = [recordCreate(merchant), recordBalances(merchant)];
        for (const request of requests) assert.equal((await send(running.url, request)).status, 200);
        await stop(running, signal);

        platform = await startPlatform(env);
        for (const request of requests) {
          const replayed = await send(platform.url, request);
          assert.equal(replayed.status, 401, `${request.method} replayed after ${signal}`);
          assert.deepEqual(replayed.body, { msg: 'UNAUTHORIZED' });
        }
        // The same requests signed afresh (a new nonce) are accepted: the nonce alone was refused.
        assert.equal((await send(platform.url, recordBalances(merchant))).status, 200);
        assert.equal((await send(platform.url, recordCreate(merchant))).status, 200);
      });
    }
  });
}
