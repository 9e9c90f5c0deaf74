import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { RawBodyUnavailableError } from '../src/errors.js';
import { readRawBody } from '../src/http.js';

/**
 * readRawBody on a real node:http server: the exact bytes however they arrive, a bound on the
 * size, and an answer (never a hang) when the sender gives up halfway.
 */
async function receive(send: (port: number) => void, limit?: number): Promise<{ body?: Buffer; error?: unknown }> {
  let served: (outcome: { body?: Buffer; error?: unknown }) => void = () => {};
  const outcome = new Promise<{ body?: Buffer; error?: unknown }>((resolve) => (served = resolve));
  const server = createServer((req: IncomingMessage, res) => {
    readRawBody(req, limit).then(
      (body) => {
        served({ body });
        res.end('ok');
      },
      (error: unknown) => {
        served({ error });
        if (!res.destroyed) res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    send((server.address() as AddressInfo).port);
    return await outcome;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const post = (port: number, length: number) =>
  request({ port, host: '127.0.0.1', method: 'POST', path: '/hook', headers: { 'content-length': String(length) } }).on(
    'error',
    () => {},
  );

describe('readRawBody (node:http)', () => {
  it('returns the exact bytes, sent in several writes', async () => {
    const parts = ['{"eventId":', '"evt_1",', '"x":"\u00e9\u0000"}'].map((part) => Buffer.from(part));
    const whole = Buffer.concat(parts);
    const { body, error } = await receive((port) => {
      const req = post(port, whole.length);
      for (const part of parts) req.write(part);
      req.end();
    });
    assert.equal(error, undefined);
    assert.deepEqual(body, whole);
  });

  it('refuses a body past the limit', async () => {
    const { body, error } = await receive((port) => post(port, 1500).end(Buffer.alloc(1500, 'x')), 1000);
    assert.equal(body, undefined);
    assert.ok(error instanceof RawBodyUnavailableError);
    assert.match(error.message, /exceeds 1000 bytes/);
  });

  it('refuses, rather than waits forever on, a body whose sender gave up halfway', { timeout: 10_000 }, async () => {
    const { body, error } = await receive((port) => {
      const req = post(port, 1000);
      req.write(Buffer.alloc(100, 'x'), () => setTimeout(() => req.destroy(), 50));
    });
    assert.equal(body, undefined);
    assert.ok(error instanceof Error, String(error));
  });
});
