// `npm run bench`: signed creates and signed queries per second against the real server on
// PostgreSQL (or PGlite when no PostgreSQL answers), driven from this process with pre-signed
// requests, each next to the ceiling: the same auth scope answering without touching storage.
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateBoxKeyPair, generateSigningKey, signReadRequest, signWriteRequest } from '@paygate/protocol';
import { Pool } from 'undici';
import { postgresUrl, startChild, urlOf } from './support.js';

const CONCURRENCY = 32;
const CREATES = 4_000;
const QUERIES = 6_000;
const ROUNDS = 3;

interface Prepared {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Fires prepared requests with a fixed number in flight; returns rate and latency percentiles. */
async function fire(
  url: string,
  requests: Prepared[],
): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const request = requests[next++] as Prepared;
        const t0 = performance.now();
        const response = await pool.request({ ...request, body: request.body });
        await response.body.dump();
        latencies.push(performance.now() - t0);
        if (response.statusCode !== 200) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { rps: requests.length / seconds, p50: at(0.5), p99: at(0.99), errors };
}

const key = generateSigningKey();
const signer = (accessKey: string) => ({ accessKey, key, created: Math.floor(Date.now() / 1000), nonce: randomUUID() });

function creates(accessKey: string, bodyKey: { keyId: string; publicKey: Buffer }, n: number): Prepared[] {
  return Array.from({ length: n }, (_, i) => {
    const plaintext = Buffer.from(
      JSON.stringify({
        merchantOrderNo: `B-${randomUUID().slice(0, 8)}-${i}`,
        currency: 'BRL',
        amount: '125.50',
        paymentMethod: { code: 'PIX' },
        webhookUrl: 'https://merchant.example/webhook/payment',
        attach: 'bench',
      }),
    );
    const signed = signWriteRequest(
      { path: '/api/v1/payments', plaintext, bodyKey, idempotencyKey: randomUUID() },
      signer(accessKey),
    );
    return { method: 'POST', path: '/api/v1/payments', headers: signed.headers, body: signed.body };
  });
}

function queries(accessKey: string, orderNo: string, n: number): Prepared[] {
  return Array.from({ length: n }, () => {
    const query = `orderNo=${orderNo}`;
    const signed = signReadRequest({ path: '/api/v1/payments', query }, signer(accessKey));
    return { method: 'GET', path: `/api/v1/payments?${query}`, headers: signed.headers };
  });
}

