// `npm run bench`: webhook deliveries per second from `paygate worker` processes to a local
// receiver (another process) that verifies every signature, with one worker and with two, each
// draining a backlog of 10,000 events on PostgreSQL; next to the signing ceiling measured in the
// same run (signWebhook of the same body on one core).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey, signWebhook } from '@paygate/protocol';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { onboardingView } from '../src/modules/admin/routes.js';
import { createServices } from '../src/services.js';
import { postgresUrl, startChild, urlOf } from './support.js';

const BACKLOG = 10_000;
const MASTER_KEY = Buffer.alloc(32, 9).toString('base64');

const database = await postgresUrl();
if (!database) {
  console.log('skipped: webhook workers need PostgreSQL (set TEST_DATABASE_URL or run one on 127.0.0.1:5432)');
  process.exit(0);
}
const dataDir = mkdtempSync(join(tmpdir(), 'paygate-bench-'));
const env = { DATABASE_URL: database.url, PAYGATE_MASTER_KEY: MASTER_KEY, PAYGATE_DATA_DIR: dataDir };
const children: ChildProcess[] = [];
const config = parseConfig({ ...env, LOG_LEVEL: 'silent' });
const db = await openDatabase({ databaseUrl: database.url, dataDir });

/** Signatures per second of one delivery's headers, on this core, for ~2 s. */
function signingCeiling(body: Buffer): number {
  const key = generateSigningKey();
  const url = 'http://127.0.0.1:9/webhook/payment';
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < 2_000) {
    for (let i = 0; i < 200; i++) {
      signWebhook({ url, body, eventId: 'evt_X' }, { keyid: 'wk', key, created: 1, nonce: randomUUID() });
    }
    n += 200;
  }
  return n / ((performance.now() - started) / 1000);
}

/** Writes `count` due events (one statement) for `merchantId` to `url`; returns when they are in. */
async function seed(run: string, count: number, merchantId: bigint, url: string): Promise<void> {
  await db.query(
    `INSERT INTO events (event_id, merchant_id, order_type, order_no, status, webhook_url, body, created_at, next_attempt_at)
     SELECT 'evt_' || $1 || lpad(i::text, 25, '0'), $2, 'PAYMENT', 'P' || $1 || lpad(i::text, 17, '0'), 'SUCCEEDED', $3,
            convert_to(json_build_object('eventId', 'evt_' || $1 || lpad(i::text, 25, '0'), 'orderType', 'PAYMENT',
              'orderNo', 'P' || $1 || lpad(i::text, 17, '0'), 'merchantOrderNo', 'M-' || i, 'status', 'SUCCEEDED',
              'currency', 'BRL', 'amount', '125.50', 'paidAmount', '125.50', 'channelTradeNo', 'CH' || i,
              'payer', json_build_object('name', 'Maria Silva', 'documentNumber', '00123456789'), 'attach', 'bench')::text, 'UTF8'),
            now(), now()
       FROM generate_series(1, $4) AS i`,
    [run, merchantId, url, count],
  );
}

async function delivered(run: string): Promise<number> {
  const result = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM events WHERE event_id LIKE $1 AND delivery_status = 'delivered'`,
    [`evt_${run}%`],
  );
  return Number(result.rows[0]?.n ?? 0);
}

async function startWorkers(count: number): Promise<ChildProcess[]> {
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startChild('packages/server/src/worker/main.ts', { ...env, LOG_LEVEL: 'info' }, (line) =>
        line.includes('paygate worker started'),
      ),
    ),
  );
  const workers = started.map((s) => s.child);
  children.push(...workers);
  return workers;
}

async function stop(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise((resolve) => {
          worker.once('exit', resolve);
          worker.kill('SIGTERM');
        }),
    ),
  );
}

/** Seeds a backlog, lets `workerCount` workers drain it, and times it. */
async function drain(run: string, workerCount: number, merchantId: bigint, url: string) {
  const workers = await startWorkers(workerCount);
  await seed(run, BACKLOG, merchantId, url);
  const started = performance.now();
  while ((await delivered(run)) < BACKLOG) await new Promise((resolve) => setTimeout(resolve, 50));
  const seconds = (performance.now() - started) / 1000;
  await stop(workers);
  return { seconds, perSecond: BACKLOG / seconds };
}

try {
  await migrate(db);
  const services = createServices(config, db, { masterKey: Buffer.from(MASTER_KEY, 'base64') });
  await services.platformKeys.ensure();
  const merchant = await services.merchants.create('Bench', generateSigningKey().publicKey.toString('base64'));
  const view = await onboardingView(services, merchant.accessKey);
  const merchantRow = await db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [
    merchant.accessKey,
  ]);
  const merchantId = merchantRow.rows[0]?.id as bigint;
  const receiverChild = await startChild('packages/server/bench/receiver-server.ts', {
    WEBHOOK_KEYS: JSON.stringify(view.webhookKeys),
  });
  children.push(receiverChild.child);
  const receiver = urlOf(receiverChild.line);
  const hook = `${receiver}/webhook/payment?shop=bench`;

  // Warm-up: a small backlog through one worker (JIT, connections), not measured.
  await seed('W', 500, merchantId, hook);
  const warm = await startWorkers(1);
  while ((await delivered('W')) < 500) await new Promise((resolve) => setTimeout(resolve, 50));
  await stop(warm);

  const sample = (await db.query<{ body: Uint8Array }>('SELECT body FROM events LIMIT 1')).rows[0]?.body as Uint8Array;
  const ceiling = signingCeiling(Buffer.from(sample));
  const one = await drain('A', 1, merchantId, hook);
  const two = await drain('B', 2, merchantId, hook);
  const stats = (await (await fetch(receiver)).json()) as { verified: number; refused: number };

  const row = (name: string, r: { seconds: number; perSecond: number }) =>
    `| ${name.padEnd(30)} | ${r.perSecond.toFixed(0).padStart(12)} | ${r.seconds.toFixed(1).padStart(11)} | ${(
      (100 * r.perSecond) /
      ceiling
    )
      .toFixed(1)
      .padStart(8)}% |`;
  console.log(
    `PostgreSQL; ${config.webhookConcurrency} deliveries in flight per worker; receiver verifies every signature in its own process`,
  );
  console.log('| scenario                       | deliveries/s | drain 10k s | of sign. |');
  console.log('|--------------------------------|--------------|-------------|----------|');
  console.log(
    `| ${'ceiling: signWebhook, 1 core'.padEnd(30)} | ${ceiling.toFixed(0).padStart(12)} |           — |        — |`,
  );
  console.log(row('1 worker process', one));
  console.log(row('2 worker processes', two));
  console.log(
    `receiver: ${stats.verified} verified, ${stats.refused} refused; 2 workers / 1 worker = ${(two.perSecond / one.perSecond).toFixed(2)}x (2 cores shared with PostgreSQL and the receiver)`,
  );
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  await db.close();
  await database.drop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
}
