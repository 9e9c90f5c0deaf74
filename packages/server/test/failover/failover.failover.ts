/**
 * The highly available PostgreSQL recipe (deploy/failover/): etcd, two Patroni nodes with
 * synchronous replication, HAProxy routing to the primary, and the deploy/ cluster (HAProxy, two
 * API instances, a worker) on top, all real processes. Under a steady load of signed creates and
 * settlements: the primary's postmaster killed with SIGKILL loses nothing acknowledged and applies
 * nothing twice when clients retry; a planned switchover fails no request. `npm run test:failover`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { type Cluster, startCluster } from '../../../../deploy/cluster.mjs';
import { failoverSkip, type PostgresHa, startPostgresHa } from '../../../../deploy/failover/failover.mjs';
import { paymentInput, type TestMerchant } from '../harness.js';
import { type Receiver, startReceiver } from '../receiver.js';
import { type Answer, NoAnswer, onboard, postTo, sleep } from '../cluster/support.js';

const skip = failoverSkip();
if (skip) console.log(`# failover suite skipped: ${skip}`);

/** One write as the client saw it. */
interface Write {
  readonly kind: 'create' | 'settle';
  readonly sentAt: number;
  readonly answeredAt: number;
  /** HTTP status, or the network error's code when there was no answer. */
  readonly outcome: number | string;
}

interface Acknowledged {
  readonly merchantOrderNo: string;
  readonly input: Record<string, unknown>;
  /** The final status a 200 settlement gave it, if one did. */
  final?: 'SUCCEEDED' | 'FAILED';
}

/**
 * A merchant's client under failover: `concurrency` loops each create a payment and settle it
 * with the sandbox helper (two in three SUCCEEDED, which posts to the ledger). A request that
 * gets no answer or a 5xx is sent again, as a merchant would: the same merchantOrderNo, the same
 * settlement, freshly signed. Every attempt is recorded.
 */
