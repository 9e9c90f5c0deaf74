/**
 * `npx paygate worker` does all the background work an API instance started with
 * PAYGATE_WORKERS=false leaves undone — the sweeper as well as the dispatcher — and, with
 * PAYGATE_WORKER_METRICS_PORT, shows its counters to Prometheus.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMerchant, paymentInput, post, startTestPlatform, TEST_MASTER_KEY } from './harness.js';

const CLI = join(import.meta.dirname, '../src/cli/main.ts');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('paygate worker', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('expires due payments, purges nonces and serves /metrics', async () => {
    const platform = await startTestPlatform({ database: 'postgres', env: { PAYGATE_PAYMENT_EXPIRY: '1s' } });
    const dataDir = mkdtempSync(join(tmpdir(), 'paygate-worker-'));
    const metricsPort = await freePort();
    const worker = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, 'worker'], {
      env: {
        ...process.env,
        DATABASE_URL: platform.config.databaseUrl,
        PAYGATE_MASTER_KEY: TEST_MASTER_KEY.toString('base64'),
        PAYGATE_DATA_DIR: dataDir,
        PAYGATE_WORKER_METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    try {
      const merchant = await createMerchant(platform);
      const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
      assert.equal(created.status, 200);
      // A nonce whose window is long past, as the API instances leave them behind.
      await platform.services.db.query(
        `INSERT INTO request_nonces (merchant_id, nonce, expires_at)
         SELECT id, 'spent-nonce', now() - interval '1 hour' FROM merchants LIMIT 1`,
      );
      let status = 'PENDING';
      let nonces = 1;
      for (let i = 0; i < 150 && (status !== 'EXPIRED' || nonces !== 0); i += 1) {
        await sleep(100);
        const row = await platform.services.db.query<{ status: string }>(
          'SELECT status FROM payments WHERE order_no = $1',
          [created.body.data?.orderNo],
        );
        status = row.rows[0]?.status ?? '';
        const spent = await platform.services.db.query(`SELECT 1 FROM request_nonces WHERE nonce = 'spent-nonce'`);
        nonces = spent.rows.length;
      }
      assert.equal(status, 'EXPIRED', 'the worker swept the due payment');
      assert.equal(nonces, 0, 'the worker purged the spent nonce');

      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /^paygate_webhook_/m);
      assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status, 404);

      worker.kill('SIGTERM');
      assert.equal(await exited, 0, 'a SIGTERM stops it cleanly');
    } finally {
      worker.kill('SIGKILL');
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
