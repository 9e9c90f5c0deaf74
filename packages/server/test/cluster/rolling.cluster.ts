/**
 * The deploy/ recipe under load: rolling restarts through HAProxy lose no request and no webhook;
 * a signed request replayed through other instances is accepted once; duplicate creates spread
 * over instances make one order; SIGTERM sent straight to an instance resets nothing it took.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { paymentInput, type TestMerchant } from '../harness.js';
import { type Receiver, startReceiver } from '../receiver.js';
import {
  clusterSkip,
  exitedProcesses,
  getFrom,
  Load,
  missingOrders,
  onboard,
  postTo,
  send,
  signedPost,
  sleep,
  startTestCluster,
  type TestCluster,
  until,
  waitDelivered,
} from './support.js';

const skip = clusterSkip();
if (skip) console.log(`# cluster suite skipped: ${skip}`);

describe('cluster: rolling restarts, replays, SIGTERM', { skip }, () => {
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

  it('a rolling restart of every API instance and worker loses no request and no webhook', async () => {
    const load = new Load(cluster.url, merchant, receiver, { concurrency: 6, maxRequests: 20_000 }).start();
    await load.answeredMore(50);
    for (const proc of [...cluster.apis, ...cluster.workers]) {
      const exit = await proc.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, `${proc.name} exits 0 on SIGTERM`);
      await proc.start();
      if (proc.kind === 'api') await cluster.waitRouted();
      await load.answeredMore(30);
    }
    const stats = await load.stop();
    console.log(`# rolling restart: ${JSON.stringify(stats)}, orders ${load.created.size}, final ${load.finals.size}`);
    assert.equal(load.failed, 0, `every request answered without a 5xx: ${load.errors.slice(0, 5).join('; ')}`);
    assert.equal(stats.sent, stats.answered);
    assert.equal(stats.shapeless, 0);
    assert.ok(load.created.size > 0 && load.finals.size > 0);
    assert.deepEqual(await missingOrders(cluster.url, merchant, load), []);
    assert.deepEqual(await waitDelivered(receiver, load, 30_000), [], 'every final-state event delivered');
    assert.deepEqual(exitedProcesses(cluster), []);
  });

  it('the same signed request through different instances succeeds once, the others are 401', async () => {
    const signed = signedPost(merchant, '/api/v1/payments', paymentInput({ webhookUrl: `${receiver.url}/hook` }));
    const targets = [cluster.apis[0]!.url!, cluster.apis[1]!.url!, cluster.url, cluster.url];
    const answers = await Promise.all(
      targets.map((base) =>
        send(base, '/api/v1/payments', { method: 'POST', headers: signed.headers, body: signed.body }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 401, 401, 401],
      JSON.stringify(answers.map((a) => a.body)),
    );
    for (const answer of answers.filter((a) => a.status === 401)) assert.equal(answer.body.msg, 'UNAUTHORIZED');
  });

  it('duplicate creates spread over the instances make one order', async () => {
    const input = paymentInput({ webhookUrl: `${receiver.url}/hook` });
    const targets = [cluster.apis[0]!.url!, cluster.apis[1]!.url!, cluster.url];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => postTo(targets[i % 3]!, merchant, '/api/v1/payments', input)),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 200),
    );
    assert.equal(new Set(answers.map((a) => a.body.data?.orderNo)).size, 1);
    const listed = await getFrom(
      cluster.url,
      merchant,
      '/api/v1/payments',
      `merchantOrderNo=${encodeURIComponent(input.merchantOrderNo as string)}`,
    );
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data?.orderNo, answers[0]!.body.data?.orderNo);
  });

  it('SIGTERM straight to an instance under load: every request it took is answered', async () => {
    const api = cluster.apis[0]!;
    // New connection per request (no keep-alive), as from clients that stop once refused.
    const load = new Load(api.url!, merchant, receiver, { concurrency: 6, maxRequests: 20_000, keepAlive: false });
    load.start();
    await load.answeredMore(40);
    const signalled = Date.now();
    const exiting = api.stop('SIGTERM');
    const drainSeen = await until(`${api.url}/readyz`, 503, 3_000);
    const answeredBefore = load.stats.answered;
    // Keep sending until the instance stops accepting: refused connections never reached it.
    while (api.running && load.stats.noAnswer.ECONNREFUSED === undefined) await sleep(20);
    const stats = await load.stop();
    const exit = await exiting;
    console.log(
      `# direct SIGTERM: readyz 503 after ${drainSeen} ms, exit after ${Date.now() - signalled} ms, ${JSON.stringify(stats)}`,
    );
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(stats.answered > answeredBefore, 'requests are served while draining');
    const resets = Object.entries(stats.noAnswer).filter(([code]) => code !== 'ECONNREFUSED');
    assert.deepEqual(resets, [], `no request it took was reset: ${load.errors.slice(0, 5).join('; ')}`);
    const serverErrors = Object.keys(stats.statuses).filter((status) => Number(status) >= 500 && status !== '503');
    assert.deepEqual(serverErrors, []);
    assert.equal(stats.shapeless, 0, 'every answer, also while closing, is {"msg": ...}');
    assert.deepEqual(await missingOrders(cluster.url, merchant, load), []);
    await api.start();
    await cluster.waitRouted();
    assert.deepEqual(await waitDelivered(receiver, load, 30_000), []);
  });

  it('no instance or worker exited on its own', () => {
    assert.deepEqual(exitedProcesses(cluster), []);
  });
});
