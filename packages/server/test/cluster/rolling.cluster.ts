/**
 * The deploy/ recipe under load: rolling restarts through HAProxy lose no request and no webhook;
 * a signed request replayed through other instances is accepted once; duplicate creates spread
 * over instances make one order; SIGTERM sent straight to an instance resets nothing it took.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { paymentInput, type TestMerchant } from '../harness.js';
import { type Receiver, startReceiver } from '../receiver.js';
import {
  type Answer,
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

/**
 * A POST whose headers and first half of the body are sent now, the rest on `finish()`: a request
 * the instance has taken and is still reading.
 */
function slowPost(port: number, signed: { headers: Record<string, string>; body: Buffer }) {
  const half = Math.floor(signed.body.length / 2);
  let finish = () => {};
  const answer = new Promise<{ status: number; connection: string | undefined; body: Answer['body'] }>(
    (resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/api/v1/payments',
          method: 'POST',
          agent: false,
          headers: { ...signed.headers, 'content-length': String(signed.body.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
            }),
          );
        },
      );
      req.on('error', reject);
      req.flushHeaders();
      req.write(signed.body.subarray(0, half));
      finish = () => req.end(signed.body.subarray(half));
    },
  );
  return { answer, finish: () => finish() };
}

/** Resolves with the time a new connection to `port` is first refused. */
async function refused(port: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const code = await new Promise<string | undefined>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    });
    if (code === 'ECONNREFUSED') return Date.now();
    await sleep(20);
  }
  throw new Error(`port ${port} still accepts after ${timeoutMs} ms`);
}

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

  it('SIGTERM straight to an instance under load: requests keep being served while it drains, and requests in flight when it closes are answered', async () => {
    const api = cluster.apis[0]!;
    const port = api.port!;
    const load = new Load(api.url!, merchant, receiver, { concurrency: 6, maxRequests: 20_000 }).start();
    await load.answeredMore(40);
    const signalled = Date.now();
    const exiting = api.stop('SIGTERM');
    try {
      const drainSeen = await until(`${api.url}/readyz`, 503, 3_000);
      const answeredBefore = load.stats.answered;
      // Requests that are still being uploaded when the listener closes (drain: 3 s).
      await sleep(1_500);
      const slow = Array.from({ length: 4 }, () =>
        slowPost(port, signedPost(merchant, '/api/v1/payments', paymentInput({ webhookUrl: `${receiver.url}/hook` }))),
      );
      // Clients stop sending new requests before the drain ends (a balancer has long moved away):
      // a connection still in the kernel's accept queue when the listener closes is reset by the
      // kernel, before the instance ever saw it.
      await sleep(500);
      const stats = await load.stop();
      const refusedAfter = await refused(port, 10_000);
      for (const request of slow) request.finish();
      const slowAnswers = await Promise.all(slow.map((request) => request.answer));
      const exit = await exiting;
      console.log(
        `# direct SIGTERM: readyz 503 after ${drainSeen} ms, listener closed after ${refusedAfter - signalled} ms, exit after ${Date.now() - signalled} ms, ${JSON.stringify(stats)}, slow uploads ${JSON.stringify(slowAnswers.map((a) => [a.status, a.connection, a.body.msg]))}`,
      );
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.ok(stats.answered > answeredBefore, 'requests are served while draining');
      assert.deepEqual(stats.noAnswer, {}, `no request was reset: ${load.errors.slice(0, 5).join('; ')}`);
      assert.deepEqual(Object.keys(stats.statuses), ['200']);
      assert.deepEqual(
        slowAnswers.map((a) => [a.status, a.body.msg, a.connection]),
        slowAnswers.map(() => [200, 'SUCCESS', 'close']),
        'requests in flight when the listener closed are answered, and their connections end',
      );
      for (const answer of slowAnswers) load.created.set(answer.body.data?.orderNo as string, 'slow');
      assert.deepEqual(await missingOrders(cluster.url, merchant, load), []);
    } finally {
      await exiting;
      await api.start();
      await cluster.waitRouted();
    }
    assert.deepEqual(await waitDelivered(receiver, load, 30_000), []);
  });

  it('no instance or worker exited on its own', () => {
    assert.deepEqual(exitedProcesses(cluster), []);
  });
});