/** Creates and queries against the real platform on one database, each next to the ceiling. */
async function benchmark(database: Awaited<ReturnType<typeof postgresUrl>>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paygate-bench-'));
  const platformEnv: Record<string, string> = {
    PAYGATE_DATA_DIR: dataDir,
    PAYGATE_ADMIN_TOKEN: randomBytes(24).toString('hex'),
  };
  if (database) platformEnv.DATABASE_URL = database.url;
  const children: ChildProcess[] = [];
  try {
    const platformChild = await startChild('packages/server/bench/platform-server.ts', platformEnv);
    children.push(platformChild.child);
    const platform = { url: urlOf(platformChild.line) };
    const onboard = await fetch(`${platform.url}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${platformEnv.PAYGATE_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', publicKey: key.publicKey.toString('base64') }),
    });
    const { data } = (await onboard.json()) as {
      data: { accessKey: string; bodyKey: { keyId: string; publicKey: string } };
    };
    const bodyKey = { keyId: data.bodyKey.keyId, publicKey: Buffer.from(data.bodyKey.publicKey, 'base64') };

    const ceilingBox = generateBoxKeyPair();
    const ceilingChild = await startChild('packages/server/bench/ceiling-server.ts', {
      PUBLIC_KEY: key.publicKey.toString('base64'),
      BODY_SECRET: ceilingBox.secretKey.toString('base64'),
      ACCESS_KEY: data.accessKey,
    });
    children.push(ceilingChild.child);
    const ceiling = { url: urlOf(ceilingChild.line) };
    const ceilingBodyKey = { keyId: 'bench', publicKey: ceilingBox.publicKey };

    // Warm both servers up (JIT, connection pool) before measuring.
    await fire(ceiling.url, creates(data.accessKey, ceilingBodyKey, 500));
    const warm = creates(data.accessKey, bodyKey, 500);
    await fire(platform.url, warm);
    const probe = creates(data.accessKey, bodyKey, 1)[0] as Prepared;
    const created = (await (
      await fetch(platform.url + probe.path, { method: 'POST', headers: probe.headers, body: probe.body })
    ).json()) as {
      data: { orderNo: string };
    };
    await fire(platform.url, queries(data.accessKey, created.data.orderNo, 500));

    // Ceiling and platform alternate, three rounds each, and the median round counts: a slow
    // moment of the machine then hurts both sides of a ratio alike, or neither.
    type Run = Awaited<ReturnType<typeof fire>>;
    const rounds: Record<'ceilingCreate' | 'realCreate' | 'ceilingQuery' | 'realQuery', Run[]> = {
      ceilingCreate: [],
      realCreate: [],
      ceilingQuery: [],
      realQuery: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      rounds.ceilingCreate.push(await fire(ceiling.url, creates(data.accessKey, ceilingBodyKey, CREATES)));
      rounds.realCreate.push(await fire(platform.url, creates(data.accessKey, bodyKey, CREATES)));
      rounds.ceilingQuery.push(await fire(ceiling.url, queries(data.accessKey, created.data.orderNo, QUERIES)));
      rounds.realQuery.push(await fire(platform.url, queries(data.accessKey, created.data.orderNo, QUERIES)));
    }
    const median = (runs: Run[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)] as Run;
    const ceilingCreate = median(rounds.ceilingCreate);
    const realCreate = median(rounds.realCreate);
    const ceilingQuery = median(rounds.ceilingQuery);
    const realQuery = median(rounds.realQuery);

    const row = (name: string, r: Awaited<ReturnType<typeof fire>>, base?: Awaited<ReturnType<typeof fire>>) =>
      `| ${name.padEnd(34)} | ${r.rps.toFixed(0).padStart(7)} | ${r.p50.toFixed(1).padStart(6)} | ${r.p99.toFixed(1).padStart(6)} | ${
        base ? `${((100 * r.rps) / base.rps).toFixed(0)}%`.padStart(8) : '       —'
      } | ${String(r.errors).padStart(6)} |`;
    console.log(
      `\ndatabase: ${database ? 'PostgreSQL' : 'PGlite (embedded, the default)'}; ${CONCURRENCY} requests in flight; server and load generator in separate processes; median of ${ROUNDS} alternating rounds`,
    );
    console.log('| scenario                           |   req/s | p50 ms | p99 ms | of ceil. | errors |');
    console.log('|------------------------------------|---------|--------|--------|----------|--------|');
    console.log(row('ceiling: signed sealed POST, no DB', ceilingCreate));
    console.log(row('create payment (POST)', realCreate, ceilingCreate));
    console.log(row('ceiling: signed GET, no DB', ceilingQuery));
    console.log(row('query payment (GET)', realQuery, ceilingQuery));
    const target = database ? { create: 0.5, query: 0.6 } : { create: 0.3, query: 0.4 };
    const verdict = (name: string, ratio: number, goal: number) =>
      `${name} ${(100 * ratio).toFixed(0)}% of the ceiling (target ≥ ${100 * goal}%): ${ratio >= goal ? 'PASS' : 'FAIL'}`;
    console.log(verdict('creates', realCreate.rps / ceilingCreate.rps, target.create));
    console.log(verdict('queries', realQuery.rps / ceilingQuery.rps, target.query));
    if (database) {
      const p99 = Math.max(realCreate.p99, realQuery.p99);
      console.log(
        `p99 ${p99.toFixed(1)} ms at ${CONCURRENCY} in flight (target < 50 ms): ${p99 < 50 ? 'PASS' : 'FAIL'}`,
      );
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database?.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Both databases, PostgreSQL first (when one answers), then the embedded default.
const only = process.env.BENCH_DATABASE;
if (only !== 'pglite') {
  const database = await postgresUrl();
  if (database) await benchmark(database);
  else console.log('\nPostgreSQL: none answered; skipped');
}
if (only !== 'postgres') await benchmark(undefined);
