import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFaultProxy } from '../src/fault-proxy.js';

/** An echo server: every byte comes back. */
async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function connect(port: number): Promise<Socket> {
  const socket = createConnection({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  return socket;
}

/** Writes `text` and resolves what comes back within `timeoutMs` (undefined: nothing). */
async function roundTrip(socket: Socket, text: string, timeoutMs = 2000): Promise<string | undefined> {
  const answer = new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(chunk.toString());
    });
  });
  socket.write(text);
  return answer;
}

/** How a socket ended: `reset` (ECONNRESET), `closed`, or `open` still after `timeoutMs`. */
function ending(socket: Socket, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), timeoutMs);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(error.code === 'ECONNRESET' ? 'reset' : (error.code ?? 'error'));
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
}

describe('fault proxy', () => {
  let echo: { server: Server; port: number };
  before(async () => {
    echo = await echoServer();
  });
  after(() => new Promise<void>((resolve) => echo.server.close(() => resolve())));

  test(
    'pass forwards both ways; delay holds each chunk back; blackhole holds it until pass',
    { timeout: 10_000 },
    async () => {
      const proxy = await startFaultProxy({ target: { port: echo.port } });
      const socket = await connect(proxy.port);
      assert.equal(await roundTrip(socket, 'one'), 'one');

      proxy.setMode({ kind: 'delay', ms: 300 });
      const started = Date.now();
      assert.equal(await roundTrip(socket, 'two'), 'two');
      assert.ok(Date.now() - started >= 550, 'delayed on the way there and back');

      proxy.setMode({ kind: 'blackhole' });
      assert.equal(await roundTrip(socket, 'three', 500), undefined, 'nothing comes back');
      const late = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
      proxy.setMode({ kind: 'pass' });
      assert.equal(await late, 'three', 'what was held goes once the link is back');
      assert.equal(proxy.stats().open, 1);
      socket.destroy();
      await proxy.close();
    },
  );

  test(
    'reset ends open and new connections with a reset; cut ends only those open now',
    { timeout: 10_000 },
    async () => {
      const proxy = await startFaultProxy({ target: { port: echo.port } });
      const open = await connect(proxy.port);
      assert.equal(await roundTrip(open, 'x'), 'x');
      const ended = ending(open);
      proxy.setMode({ kind: 'reset' });
      assert.equal(await ended, 'reset');
      const fresh = createConnection({ host: '127.0.0.1', port: proxy.port });
      assert.equal(await ending(fresh), 'reset');

      proxy.setMode({ kind: 'pass' });
      const again = await connect(proxy.port);
      assert.equal(await roundTrip(again, 'y'), 'y');
      const cutOff = ending(again);
      assert.equal(proxy.cut(), 1);
      assert.equal(await cutOff, 'reset');
      const after = await connect(proxy.port);
      assert.equal(await roundTrip(after, 'z'), 'z', 'a cut leaves the mode as it was');
      after.destroy();
      assert.ok(proxy.stats().reset >= 3);
      await proxy.close();
    },
  );

  test('a server that is gone is a reset for the client', { timeout: 10_000 }, async () => {
    const gone = await echoServer();
    await new Promise<void>((resolve) => gone.server.close(() => resolve()));
    const proxy = await startFaultProxy({ target: { port: gone.port } });
    const socket = createConnection({ host: '127.0.0.1', port: proxy.port });
    assert.equal(await ending(socket), 'reset');
    await sleep(10);
    await proxy.close();
  });
});