class RetryingLoad {
  readonly writes: Write[] = [];
  /** orderNo → what a 200 acknowledged. */
  readonly acknowledged = new Map<string, Acknowledged>();
  /** Attempts that were a client's retry of a request. */
  retries = 0;
  /** Answers other than 200, 5xx and no answer (none are expected). */
  readonly unexpected: string[] = [];
  /** The first 5xx answers' bodies, for the log. */
  readonly serverErrors: string[] = [];
  private stopping = false;
  private loops: Promise<void>[] = [];
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 32 });

  constructor(
    private readonly base: string,
    private readonly merchant: TestMerchant,
    private readonly webhookUrl: string,
    private readonly concurrency = 4,
  ) {}

  start(): this {
    this.loops = Array.from({ length: this.concurrency }, (_, i) => this.loop(i));
    return this;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
    this.agent.destroy();
  }

  /** Successful writes sent at or after `since`. */
  okSince(since: number): Write[] {
    return this.writes.filter((write) => write.outcome === 200 && write.sentAt >= since);
  }

  /** Attempts since `since` that failed (no answer, or a status other than 200). */
  failedSince(since: number): Write[] {
    return this.writes.filter((write) => write.outcome !== 200 && write.sentAt >= since);
  }

  /** Waits (bounded) until `n` writes sent at or after `since` succeeded. */
  async succeeded(n: number, since: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.okSince(since).length < n) {
      if (Date.now() > deadline) throw new Error(`fewer than ${n} writes succeeded within ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** The longest time between two successful writes' answers within [from, to]. */
  longestGap(from: number, to: number): number {
    const times = this.writes
      .filter((write) => write.outcome === 200 && write.answeredAt >= from && write.answeredAt <= to)
      .map((write) => write.answeredAt)
      .sort((a, b) => a - b);
    let gap = 0;
    for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!);
    return gap;
  }

  /** Sends until answered 200 (or the load stops, or 60 s pass); the 200 answer, if any. */
  private async untilOk(kind: Write['kind'], path: string, payload: unknown): Promise<Answer | undefined> {
    const deadline = Date.now() + 60_000;
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      if (attempt > 0) {
        if (this.stopping) return undefined;
        this.retries += 1;
        await sleep(200);
      }
      const sentAt = Date.now();
      let outcome: number | string;
      let answer: Answer | undefined;
      try {
        answer = await postTo(this.base, this.merchant, path, payload, this.agent);
        outcome = answer.status;
      } catch (error) {
        outcome = error instanceof NoAnswer ? error.code : 'THROWN';
      }
      this.writes.push({ kind, sentAt, answeredAt: Date.now(), outcome });
      if (outcome === 200) return answer;
      if (this.serverErrors.length < 10)
        this.serverErrors.push(
          `${kind} ${outcome} sent ${new Date(sentAt).toISOString()} ${JSON.stringify(answer?.body)}`,
        );
      if (typeof outcome === 'number' && outcome < 500) {
        this.unexpected.push(`${kind} ${outcome} ${JSON.stringify(answer?.body)}`);
        return undefined;
      }
    }
    this.unexpected.push(`${kind}: no 200 within 60 s`);
    return undefined;
  }

  private async loop(index: number): Promise<void> {
    let round = 0;
    while (!this.stopping) {
      round += 1;
      const input = paymentInput({
        merchantOrderNo: `F${index}-${randomUUID().slice(0, 20)}`,
        webhookUrl: this.webhookUrl,
      });
      const created = await this.untilOk('create', '/api/v1/payments', input);
      const orderNo = created?.body.data?.orderNo as string | undefined;
      if (!orderNo) continue;
      const acknowledged: Acknowledged = { merchantOrderNo: input.merchantOrderNo, input };
      this.acknowledged.set(orderNo, acknowledged);
      const status = round % 3 === 0 ? 'FAILED' : 'SUCCEEDED';
      const settled = await this.untilOk('settle', '/api/v1/sandbox/payments/simulate', { orderNo, status });
      if (settled) acknowledged.final = status;
    }
  }
}

/** A client of the database `paygate` on one node directly (not through HAProxy). */
async function onNode(ha: PostgresHa, name: string): Promise<pg.Client> {
  const url = new URL(ha.node(name)!.superuserUrl);
  url.pathname = '/paygate';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return client;
}

/**
 * What the node `name` (the primary) is missing or has twice of what `load` acknowledged: every
 * acknowledged create there with its settled status, one ledger posting per SUCCEEDED payment and
 * none for a FAILED one, and books that balance.
 */
async function lostOrDoubled(ha: PostgresHa, name: string, load: RetryingLoad): Promise<string[]> {
  const client = await onNode(ha, name);
  try {
    assert.equal((await client.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, false, `${name} is the primary`);
    const problems: string[] = [];
    const orderNos = [...load.acknowledged.keys()];
    const rows = await client.query<{ order_no: string; merchant_order_no: string; status: string; postings: number }>(
      `SELECT p.order_no, p.merchant_order_no, p.status,
              (SELECT count(*)::int FROM ledger_transactions t WHERE t.order_no = p.order_no) AS postings
         FROM payments p WHERE p.order_no = ANY($1)`,
      [orderNos],
    );
    const found = new Map(rows.rows.map((row) => [row.order_no, row]));
    for (const [orderNo, acknowledged] of load.acknowledged) {
      const row = found.get(orderNo);
      if (!row) {
        problems.push(`${orderNo}: acknowledged, missing`);
        continue;
      }
      if (row.merchant_order_no !== acknowledged.merchantOrderNo) problems.push(`${orderNo}: another merchantOrderNo`);
      if (acknowledged.final && row.status !== acknowledged.final)
        problems.push(`${orderNo}: ${row.status}, acknowledged ${acknowledged.final}`);
      const postings = row.status === 'SUCCEEDED' ? 1 : 0;
      if (row.postings !== postings) problems.push(`${orderNo}: ${row.status} with ${row.postings} ledger postings`);
    }
    const merchantOrderNos = [...load.acknowledged.values()].map((a) => a.merchantOrderNo);
    const twice = await client.query(
      `SELECT merchant_order_no FROM payments WHERE merchant_order_no = ANY($1) GROUP BY merchant_order_no HAVING count(*) > 1`,
      [merchantOrderNos],
    );
    for (const row of twice.rows) problems.push(`${row.merchant_order_no}: two orders`);
    const unbalanced = await client.query(
      `SELECT transaction_id FROM ledger_entries GROUP BY transaction_id, currency HAVING sum(amount) <> 0`,
    );
    const drifted = await client.query(
      `SELECT a.id FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
        GROUP BY a.id, a.balance HAVING a.balance <> coalesce(sum(e.amount), 0)`,
    );
    if (unbalanced.rowCount) problems.push(`${unbalanced.rowCount} ledger transactions do not balance`);
    if (drifted.rowCount) problems.push(`${drifted.rowCount} accounts differ from their entries`);
    return problems;
  } finally {
    await client.end();
  }
}

/** Retries as a client would after an unknown outcome: the same create and the same settlement, again. */
async function retryAcknowledged(base: string, merchant: TestMerchant, load: RetryingLoad, n: number) {
  const problems: string[] = [];
  for (const [orderNo, acknowledged] of [...load.acknowledged].slice(-n)) {
    const again = await postTo(base, merchant, '/api/v1/payments', acknowledged.input);
    if (again.status !== 200 || again.body.data?.orderNo !== orderNo)
      problems.push(`create ${orderNo} again: ${again.status} ${String(again.body.data?.orderNo)}`);
    if (acknowledged.final) {
      const settled = await postTo(base, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo,
        status: acknowledged.final,
      });
      if (settled.status !== 200 || settled.body.data?.status !== acknowledged.final)
        problems.push(`settle ${orderNo} again: ${settled.status} ${String(settled.body.data?.status)}`);
    }
  }
  return problems;
}

const figures = (load: RetryingLoad, since: number) => {
  const failed = load.failedSince(since);
  const byOutcome: Record<string, number> = {};
  for (const write of failed) byOutcome[String(write.outcome)] = (byOutcome[String(write.outcome)] ?? 0) + 1;
  return { writes: load.writes.filter((w) => w.sentAt >= since).length, failed: failed.length, byOutcome };
};

describe('PostgreSQL failover (Patroni, etcd, HAProxy) under load', { skip }, () => {
  let ha: PostgresHa;
  let cluster: Cluster;
  let receiver: Receiver;
  let merchant: TestMerchant;

  before(async () => {
    receiver = await startReceiver();
    // FAILOVER_KEEP=1 keeps the directory with every process's log.
    ha = await startPostgresHa({ keep: process.env.FAILOVER_KEEP === '1' });
    cluster = await startCluster({
      databaseUrl: ha.databaseUrl,
      port: 0,
      source: true,
      workers: 1,
      logDir: `${ha.logDir}/platform`,
      env: {
        PAYGATE_RATE_LIMIT: '0',
        PAYGATE_SHUTDOWN_DRAIN: '2s',
        PAYGATE_SHUTDOWN_TIMEOUT: '20s',
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
        PAYGATE_DATABASE_POOL: '8',
        PAYGATE_DATABASE_RETRY: '20s',
        LOG_LEVEL: process.env.FAILOVER_LOG_LEVEL ?? 'warn',
      },
    });
    merchant = onboard(cluster, 'Failover shop');
  });

  after(async () => {
    await cluster?.stop();
    await ha?.stop();
    await receiver?.close();
  });

  it("SIGKILL of the primary's postmaster: every acknowledged create and settlement is on the new primary, once", async () => {
    const old = await ha.waitHealthy();
    const load = new RetryingLoad(cluster.url, merchant, `${receiver.url}/hook`).start();
    try {
      await load.succeeded(60, 0);
      const killedAt = Date.now();
      ha.killPostmaster(old);
      await load.succeeded(60, killedAt);
      const firstWrite = Math.min(...load.okSince(killedAt).map((write) => write.answeredAt)) - killedAt;
      await load.stop();
      const leader = await ha.leader();
      assert.ok(leader !== undefined && leader !== old, `a new primary (was ${old}, now ${leader})`);
      const stats = figures(load, killedAt);
      console.log(
        `# failover: kill -9 of ${old}'s postmaster → first write accepted after ${firstWrite} ms (${leader} primary); ` +
          `${load.acknowledged.size} orders acknowledged; after the kill ${stats.writes} write attempts, ` +
          `${stats.failed} failed ${JSON.stringify(stats.byOutcome)}, ${load.retries} client retries`,
      );
      assert.deepEqual(load.unexpected, []);
      // Patroni notices the dead postmaster within loop_wait (2 s) and promotes the synchronous
      // standby; HAProxy routes to it within a check or two. Measured about 5 s; the bound is generous.
      assert.ok(firstWrite < 45_000, `writes accepted again after ${firstWrite} ms`);
      assert.deepEqual(await retryAcknowledged(cluster.url, merchant, load, 30), []);
      assert.deepEqual(await lostOrDoubled(ha, leader, load), []);
    } finally {
      await load.stop();
    }
  });

  it('a planned switchover under load fails no request', async () => {
    // The killed node comes back as the synchronous standby (Patroni rewinds and restarts it).
    const old = await ha.waitHealthy();
    const candidate = ha.nodes.find((node) => node.name !== old)!.name;
    const load = new RetryingLoad(cluster.url, merchant, `${receiver.url}/hook`).start();
    try {
      await load.succeeded(60, 0);
      const startedAt = Date.now();
      await ha.switchover(old, candidate);
      assert.equal(await ha.waitHealthy(), candidate);
      const doneAt = Date.now();
      await load.succeeded(60, doneAt);
      await load.stop();
      const stats = figures(load, startedAt);
      const slowest = Math.max(...load.writes.filter((w) => w.sentAt >= startedAt).map((w) => w.answeredAt - w.sentAt));
      console.log(
        `# switchover ${old} → ${candidate}: healthy after ${doneAt - startedAt} ms; longest time without a write answered ` +
          `${load.longestGap(startedAt, doneAt + 5_000)} ms, slowest write ${slowest} ms; ${stats.writes} write attempts, ` +
          `${stats.failed} failed ${JSON.stringify(stats.byOutcome)}, ${load.retries} client retries`,
      );
      assert.deepEqual(load.unexpected, []);
      assert.deepEqual(stats.byOutcome, {}, `no request failed: ${load.serverErrors.join('; ')}`);
      assert.equal(load.retries, 0, 'no client had to retry');
      assert.deepEqual(await lostOrDoubled(ha, candidate, load), []);
    } finally {
      await load.stop();
    }
  });
});
