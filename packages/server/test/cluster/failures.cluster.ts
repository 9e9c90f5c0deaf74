/**
 * The deploy/ recipe when things break: an API instance and a worker killed with SIGKILL under
 * load, the database's connections terminated (idle and under load, repeatedly), and a database
 * that refuses connections for seconds. No process exits, the platform recovers by itself, and
 * nothing accepted (a 2xx create, a final status) is lost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { paymentInput, type TestMerchant } from '../harness.js';
import { type Receiver, startReceiver } from '../receiver.js';
import {
  clusterSkip,
  exitedProcesses,
  Load,
  missingOrders,
  onboard,
  postTo,
  sleep,
  sql,
  startTestCluster,
  type TestCluster,
  until,
  waitDelivered,
} from './support.js';

const skip = clusterSkip();
if (skip) console.log(`# cluster suite skipped: ${skip}`);

const TERMINATE = `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()`;

/** Milliseconds until a create through HAProxy succeeds again. */
async function createWorks(cluster: TestCluster, merchant: TestMerchant, receiver: Receiver, timeoutMs = 30_000) {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const answer = await postTo(
      cluster.url,
      merchant,
      '/api/v1/payments',
      paymentInput({ webhookUrl: `${receiver.url}/hook` }),
    ).catch(() => undefined);
    if (answer?.status === 200) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`no create succeeded within ${timeoutMs} ms`);
}

describe('cluster: crashes and database outages', { skip }, () => {
  let cluster: TestCluster;
  let merchant: TestMerchant;
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
    cluster = await startTestCluster();
    merchant = onboard(cluster);
  });

  after(async () => {
    await cluster?.close();
    await receiver?.close();
  });

  it('kill -9 of an API instance and of a worker under load loses nothing accepted', async () => {
    const load = new Load(cluster.url, merchant, receiver, { concurrency: 6, maxRequests: 20_000 }).start();
    await load.answeredMore(100);
    const api = cluster.apis[0]!;
    const worker = cluster.workers[0]!;
    assert.deepEqual(await api.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
    await load.answeredMore(100);
    assert.deepEqual(await worker.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
    await load.answeredMore(100);
    await api.start();
    await worker.start();
    await cluster.waitRouted();
    await load.answeredMore(100);
    const stats = await load.stop();
    console.log(`# kill -9: ${JSON.stringify(stats)}, orders ${load.created.size}, final ${load.finals.size}`);
    if (load.errors.length > 0) console.log(`# kill -9, requests without an answer: ${load.errors.join('; ')}`);
    assert.deepEqual(await missingOrders(cluster.url, merchant, load), [], 'every 2xx create is queryable');
    // An event the killed worker had claimed waits for its lease (60 s) to run out.
    assert.deepEqual(await waitDelivered(receiver, load, 90_000), [], 'every final-state event delivered');
    assert.deepEqual(exitedProcesses(cluster), []);
  });

  it("the database's connections terminated, idle and under load, repeatedly: nothing exits, nothing is lost", async () => {
    for (let i = 0; i < 3; i++) {
      await sql(cluster.databaseUrl, TERMINATE);
      await sleep(300);
    }
    const idleRecovery = await createWorks(cluster, merchant, receiver);
    const load = new Load(cluster.url, merchant, receiver, { concurrency: 6, maxRequests: 20_000 }).start();
    let terminated = 0;
    for (let i = 0; i < 6; i++) {
      await load.answeredMore(40);
      terminated += (await sql(cluster.databaseUrl, TERMINATE)).rows[0].n as number;
    }
    await load.answeredMore(60);
    const stats = await load.stop();
    const underLoadRecovery = await createWorks(cluster, merchant, receiver);
    console.log(
      `# terminations: ${terminated} backends ended under load, recovery idle ${idleRecovery} ms / after load ${underLoadRecovery} ms, ${JSON.stringify(stats)}`,
    );
    assert.ok(terminated > 0);
    assert.deepEqual(exitedProcesses(cluster), []);
    // A request caught mid-statement may be answered 503 SERVICE_UNAVAILABLE; nothing else fails.
    assert.deepEqual(stats.noAnswer, {}, load.errors.slice(0, 5).join('; '));
    const serverErrors = Object.keys(stats.statuses).filter((status) => Number(status) >= 500 && status !== '503');
    assert.deepEqual(serverErrors, [], load.errors.slice(0, 5).join('; '));
    assert.equal(stats.shapeless, 0);
    assert.deepEqual(await missingOrders(cluster.url, merchant, load), []);
    assert.deepEqual(await waitDelivered(receiver, load, 30_000), []);
  });

  it('a database refusing connections for seconds: /readyz is 503 meanwhile, then all recover by themselves', async () => {
    const name = new URL(cluster.databaseUrl).pathname.slice(1);
    const load = new Load(cluster.url, merchant, receiver, { concurrency: 4, maxRequests: 20_000 }).start();
    await load.answeredMore(40);
    await sql(cluster.databaseUrl, `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`, 'postgres');
    let allowed = false;
    try {
      await sql(
        cluster.databaseUrl,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`,
        'postgres',
      );
      const notReady = await Promise.all(cluster.apis.map((api) => until(`${api.url}/readyz`, 503, 10_000)));
      const body = (await fetch(`${cluster.apis[0]!.url}/readyz`).then((r) => r.json())) as { msg: string };
      assert.equal(body.msg, 'NOT_READY');
      await sleep(4_000);
      // No instance is ready, yet HAProxy does not answer for them: a live one holds the request
      // for its retry window, then answers 503 itself (with its message, which HAProxy's has not).
      const during = await postTo(cluster.url, merchant, '/api/v1/payments', paymentInput());
      assert.equal(during.status, 503, 'an instance answers after its retry window');
      assert.equal(during.body.msg, 'SERVICE_UNAVAILABLE');
      assert.match(String(during.body.message), /briefly unavailable/);
      await sql(cluster.databaseUrl, `ALTER DATABASE ${name} ALLOW_CONNECTIONS true`, 'postgres');
      allowed = true;
      const back = Date.now();
      await Promise.all(cluster.apis.map((api) => until(`${api.url}/readyz`, 200, 30_000)));
      const readyAfter = Date.now() - back;
      const createAfter = readyAfter + (await createWorks(cluster, merchant, receiver));
      await load.answeredMore(60);
      const stats = await load.stop();
      console.log(
        `# outage: /readyz 503 after ${Math.max(...notReady)} ms; after re-allowing: ready in ${readyAfter} ms, a create through HAProxy in ${createAfter} ms; ${JSON.stringify(stats)}`,
      );
      assert.ok(createAfter < 20_000, 'recovers within seconds');
      assert.deepEqual(stats.noAnswer, {}, load.errors.slice(0, 5).join('; '));
      const serverErrors = Object.keys(stats.statuses).filter((status) => Number(status) >= 500 && status !== '503');
      assert.deepEqual(serverErrors, [], load.errors.slice(0, 5).join('; '));
      assert.equal(stats.shapeless, 0);
      assert.deepEqual(exitedProcesses(cluster), []);
      assert.deepEqual(await missingOrders(cluster.url, merchant, load), []);
      assert.deepEqual(await waitDelivered(receiver, load, 30_000), []);
    } finally {
      if (!allowed) await sql(cluster.databaseUrl, `ALTER DATABASE ${name} ALLOW_CONNECTIONS true`, 'postgres');
      if (!allowed) await load.stop();
    }
  });
});
