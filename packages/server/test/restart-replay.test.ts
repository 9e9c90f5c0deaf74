// Replay protection across a restart: a signed request answered before the platform process
// stopped (SIGTERM) or died (SIGKILL) is refused when replayed to the restarted process inside
// its signature window, on both databases. Every nonce is decided by a committed insert before
// the request does anything (modules/auth/service.ts), so what a process answered survives it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildRead, buildWrite, databases, freshPostgres, paymentInput, type TestMerchant } from './harness.js';
import { onboard, type SpawnedPlatform, spawnPlatform, stopSpawned } from './spawned.js';

const ADMIN_TOKEN = 'restart-replay-admin-token-0123456789';

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
    let platform: SpawnedPlatform | undefined;

    before(async () => {
      if (database === 'postgres') {
        const fresh = await freshPostgres();
        env.DATABASE_URL = fresh.url;
        dropDb = fresh.drop;
      }
      platform = await spawnPlatform(env);
      merchant = await onboard(platform.url, ADMIN_TOKEN, 'Replay shop');
    });

    after(async () => {
      if (platform) await stopSpawned(platform, 'SIGKILL');
      await dropDb?.();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      it(`${signal === 'SIGTERM' ? 'stopped' : 'killed'} (${signal}) right after answering`, async () => {
        const running = platform as SpawnedPlatform;
        const requests = [recordCreate(merchant), recordBalances(merchant)];
        for (const request of requests) assert.equal((await send(running.url, request)).status, 200);
        await stopSpawned(running, signal);

        platform = await spawnPlatform(env);
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
