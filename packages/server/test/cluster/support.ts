/**
 * Support for the cluster tests (`npm run test:cluster`): the deploy/ recipe started as real
 * processes (HAProxy, two API instances, two workers) on a fresh PostgreSQL database, a merchant
 * onboarded through the operator command line, and a bounded load that records every answer.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { boxPublicKeyFrom, generateSigningKey } from '@paygate/protocol';
import pg from 'pg';
import { type Cluster, startCluster } from '../../../../deploy/cluster.mjs';
import { buildRead, buildWrite, freshPostgres, paymentInput, type TestMerchant } from '../harness.js';
import type { Receiver } from '../receiver.js';

const root = new URL('../../../../', import.meta.url).pathname;

/** Why the cluster suites cannot run here, or false when they can. */
export function clusterSkip(): string | false {
  if (!process.env.TEST_DATABASE_URL) return 'TEST_DATABASE_URL is not set: the cluster suites need PostgreSQL';
  if (spawnSync('haproxy', ['-v']).status !== 0) return 'haproxy is not installed (apt-get install haproxy)';
  return false;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface TestCluster extends Cluster {
  close(): Promise<void>;
}

/** The recipe on a fresh database, with test-friendly timings (drain 3 s, quick webhook retries). */
export async function startTestCluster(env: Record<string, string> = {}): Promise<TestCluster> {
  const database = await freshPostgres();
  let cluster: Cluster;
  try {
    cluster = await startCluster({
      databaseUrl: database.url,
      port: 0,
      source: true,
      env: {
        PAYGATE_RATE_LIMIT: '0',
        PAYGATE_SHUTDOWN_DRAIN: '3s',
        PAYGATE_SHUTDOWN_TIMEOUT: '20s',
        PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,2s,3s,5s,5s,10s,10s',
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
        PAYGATE_DATABASE_POOL: '10',
        ...env,
      },
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  return Object.assign(cluster, {
    async close() {
      await cluster.stop();
      await database.drop();
    },
  });
}

/** Onboards a merchant with `npx paygate merchant create --json` through the cluster's HAProxy. */
export function onboard(cluster: Cluster, name = 'Cluster shop'): TestMerchant {
  const key = generateSigningKey();
  const cli = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      'packages/server/src/cli/main.ts',
      'merchant',
      'create',
      '--name',
      name,
      '--public-key',
      key.publicKey.toString('base64'),
      '--json',
    ],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', PAYGATE_URL: cluster.url, PAYGATE_ADMIN_TOKEN: cluster.adminToken },
    },
  );
  if (cli.status !== 0) throw new Error(`paygate merchant create failed: ${cli.stderr}`);
  const view = JSON.parse(cli.stdout) as {
    accessKey: string;
    bodyKey: { keyId: string; publicKey: string };
    webhookKeys: { keyid: string; publicKey: string }[];
  };
  const bodyPublic = boxPublicKeyFrom(view.bodyKey.publicKey);
  if (!bodyPublic.ok) throw new Error('bad body key');
  return {
    accessKey: view.accessKey,
    key,
    bodyKey: { keyId: view.bodyKey.keyId, publicKey: bodyPublic.value },
    webhookKeys: view.webhookKeys,
  };
}

export interface Answer {
  readonly status: number;
  readonly body: { msg?: string; data?: Record<string, unknown>; [key: string]: unknown };
}

/** A network-level failure: no HTTP answer (refused, reset, hang-up). */
export class NoAnswer extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One HTTP request with node:http (no retries of any kind), JSON answer. */
export function send(
  base: string,
  path: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: Buffer; agent?: Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = httpRequest(
      url,
      {
        method: init.method ?? 'GET',
        headers: init.headers,
        agent: init.agent ?? false,
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) => reject(new NoAnswer(error.code ?? 'ERROR', error.message)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Answer['body'];
          try {
            body = JSON.parse(text) as Answer['body'];
          } catch {
            body = { unparsable: text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => reject(new NoAnswer(error.code ?? 'ERROR', error.message)));
    req.end(init.body);
  });
}

/** A signed, sealed POST; `signed` lets a test send the very same bytes again. */
export function signedPost(merchant: TestMerchant, path: string, payload: unknown) {
  const built = buildWrite(merchant, path, payload);
  return { headers: built.headers as Record<string, string>, body: Buffer.from(built.body) };
}

export function postTo(base: string, merchant: TestMerchant, path: string, payload: unknown, agent?: Agent) {
  const signed = signedPost(merchant, path, payload);
  return send(base, path, { method: 'POST', headers: signed.headers, body: signed.body, agent });
}

export function getFrom(base: string, merchant: TestMerchant, path: string, query: string, agent?: Agent) {
  const signed = buildRead(merchant, path, query);
  return send(base, `${path}?${query}`, { headers: signed.headers as Record<string, string>, agent });
}

export interface LoadStats {
  sent: number;
  answered: number;
  /** Requests without an HTTP answer, by error code. */
  noAnswer: Record<string, number>;
  /** Answers by status code. */
  statuses: Record<string, number>;
  /** Answers that are not JSON in the platform's `{"msg": ...}` shape. */
  shapeless: number;
}

/**
 * A bounded load: `concurrency` loops each create a payment, drive it to a final status with the
 * sandbox helper (SUCCEEDED or FAILED) and query it, until `stop()` or `maxRequests`. Records
 * every created order (2xx) and every order a 2xx simulate made final.
 */
export class Load {
  readonly stats: LoadStats = { sent: 0, answered: 0, noAnswer: {}, statuses: {}, shapeless: 0 };
  /** orderNo → merchantOrderNo of every 2xx create. */
  readonly created = new Map<string, string>();
  /** orderNo → final status of every 2xx simulate. */
  readonly finals = new Map<string, string>();
  readonly errors: string[] = [];
  private stopping = false;
  private running: Promise<void>[] = [];
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly base: string,
    private readonly merchant: TestMerchant,
    private readonly receiver: Receiver,
    private readonly options: { concurrency?: number; maxRequests?: number; keepAlive?: boolean } = {},
  ) {}

  get failed(): number {
    const noAnswer = Object.values(this.stats.noAnswer).reduce((a, b) => a + b, 0);
    const serverErrors = Object.entries(this.stats.statuses)
      .filter(([status]) => Number(status) >= 500)
      .reduce((a, [, n]) => a + n, 0);
    return noAnswer + serverErrors;
  }

  start(): this {
    const concurrency = this.options.concurrency ?? 4;
    this.running = Array.from({ length: concurrency }, (_, i) => this.loop(i));
    return this;
  }

  async stop(): Promise<LoadStats> {
    this.stopping = true;
    await Promise.all(this.running);
    this.agent.destroy();
    return this.stats;
  }

  /** Waits until `n` more requests were answered (bounded by `timeoutMs`). */
  async answeredMore(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.stats.answered + n;
    const deadline = Date.now() + timeoutMs;
    while (this.stats.answered < target && Date.now() < deadline) await sleep(20);
  }

  private async call(path: string, make: () => Promise<Answer>): Promise<Answer | undefined> {
    this.stats.sent += 1;
    try {
      const answer = await make();
      this.stats.answered += 1;
      this.stats.statuses[answer.status] = (this.stats.statuses[answer.status] ?? 0) + 1;
      if (typeof answer.body.msg !== 'string') this.stats.shapeless += 1;
      if (answer.status >= 500 && this.errors.length < 50)
        this.errors.push(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer;
    } catch (error) {
      const code = error instanceof NoAnswer ? error.code : 'THROWN';
      this.stats.noAnswer[code] = (this.stats.noAnswer[code] ?? 0) + 1;
      if (this.errors.length < 50) this.errors.push(`${path}: ${code} ${(error as Error).message}`);
      return undefined;
    }
  }

  private async loop(index: number): Promise<void> {
    const agent = this.options.keepAlive === false ? undefined : this.agent;
    const max = this.options.maxRequests ?? 5000;
    let round = 0;
    while (!this.stopping && this.stats.sent < max) {
      round += 1;
      const input = paymentInput({
        merchantOrderNo: `C${index}-${randomUUID().slice(0, 20)}`,
        webhookUrl: `${this.receiver.url}/hook`,
      });
      const created = await this.call('create', () =>
        postTo(this.base, this.merchant, '/api/v1/payments', input, agent),
      );
      const orderNo = created?.status === 200 ? (created.body.data?.orderNo as string) : undefined;
      if (!orderNo) continue;
      this.created.set(orderNo, input.merchantOrderNo as string);
      if (this.stopping) break;
      const status = round % 3 === 0 ? 'FAILED' : 'SUCCEEDED';
      const simulated = await this.call('simulate', () =>
        postTo(this.base, this.merchant, '/api/v1/sandbox/payments/simulate', { orderNo, status }, agent),
      );
      if (simulated?.status === 200) this.finals.set(orderNo, status);
      if (round % 4 === 0 && !this.stopping) {
        await this.call('query', () =>
          getFrom(this.base, this.merchant, '/api/v1/payments', `orderNo=${orderNo}`, agent),
        );
      }
    }
  }
}

/** Every created order is queryable (through `base`) and every final one has its status. */
export async function missingOrders(base: string, merchant: TestMerchant, load: Load): Promise<string[]> {
  const missing: string[] = [];
  const orders = [...load.created.keys()];
  for (let i = 0; i < orders.length; i += 8) {
    await Promise.all(
      orders.slice(i, i + 8).map(async (orderNo) => {
        const answer = await getFrom(base, merchant, '/api/v1/payments', `orderNo=${orderNo}`);
        const final = load.finals.get(orderNo);
        if (answer.status !== 200) missing.push(`${orderNo}: ${answer.status} ${answer.body.msg}`);
        else if (final && answer.body.data?.status !== final) {
          missing.push(`${orderNo}: ${String(answer.body.data?.status)}, expected ${final}`);
        }
      }),
    );
  }
  return missing;
}

/** The final-state events the receiver has not got yet (orderNo → status). */
export function undelivered(receiver: Receiver, load: Load): string[] {
  const got = new Set<string>();
  for (const request of receiver.received) {
    try {
      const event = JSON.parse(request.body.toString('utf8')) as { orderNo?: string; status?: string };
      got.add(`${event.orderNo}:${event.status}`);
    } catch {
      // not an event
    }
  }
  return [...load.finals].map(([orderNo, status]) => `${orderNo}:${status}`).filter((key) => !got.has(key));
}

/** Waits until every final-state event reached the receiver; returns those that did not. */
export async function waitDelivered(receiver: Receiver, load: Load, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let left = undelivered(receiver, load);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250);
    left = undelivered(receiver, load);
  }
  return left;
}

/** Runs SQL on the cluster's database (or, with `database`, on another one of the same server). */
export async function sql(url: string, text: string, database?: string): Promise<pg.QueryResult> {
  const target = new URL(url);
  if (database) target.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: target.toString() });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** Every process of the cluster that is not running (it should be). */
export function exitedProcesses(cluster: Cluster): string[] {
  return [...cluster.apis, ...cluster.workers, cluster.haproxy]
    .filter((proc) => !proc.running)
    .map((proc) => `${proc.name} ${JSON.stringify(proc.exits)}: ${proc.tail.slice(-5).join(' | ')}`);
}

/** Polls `url` until it answers `status` (or the time is up); resolves with the time taken. */
export async function until(url: string, status: number, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const answer = await send(url, '').catch(() => undefined);
    if (answer?.status === status) return Date.now() - started;
    await sleep(50);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms`);
}
