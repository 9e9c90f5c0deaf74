import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Destination } from '../src/http/ssrf.js';
import { type SendOptions, send } from '../src/modules/webhooks/sender.js';
import { RECEIVER_CERT, RECEIVER_KEY } from './tls-fixture.js';

/**
 * The webhook sender against real servers on loopback: what it sends and to where, what it reads
 * of the answer, and when it gives up. The SSRF guard's decisions are in ssrf.test.ts; this is
 * the connection it makes once the guard has chosen an address.
 */

const OPTIONS: SendOptions = { connectTimeoutMs: 300, totalTimeoutMs: 600, excerptBytes: 1024, now: Date.now };
const BODY = Buffer.from('{"eventId":"evt_1"}');

interface Received {
  readonly method: string;
  readonly target: string;
  readonly host: string | undefined;
  readonly userAgent: string | undefined;
  readonly body: string;
  /** Which connection it came on (numbered from 1 in the order they were opened). */
  readonly connection: number;
}

/** A loopback HTTP server answering with `answer`, recording requests and their connections. */
async function startServer(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const received: Received[] = [];
  const connections = new WeakMap<Socket, number>();
  let opened = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        target: req.url ?? '',
        host: req.headers.host,
        userAgent: req.headers['user-agent'],
        body: Buffer.concat(chunks).toString('utf8'),
        connection: connections.get(req.socket) ?? 0,
      });
      answer(req, res);
    });
  });
  server.on('connection', (socket: Socket) => connections.set(socket, ++opened));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Where the guard would send `url`: pinned to 127.0.0.1 whatever its host name. */
const pinned = (url: string): Destination => ({ url: new URL(url), address: '127.0.0.1', family: 4 });

describe('webhook sender', () => {
  it('connects to the pinned address, never to what the host name resolves to, and sends the request as signed', async () => {
    const server = await startServer((_req, res) => res.end('thanks'));
    try {
      // A name that resolves nowhere (RFC 6761 .invalid): only the pinned address can be reached.
      const result = await send(
        pinned(`http://hooks.shop.invalid:${server.port}/webhook/payment?shop=a%20b&x=`),
        { 'content-type': 'application/json', 'webhook-event-id': 'evt_1' },
        BODY,
        OPTIONS,
      );
      assert.equal(result.statusCode, 200);
      assert.equal(result.excerpt, 'thanks');
      assert.equal(result.error, undefined);
      assert.deepEqual(server.received, [
        {
          method: 'POST',
          target: '/webhook/payment?shop=a%20b&x=',
          host: `hooks.shop.invalid:${server.port}`,
          userAgent: 'Paygate-Webhooks/1',
          body: BODY.toString('utf8'),
          connection: 1,
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('keeps connections for the next deliveries, but drops one whose answer was cut off at the excerpt', async () => {
    let answer = 'ok';
    const server = await startServer((_req, res) => res.end(answer));
    try {
      const destination = pinned(`http://keepalive.shop.invalid:${server.port}/hook`);
      const connections = async (deliveries: number) => {
        const from = server.received.length;
        for (let i = 0; i < deliveries; i++) assert.equal((await send(destination, {}, BODY, OPTIONS)).excerpt, 'ok');
        return server.received.slice(from).map((r) => r.connection);
      };
      const first = await connections(6);
      assert.ok(new Set(first).size <= 2, `six deliveries one after another reuse their connections: ${first}`);
      answer = 'x'.repeat(5_000);
      const large = await send(destination, {}, BODY, OPTIONS);
      assert.equal(large.statusCode, 200);
      assert.equal(large.excerpt, 'x'.repeat(1024), 'only the excerpt is read');
      const cutOff = server.received.at(-1)?.connection;
      answer = 'ok';
      const later = await connections(4);
      assert.ok(!later.includes(cutOff as number), `the cut-off connection ${cutOff} is not used again: ${later}`);
    } finally {
      await server.close();
    }
  });

  it('a redirect is an answer like any other, not followed', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(307, { location: '/elsewhere' }).end();
    });
    try {
      const result = await send(pinned(`http://redirect.shop.invalid:${server.port}/hook`), {}, BODY, OPTIONS);
      assert.equal(result.statusCode, 307);
      assert.deepEqual(
        server.received.map((r) => r.target),
        ['/hook'],
      );
    } finally {
      await server.close();
    }
  });

  it('reads Retry-After of a 429 or 503, in seconds or as a date', async () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    const answers = [
      { status: 503, retryAfter: '7' },
      { status: 429, retryAfter: 'Tue, 24 Nov 2026 10:00:30 GMT' },
      { status: 500, retryAfter: '7' },
    ];
    let next = 0;
    const server = await startServer((_req, res) => {
      const { status, retryAfter } = answers[next++] as (typeof answers)[number];
      res.writeHead(status, { 'retry-after': retryAfter }).end('busy');
    });
    try {
      const destination = pinned(`http://busy.shop.invalid:${server.port}/hook`);
      const results = [];
      for (let i = 0; i < answers.length; i++)
        results.push(await send(destination, {}, BODY, { ...OPTIONS, now: () => now }));
      assert.deepEqual(
        results.map((r) => [r.statusCode, r.retryAfterMs]),
        [
          [503, 7_000],
          [429, 30_000],
          [500, undefined],
        ],
      );
    } finally {
      await server.close();
    }
  });

  it('gives up on an answer that does not come, and on one that stops halfway', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/halfway') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('partial');
      }
      // Otherwise never answers.
    });
    try {
      const silent = await send(pinned(`http://silent.shop.invalid:${server.port}/silent`), {}, BODY, OPTIONS);
      assert.equal(silent.statusCode, undefined);
      assert.equal(silent.error, 'no answer within 600 ms');
      const halfway = await send(pinned(`http://silent.shop.invalid:${server.port}/halfway`), {}, BODY, OPTIONS);
      assert.equal(halfway.statusCode, undefined, 'an answer that never completes is no answer');
      assert.equal(halfway.error, 'no answer within 600 ms');
    } finally {
      await server.close();
    }
  });

  describe('a server that does not accept the connection', () => {
    // A socket listening with a backlog of 0 that never accepts: the first connection fills the
    // queue, and the kernel leaves every later one unanswered (its SYN is dropped).
    let listener: ChildProcess;
    let port: number;
    const filler: Socket[] = [];
    before(async () => {
      listener = spawn('python3', [
        '-c',
        "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(120)",
      ]);
      port = await new Promise<number>((resolve, reject) => {
        listener.stdout?.once('data', (data) => resolve(Number(String(data).trim())));
        listener.once('error', reject);
      });
      const first = connect(port, '127.0.0.1');
      filler.push(first);
      await new Promise((resolve) => first.once('connect', resolve));
    });
    after(() => {
      for (const socket of filler) socket.destroy();
      listener.kill();
    });

    it('is given up after the connect timeout', async () => {
      // undici checks the connect timeout on its coarse timer (half a second): the total is far off.
      const result = await send(pinned(`http://backlog.shop.invalid:${port}/hook`), {}, BODY, {
        ...OPTIONS,
        totalTimeoutMs: 5_000,
      });
      assert.equal(result.statusCode, undefined);
      assert.equal(result.error, 'no connection within 300 ms');
    });
  });

  it('https: the certificate must be valid for the URL host; a self-signed one is refused', async () => {
    const server = createHttpsServer({ key: RECEIVER_KEY, cert: RECEIVER_CERT }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await send(pinned(`https://127.0.0.1:${port}/hook`), {}, BODY, OPTIONS);
      assert.equal(result.statusCode, undefined);
      assert.match(result.error ?? '', /self[- ]signed certificate/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
