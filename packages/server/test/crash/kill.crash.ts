/**
 * Crash testing as a habit (issue 25, item 5): the platform, a process of its own on the
 * embedded database, is SIGKILLed under a mixed load (payment creates and settlements through
 * the sandbox, payout creates, settlements and returns), several times in a row. After each kill
 * the data directory is opened as it was left: every change the platform answered 200 for is
 * there, nothing is applied twice, and the ledger balances; then the platform starts again on it
 * and the load goes on. `npm run test:crash` (and .ci/run); too long for `npm test`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/db.js';
import { buildWrite, paymentInput, type TestMerchant } from '../harness.js';
import { payoutInput } from '../money-harness.js';
import { onboard, type SpawnedPlatform, spawnPlatform, stopSpawned } from '../spawned.js';

const ADMIN_TOKEN = 'crash-test-admin-token-0123456789abcdef';
/** Kills in a row. */
const ROUNDS = 4;
/** Requests in flight at once. */
const CONCURRENCY = 4;
/** Acknowledged changes per round before the kill (the kill lands with requests in flight). */
const ACKS_PER_ROUND = 24;

/** How far an order got, as the platform acknowledged it (or, after a kill, as stored). */
const RANK: Record<string, number> = { PENDING: 0, SUCCEEDED: 1, REFUNDED: 2 };
/** The ledger postings each acknowledged status implies, per order type. */
const POSTINGS = {
  payment: { PENDING: [], SUCCEEDED: ['payment'] },
  payout: {
    PENDING: ['payout_reserve'],
    SUCCEEDED: ['payout_reserve', 'payout_settle'],
    REFUNDED: ['payout_reserve', 'payout_settle', 'refund'],
  },
} as const;

interface Acknowledged {
  readonly type: 'payment' | 'payout';
  status: 'PENDING' | 'SUCCEEDED' | 'REFUNDED';
}

/** The load: chains of signed writes, each step recorded once the platform answered 200. */
class Load {
  readonly acked = new Map<string, Acknowledged>();
  /** Answers other than 200 while the platform was up: each one is a failure of the test. */
  readonly unexpected: string[] = [];
  private ackCount = 0;
  /** Requests whose connection the kill cut (sent, never answered). */
  cut = 0;

  constructor(private readonly merchant: TestMerchant) {}

  get acks(): number {
    return this.ackCount;
  }

  /** One signed write; the parsed answer, or undefined when the connection failed (the kill). */
  private async send(url: string, path: string, payload: unknown) {
    const signed = buildWrite(this.merchant, path, payload);
    let response: Response;
    try {
      response = await fetch(url + path, {
        method: 'POST',
        headers: signed.headers,
        body: new Uint8Array(signed.body),
      });
    } catch {
      this.cut += 1;
      return undefined;
    }
    const body = (await response.json().catch(() => undefined)) as { msg?: string; data?: { orderNo: string } };
    if (response.status !== 200 || body?.msg !== 'SUCCESS') {
      this.unexpected.push(`${path}: ${response.status} ${JSON.stringify(body)}`);
      return undefined;
    }
    this.ackCount += 1;
    return body.data;
  }

  private record(orderNo: string, type: Acknowledged['type'], status: Acknowledged['status']) {
    const known = this.acked.get(orderNo);
    if (known) known.status = status;
    else this.acked.set(orderNo, { type, status });
  }

  async paymentChain(url: string, amount = '40.00'): Promise<boolean> {
    const created = await this.send(url, '/api/v1/payments', paymentInput({ amount }));
    if (!created) return false;
    this.record(created.orderNo, 'payment', 'PENDING');
    const paid = await this.send(url, '/api/v1/sandbox/payments/simulate', {
      orderNo: created.orderNo,
      status: 'SUCCEEDED',
    });
    if (!paid) return false;
    this.record(created.orderNo, 'payment', 'SUCCEEDED');
    return true;
  }

  async payoutChain(url: string, returned: boolean): Promise<boolean> {
    const created = await this.send(url, '/api/v1/payouts', payoutInput({ amount: '10.00' }));
    if (!created) return false;
    this.record(created.orderNo, 'payout', 'PENDING');
    const settled = await this.send(url, '/api/v1/sandbox/payouts/simulate', {
      orderNo: created.orderNo,
      status: 'SUCCEEDED',
    });
    if (!settled) return false;
    this.record(created.orderNo, 'payout', 'SUCCEEDED');
    if (!returned) return true;
    const back = await this.send(url, '/api/v1/sandbox/payouts/return', { orderNo: created.orderNo });
    if (!back) return false;
    this.record(created.orderNo, 'payout', 'REFUNDED');
    return true;
  }

  /** `CONCURRENCY` workers running chains until `until()` or a failed connection. */
  async run(url: string, until: () => boolean): Promise<void> {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let i = 0; !until(); i++) {
          const kind = (worker + i) % 3;
          const going =
            kind === 0 ? await this.paymentChain(url) : await this.payoutChain(url, kind === 2 || i % 2 === 0);
          if (!going) return;
        }
      }),
    );
  }
}

