/**
 * The API Pix callback's mTLS terminated at the edge (issue 26, item 5): Debian's HAProxy with
 * deploy/haproxy/haproxy.cfg and deploy/haproxy/pix-callback.cfg in front of the platform, and
 * `paygate-pix` calling back through it over https with its client certificate. Skipped where
 * HAProxy is not installed (`.ci/run` installs it).
 *
 * The platform runs no poller here: a payment that settles did so through the edge's callback.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { createMerchant, get, paymentInput, post, startTestPlatform, type TestPlatform } from './harness.js';
import { control, type Simulator, startSimulator, stopSimulator, waitFor } from './pix-sim-harness.js';

const DEPLOY = join(import.meta.dirname, '../../../deploy/haproxy');
const HAPROXY = ['haproxy', '/usr/sbin/haproxy'].find((path) => spawnSync(path, ['-v']).status === 0);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(
  'the Pix callback through HAProxy terminating its mTLS',
  { skip: !HAPROXY && 'haproxy is not installed' },
  () => {
    let sim: Simulator;
    let platform: TestPlatform;
    let haproxy: ChildProcess;
    let edge: string;
    let tls: { ca: string; platformCert: string; platformKey: string };

    before(async () => {
      sim = await startSimulator();
      const edgePort = await freePort();
      edge = `https://127.0.0.1:${edgePort}`;
      const channels = join(sim.dir, 'channels.json');
      writeFileSync(channels, JSON.stringify({ channels: [{ ...sim.channel, name: 'pix' }] }));
      platform = await startTestPlatform({
        env: { PAYGATE_CHANNELS: channels, PAYGATE_WORKERS: 'false', PAYGATE_PUBLIC_URL: edge },
      });
      const read = (name: string) => readFileSync(join(sim.tlsDir, name), 'utf8');
      tls = { ca: read('ca.pem'), platformCert: read('client.pem'), platformKey: read('client-key.pem') };
      // The edge's own certificate: the simulator's server certificate for 127.0.0.1 (its CA is one
      // the simulator trusts on callbacks); the provider's client CA: the simulator's CA.
      const edgePem = join(sim.dir, 'edge.pem');
      writeFileSync(edgePem, `${read('server.pem')}\n${read('server-key.pem')}`);
      const instance = new URL(platform.url).host;
      haproxy = spawn(
        HAPROXY as string,
        ['-db', '-f', join(DEPLOY, 'haproxy.cfg'), '-f', join(DEPLOY, 'pix-callback.cfg')],
        {
          env: {
            ...process.env,
            PAYGATE_LB_BIND: `127.0.0.1:${await freePort()}`,
            PAYGATE_LB_STATS: `127.0.0.1:${await freePort()}`,
            PAYGATE_API_1: instance,
            PAYGATE_API_2: instance,
            PAYGATE_LB_ERRORS: join(DEPLOY, 'errors'),
            PAYGATE_PIX_BIND: `127.0.0.1:${edgePort}`,
            PAYGATE_PIX_CERT: edgePem,
            PAYGATE_PIX_CLIENT_CA: join(sim.tlsDir, 'ca.pem'),
            PAYGATE_PIX_CLIENT_CN: 'paygate-pix callbacks',
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let errors = '';
      haproxy.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      // Ready once the instances pass their health checks: /healthz answers through the edge.
      await waitFor(
        async () => (await call('GET', '/healthz').catch(() => undefined))?.status === 200,
        `the edge (${errors})`,
      );
    });

    after(async () => {
      haproxy?.kill('SIGTERM');
      await platform?.close();
      if (sim) await stopSimulator(sim);
    });

    /** One request to the edge, trusting the simulator's CA, with or without a client certificate. */
    async function call(
      method: 'GET' | 'POST',
      path: string,
      options: { cert?: string; key?: string; body?: string } = {},
    ) {
      const dispatcher = new Agent({
        connect: { ca: tls.ca, ...(options.cert ? { cert: options.cert, key: options.key } : {}) },
      });
      try {
        const response = await request(`${edge}${path}`, {
          method,
          dispatcher,
          ...(options.body !== undefined
            ? { body: options.body, headers: { 'content-type': 'application/json' } }
            : {}),
        });
        await response.body.text();
        return { status: response.statusCode };
      } finally {
        await dispatcher.close();
      }
    }

    it("the provider's callback passes the edge with its certificate and settles the payment", async () => {
      const merchant = await createMerchant(platform);
      const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const orderNo = created.body.data?.orderNo as string;
      const row = await platform.services.db.query<{ channel_trade_no: string }>(
        'SELECT channel_trade_no FROM payments WHERE order_no = $1',
        [orderNo],
      );
      await control(sim, 'pay', { txid: row.rows[0]?.channel_trade_no, payer: { name: 'Ana', cpf: '00011122233' } });
      await waitFor(async () => {
        const answer = await get<{ status: string }>(platform, merchant, '/api/v1/payments', `orderNo=${orderNo}`);
        return answer.body.data?.status === 'SUCCEEDED';
      }, 'SUCCEEDED through the callback');
      const recorded = await platform.services.db.query<{ headers: string }>(
        'SELECT headers FROM channel_notifications WHERE order_no = $1',
        [orderNo],
      );
      const headers = JSON.parse(recorded.rows[0]?.headers ?? '{}') as Record<string, string>;
      assert.match(headers['x-client-cert-subject'] ?? '', /CN=paygate-pix callbacks/);
    });

    it('without a client certificate, or with one of another subject, the callback path is 403; other paths pass', async () => {
      const body = JSON.stringify({ pix: [] });
      assert.equal((await call('POST', '/channels/pix/notifications/pix', { body })).status, 403);
      const otherSubject = { cert: tls.platformCert, key: tls.platformKey, body };
      assert.equal((await call('POST', '/channels/pix/notifications/pix', otherSubject)).status, 403);
      assert.equal((await call('GET', '/healthz')).status, 200);
    });
  },
);