/** Opens the data directory as the killed platform left it and checks it against `load`. */
async function checkStored(dataDir: string, load: Load): Promise<{ orders: number; postings: number }> {
  const db = await openDatabase({ dataDir });
  try {
    const orders = await db.query<{ order_no: string; status: string }>(
      'SELECT order_no, status FROM payments UNION ALL SELECT order_no, status FROM payouts',
    );
    const stored = new Map(orders.rows.map((row) => [row.order_no, row.status]));
    const postings = await db.query<{ order_no: string; kind: string; n: number }>(
      'SELECT order_no, kind, count(*)::int AS n FROM ledger_transactions GROUP BY order_no, kind',
    );
    const posted = new Map<string, Map<string, number>>();
    for (const row of postings.rows) {
      const kinds = posted.get(row.order_no) ?? new Map<string, number>();
      kinds.set(row.kind, row.n);
      posted.set(row.order_no, kinds);
    }
    for (const [orderNo, ack] of load.acked) {
      const status = stored.get(orderNo);
      assert.ok(status !== undefined, `${orderNo} (acknowledged ${ack.status}) is missing`);
      assert.ok(
        (RANK[status] ?? -1) >= (RANK[ack.status] ?? 0),
        `${orderNo}: acknowledged ${ack.status}, stored ${status}`,
      );
      const needed = (POSTINGS[ack.type] as Record<string, readonly string[]>)[ack.status] ?? [];
      for (const kind of needed) {
        assert.equal(posted.get(orderNo)?.get(kind), 1, `${orderNo}: its ${kind} posting, once`);
      }
    }
    for (const [orderNo, kinds] of posted) {
      for (const [kind, n] of kinds) assert.equal(n, 1, `${orderNo}: ${kind} posted ${n} times`);
    }
    const unbalanced = await db.query(
      `SELECT transaction_id, currency FROM ledger_entries GROUP BY transaction_id, currency HAVING sum(amount) <> 0`,
    );
    assert.deepEqual(unbalanced.rows, [], 'every ledger transaction balances');
    const drifted = await db.query(
      `SELECT a.id FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
        GROUP BY a.id, a.balance HAVING a.balance <> coalesce(sum(e.amount), 0)`,
    );
    assert.deepEqual(drifted.rows, [], "every account's balance is the sum of its entries");
    const books = await db.query<{ currency: string; total: string }>(
      'SELECT currency, sum(balance)::text AS total FROM ledger_accounts GROUP BY currency',
    );
    for (const row of books.rows) assert.equal(row.total, '0', `the books balance in ${row.currency}`);
    return { orders: stored.size, postings: postings.rows.length };
  } finally {
    await db.close();
  }
}

describe('SIGKILL under a mixed load on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paygate-crash-'));
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    PAYGATE_DATA_DIR: dataDir,
    PAYGATE_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_WORKERS: 'false',
    PAYGATE_SHUTDOWN_DRAIN: '0',
    PAYGATE_RATE_LIMIT: '100000',
    DATABASE_URL: '',
    LOG_LEVEL: 'info',
  };
  let running: SpawnedPlatform | undefined;
  /** A loaded machine may take a while to start the platform; the test is about what survives. */
  const start = (settings: Record<string, string>) => spawnPlatform(settings, 180_000);
  after(async () => {
    if (running) await stopSpawned(running, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${ROUNDS} kills in a row: every acknowledged change survives, nothing twice, the ledger balances`, async () => {
    running = await start(env);
    const merchant: TestMerchant = await onboard(running.url, ADMIN_TOKEN, 'Crash shop');
    const load = new Load(merchant);
    // Funds for every payout of every round, settled before the first kill.
    const funding = await load.paymentChain(running.url, '5000.00');
    assert.ok(funding, load.unexpected.join('\n'));

    for (let round = 1; round <= ROUNDS; round++) {
      const target = load.acks + ACKS_PER_ROUND;
      const current: SpawnedPlatform = running;
      const killed = (async () => {
        while (load.acks < target && current.child.exitCode === null) await sleep(5);
        current.child.kill('SIGKILL');
        await current.exited;
      })();
      await Promise.all([load.run(current.url, () => load.acks >= target), killed]);
      assert.deepEqual(load.unexpected, [], `round ${round}: answers other than 200 before the kill`);
      const stored = await checkStored(dataDir, load);
      assert.ok(stored.orders >= load.acked.size, `round ${round}`);
      running = await start(env);
    }
    // The restarted platform serves the same books: one more chain goes through.
    assert.ok(await load.paymentChain(running.url), load.unexpected.join('\n'));
    assert.ok(await load.payoutChain(running.url, true), load.unexpected.join('\n'));
    running.child.kill('SIGTERM');
    await running.exited;
    await checkStored(dataDir, load);
    assert.ok(load.acked.size >= ROUNDS * 8, `${load.acked.size} orders acknowledged`);
    assert.ok(load.cut >= 1, 'the kills landed with requests in flight');
  });
});
