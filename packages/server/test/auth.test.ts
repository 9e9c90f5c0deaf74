import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  buildSignatureBase,
  contentDigest,
  generateSigningKey,
  type SignatureParams,
  sealEnvelope,
  serializeSignature,
  serializeSignatureInput,
  sign,
  signReadRequest,
  WRITE_COMPONENTS,
} from '@paygate/protocol';
import {
  buildRead,
  buildWrite,
  count,
  createMerchant,
  databases,
  freshPostgres,
  get,
  paymentInput,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';

/** Sends raw bytes with exactly these header lines (duplicates allowed), returning status and body. */
function rawSend(
  url: string,
  method: string,
  target: string,
  headers: [string, string][],
  body?: Buffer,
): Promise<{ status: number; body: string; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    // Raw (array) headers get no Host or framing from Node: add both.
    const framed: [string, string][] = [['host', `${hostname}:${port}`], ...headers];
    if (body && !framed.some(([name]) => name.toLowerCase() === 'content-length')) {
      framed.push(['content-length', String(body.length)]);
    }
    const flat = framed.flatMap(([name, value]) => [name, value]);
    const req = httpRequest(
      { hostname, port, method, path: target, agent: false, headers: flat as unknown as Record<string, string> },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            requestId: res.headers['request-id'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

const entries = (headers: Record<string, string>): [string, string][] => Object.entries(headers);

for (const database of databases()) {
  describe(`authentication (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    const unauthorized = '{"msg":"UNAUTHORIZED"}';

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
    });
    after(() => platform.close());

    const tables = ['payments', 'events'];
    const snapshot = async () => Promise.all(tables.map((t) => count(platform, t)));

    /** Sends a write built from a valid one after `mutate`, and asserts a bare 401 that wrote nothing. */
    async function refusedWrite(
      mutate: (w: { method: string; target: string; headers: [string, string][]; body: Buffer }) => void,
      signedAt = platform.services.now(),
    ) {
      const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), signedAt);
      const w = {
        method: 'POST',
        target: '/api/v1/payments',
        headers: entries(signed.headers),
        body: signed.body as Buffer,
      };
      mutate(w);
      const before = await snapshot();
      const response = await rawSend(platform.url, w.method, w.target, w.headers, w.body);
      assert.equal(response.status, 401, response.body);
      // HEAD answers carry no body.
      assert.equal(response.body, w.method === 'HEAD' ? '' : unauthorized);
      assert.ok(response.requestId?.startsWith('req_'));
      assert.deepEqual(await snapshot(), before);
    }

    async function refusedRead(
      mutate: (r: { method: string; target: string; headers: [string, string][]; body?: Buffer }) => void,
    ) {
      const signed = buildRead(merchant, '/api/v1/payments', 'orderNo=P202601010000000001', platform.services.now());
      const r: { method: string; target: string; headers: [string, string][]; body?: Buffer } = {
        method: 'GET',
        target: '/api/v1/payments?orderNo=P202601010000000001',
        headers: entries(signed.headers),
      };
      mutate(r);
      const response = await rawSend(platform.url, r.method, r.target, r.headers, r.body);
      assert.equal(response.status, 401, response.body);
      assert.equal(response.body, unauthorized);
    }

    const setHeader = (headers: [string, string][], name: string, value: string) => {
      const entry = headers.find(([n]) => n.toLowerCase() === name);
      if (entry) entry[1] = value;
      else headers.push([name, value]);
    };
    const dropHeader = (headers: [string, string][], name: string) => {
      const index = headers.findIndex(([n]) => n.toLowerCase() === name);
      if (index >= 0) headers.splice(index, 1);
    };

    it('a valid signed write succeeds (control)', async () => {
      const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), platform.services.now());
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
      assert.equal(response.status, 200, response.body);
    });

    /** A write signed as another RFC 9421 signer may write it: its parameter order, spaces RFC 8941 allows. */
    function otherSignersWrite(payload: Record<string, unknown>) {
      const body = sealEnvelope(Buffer.from(JSON.stringify(payload)), merchant.bodyKey);
      assert.ok(body.ok);
      const headers = {
        'content-type': 'application/json',
        'content-encryption': 'sealedbox-v1-x25519-xsalsa20poly1305',
        'content-digest': contentDigest(body.value),
        'idempotency-key': randomUUID(),
        'merchant-access-key': merchant.accessKey,
      };
      const created = Math.floor(platform.services.now() / 1000);
      const params: SignatureParams = {
        label: 'merchant',
        components: WRITE_COMPONENTS,
        created,
        expires: created + 300,
        nonce: randomUUID(),
        parameterOrder: ['alg', 'nonce', 'created', 'expires'],
      };
      const base = buildSignatureBase({ method: 'POST', path: '/api/v1/payments', headers }, params);
      assert.ok(base.ok);
      const input = serializeSignatureInput(params).replace('=(', '=( ').replace(')', ' )').replaceAll(';', '; ');
      assert.match(input, /^merchant=\( "@method" .* \); alg="ed25519"; nonce="[^"]+"; created=\d+; expires=\d+$/);
      return {
        headers: {
          ...headers,
          'signature-input': input,
          signature: serializeSignature('merchant', sign(base.value, merchant.key)),
        },
        body: body.value,
        nonce: params.nonce,
      };
    }

    it('accepts a write whose Signature-Input has its parameters in another order and optional whitespace', async () => {
      const signed = otherSignersWrite(paymentInput());
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
      assert.equal(response.status, 200, response.body);
    });

    it('refuses the same write with its nonce repeated in Signature-Input', async () => {
      const signed = otherSignersWrite(paymentInput());
      const headers = {
        ...signed.headers,
        'signature-input': `${signed.headers['signature-input']}; nonce="${signed.nonce}"`,
      };
      const before = await snapshot();
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(headers), signed.body);
      assert.equal(response.status, 401, response.body);
      assert.equal(response.body, unauthorized);
      assert.deepEqual(await snapshot(), before);
    });

    for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) {
      it(`refuses ${method}`, async () => {
        await refusedWrite((w) => {
          w.method = method;
        });
      });
    }

    for (const name of [
      'content-type',
      'content-encryption',
      'content-digest',
      'idempotency-key',
      'merchant-access-key',
      'signature-input',
      'signature',
    ]) {
      it(`refuses a write without ${name}`, () => refusedWrite((w) => dropHeader(w.headers, name)));
      it(`refuses a write with ${name} twice`, () =>
        refusedWrite((w) => {
          const entry = w.headers.find(([n]) => n === name);
          assert.ok(entry);
          w.headers.push([name, entry[1]]);
        }));
    }

    it('refuses a query string on a POST', () =>
      refusedWrite((w) => {
        w.target = '/api/v1/payments?x=1';
      }));
    it('refuses Content-Encoding other than identity', () =>
      refusedWrite((w) => w.headers.push(['content-encoding', 'gzip'])));
    it('refuses a body that does not match Content-Digest', () =>
      refusedWrite((w) => {
        w.body = Buffer.from(w.body.toString('utf8').replace('"version":1', '"version": 1'));
      }));
    it('refuses a body changed together with its digest (signature covers the digest)', () =>
      refusedWrite((w) => {
        w.body = Buffer.from(w.body.toString('utf8').replace('"version":1', '"version": 1'));
        setHeader(w.headers, 'content-digest', contentDigest(w.body));
      }));
    it('refuses an expired signature', async () => {
      const signedAt = Date.now();
      platform.advance(301_000);
      try {
        await refusedWrite(() => {}, signedAt);
      } finally {
        platform.advance(-301_000);
      }
    });
    it('refuses a signature created too far in the future', async () => {
      // Ten seconds past the allowed skew: a slow machine between signing and verifying cannot
      // bring the platform's clock back inside it.
      const signedAt = Date.now();
      platform.advance(-310_000);
      try {
        await refusedWrite(() => {}, signedAt);
      } finally {
        platform.advance(310_000);
      }
    });
    it('refuses other covered components', () =>
      refusedWrite((w) => {
        const input = w.headers.find(([n]) => n === 'signature-input');
        assert.ok(input);
        input[1] = input[1].replace(' "idempotency-key"', '');
      }));
    it('refuses a bad signature', () =>
      refusedWrite((w) => {
        const sig = w.headers.find(([n]) => n === 'signature');
        assert.ok(sig);
        sig[1] = `merchant=:${Buffer.alloc(64, 1).toString('base64')}:`;
      }));
    it('refuses an unparsable envelope, signed and digested correctly', async () => {
      const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), platform.services.now());
      const envelope = JSON.parse((signed.body as Buffer).toString('utf8'));
      const tampered = Buffer.from(JSON.stringify({ ...envelope, extra: 1 }));
      // Re-sign the tampered body so that only the envelope check can fail.
      const { buildSignatureBase, parseSignatureInput, REQUEST_PROFILE, serializeSignature, sign } =
        await import('@paygate/protocol');
      const headers: Record<string, string> = { ...signed.headers, 'content-digest': contentDigest(tampered) };
      const params = parseSignatureInput(headers['signature-input'] as string, REQUEST_PROFILE);
      assert.ok(params.ok);
      const base = buildSignatureBase({ method: 'POST', path: '/api/v1/payments', headers }, params.value);
      assert.ok(base.ok);
      headers.signature = serializeSignature('merchant', sign(base.value, merchant.key));
      const before = await snapshot();
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(headers), tampered);
      assert.equal(response.status, 401);
      assert.equal(response.body, unauthorized);
      assert.deepEqual(await snapshot(), before);
    });

    it('answers an authentic request whose sealed plaintext exceeds 1 MiB with 413, writing nothing', async () => {
      const sodium = (await import('sodium-native')).default;
      const { buildSignatureBase, parseSignatureInput, REQUEST_PROFILE, serializeSignature, sign } =
        await import('@paygate/protocol');
      const plaintext = Buffer.from(JSON.stringify({ ...paymentInput(), attach: 'x'.repeat(1024 * 1024) }));
      const sealed = Buffer.alloc(plaintext.length + sodium.crypto_box_SEALBYTES);
      sodium.crypto_box_seal(sealed, plaintext, merchant.bodyKey.publicKey);
      const body = Buffer.from(
        JSON.stringify({
          version: 1,
          alg: 'sealedbox-v1-x25519-xsalsa20poly1305',
          keyId: merchant.bodyKey.keyId,
          ciphertext: sealed.toString('base64'),
        }),
      );
      const template = buildWrite(merchant, '/api/v1/payments', {}, platform.services.now());
      const headers: Record<string, string> = { ...template.headers, 'content-digest': contentDigest(body) };
      const params = parseSignatureInput(headers['signature-input'] as string, REQUEST_PROFILE);
      assert.ok(params.ok);
      const base = buildSignatureBase({ method: 'POST', path: '/api/v1/payments', headers }, params.value);
      assert.ok(base.ok);
      headers.signature = serializeSignature('merchant', sign(base.value, merchant.key));
      const before = await snapshot();
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(headers), body);
      assert.equal(response.status, 413);
      assert.equal(JSON.parse(response.body).msg, 'PAYLOAD_TOO_LARGE');
      assert.deepEqual(await snapshot(), before);
    });

    it('refuses a body whose length disagrees with Content-Length as a request-shape failure', async () => {
      const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), platform.services.now());
      const headers = entries(signed.headers);
      headers.push(['content-length', String((signed.body as Buffer).length - 10)]);
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', headers, signed.body as Buffer);
      assert.ok([400, 401].includes(response.status));
      assert.notEqual(response.status, 200);
    });

    it('refuses a reused nonce', async () => {
      const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), platform.services.now());
      const first = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
      assert.equal(first.status, 200);
      const before = await snapshot();
      const replay = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
      assert.equal(replay.status, 401);
      assert.equal(replay.body, unauthorized);
      assert.deepEqual(await snapshot(), before);
    });

    it('accepts one of 20 concurrent copies of a request (one nonce), whatever batch they share', async () => {
      const signed = buildRead(merchant, '/api/v1/balances', undefined, platform.services.now());
      const copies = await Promise.all(
        Array.from({ length: 20 }, () => rawSend(platform.url, 'GET', '/api/v1/balances', entries(signed.headers))),
      );
      assert.deepEqual(copies.map((c) => c.status).sort(), [200, ...Array(19).fill(401)]);
    });

    it('decides nonces per merchant: one nonce used by two merchants in one batch is new for both', async () => {
      const nonces = platform.services.nonces;
      const expires = Math.floor(platform.services.now() / 1000) + 300;
      const nonce = randomUUID();
      const results = await Promise.all([
        nonces.consume(1n, nonce, expires),
        nonces.consume(2n, nonce.toUpperCase(), expires),
        nonces.consume(1n, nonce.toUpperCase(), expires),
        nonces.consume(3n, randomUUID(), expires),
      ]);
      assert.deepEqual(results, [true, true, false, true]);
      assert.equal(await nonces.consume(2n, nonce, expires), false);
    });

    it('a batch whose statement fails rejects the uses it carried; a repeat in the batch is still a replay', async () => {
      const nonces = platform.services.nonces;
      const expires = Math.floor(platform.services.now() / 1000) + 300;
      const nonce = randomUUID();
      // A merchant id past bigint's range fails the whole statement in the database.
      const results = await Promise.allSettled([
        nonces.consume(1n, nonce, expires),
        nonces.consume(1n, nonce, expires),
        nonces.consume(2n ** 70n, randomUUID(), expires),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['rejected', 'fulfilled', 'rejected'],
      );
      assert.equal(results[1]?.status === 'fulfilled' && results[1].value, false);
      assert.equal(await nonces.consume(1n, nonce, expires), true, 'the failed batch recorded nothing');
    });

    it('refuses an unknown access key and a key signed by someone else', async () => {
      await refusedWrite((w) => setHeader(w.headers, 'merchant-access-key', 'ak_test_unknownunknown0000'));
      const stranger = { ...merchant, key: generateSigningKey() };
      const signed = buildWrite(stranger, '/api/v1/payments', paymentInput(), platform.services.now());
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
      assert.equal(response.status, 401);
    });

    it('refuses an access key of the other environment', async () => {
      const live = { ...merchant, accessKey: merchant.accessKey.replace('ak_test_', 'ak_live_') };
      const signed = buildWrite(live, '/api/v1/payments', paymentInput(), platform.services.now());
      const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
      assert.equal(response.status, 401);
      assert.equal(response.body, unauthorized);
    });

    it('refuses a GET with a body or with write headers', async () => {
      await refusedRead((r) => {
        r.body = Buffer.from('{}');
      });
      for (const [name, value] of [
        ['content-type', 'application/json'],
        ['content-encryption', 'sealedbox-v1-x25519-xsalsa20poly1305'],
        ['content-digest', contentDigest(Buffer.alloc(0))],
        ['idempotency-key', randomUUID()],
      ] as const) {
        await refusedRead((r) => r.headers.push([name, value]));
      }
    });

    it('refuses a GET whose query differs from the signed one, even by encoding', async () => {
      await refusedRead((r) => {
        r.target = '/api/v1/payments?orderNo=P202601010000000002';
      });
      await refusedRead((r) => {
        r.target = '/api/v1/payments?orderNo=P20260101000000000%31';
      });
    });

    it('answers unknown paths with 401 before authentication and 404 after', async () => {
      const unauthenticated = await rawSend(platform.url, 'GET', '/api/v1/nothing-here', []);
      assert.equal(unauthenticated.status, 401);
      const signed = signReadRequest(
        { path: '/api/v1/nothing-here' },
        {
          accessKey: merchant.accessKey,
          key: merchant.key,
          created: Math.floor(platform.services.now() / 1000),
          nonce: randomUUID(),
        },
      );
      const authenticated = await rawSend(platform.url, 'GET', '/api/v1/nothing-here', entries(signed.headers));
      assert.equal(authenticated.status, 404);
    });

    it('answers a signed REST-style read of one order with 404 naming ?orderNo=; unsigned, 401 like every path', async () => {
      const hint = (noun: string, query: string) => ({
        msg: 'NOT_FOUND',
        message: `no such endpoint: read a ${noun} with GET /api/v1/${noun}s${query}`,
      });
      const cases: [string, ReturnType<typeof hint>][] = [
        ['/api/v1/payments/P202611270000000042', hint('payment', '?orderNo=P202611270000000042')],
        ['/api/v1/payouts/W202611270000000042', hint('payout', '?orderNo=W202611270000000042')],
        ['/api/v1/payments/shop-order-7/', hint('payment', '?orderNo=P… or ?merchantOrderNo=…')],
        ['/api/v1/payouts/%3Cscript%3E', hint('payout', '?orderNo=W… or ?merchantOrderNo=…')],
      ];
      for (const [target, expected] of cases) {
        const unsigned = await rawSend(platform.url, 'GET', target, []);
        assert.deepEqual([unsigned.status, unsigned.body], [401, '{"msg":"UNAUTHORIZED"}'], target);
        assert.ok(unsigned.requestId?.startsWith('req_'));
        const signed = signReadRequest(
          { path: target },
          {
            accessKey: merchant.accessKey,
            key: merchant.key,
            created: Math.floor(platform.services.now() / 1000),
            nonce: randomUUID(),
          },
        );
        const authenticated = await rawSend(platform.url, 'GET', target, entries(signed.headers));
        assert.deepEqual([authenticated.status, JSON.parse(authenticated.body)], [404, expected], target);
      }
      // Everything else stays behind authentication: other shapes, other methods, the real reads.
      for (const [method, target] of [
        ['GET', '/api/v1/payments/P202611270000000042/events'],
        ['POST', '/api/v1/payments/P202611270000000042'],
        ['GET', '/api/v1/refunds/P202611270000000042'],
        ['GET', '/api/v1/payments/list'],
        ['GET', '/api/v1/payouts/receipt?orderNo=W202611270000000042'],
        ['GET', '/api/v1/payments?orderNo=P202611270000000042'],
      ] as const) {
        const answer = await rawSend(platform.url, method, target, []);
        assert.deepEqual([answer.status, answer.body], [401, '{"msg":"UNAUTHORIZED"}'], `${method} ${target}`);
      }
    });

    it('verifies with either of two active keys during a rotation, and not with a retired one', async () => {
      const next = generateSigningKey();
      await platform.services.merchants.addKey(merchant.accessKey, next.publicKey.toString('base64'));
      const rotated = { ...merchant, key: next };
      for (const who of [merchant, rotated]) {
        const signed = buildWrite(who, '/api/v1/payments', paymentInput(), platform.services.now());
        const response = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body);
        assert.equal(response.status, 200, response.body);
      }
      await platform.services.merchants.retireKey(merchant.accessKey, merchant.key.publicKey.toString('base64'));
      const old = buildWrite(merchant, '/api/v1/payments', paymentInput(), platform.services.now());
      const refused = await rawSend(platform.url, 'POST', '/api/v1/payments', entries(old.headers), old.body);
      assert.equal(refused.status, 401);
      merchant = rotated;
    });

    it('refuses an oversized wire body with 413 without reading it whole', async () => {
      const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), platform.services.now());
      const headers: [string, string][] = [['host', new URL(platform.url).host], ...entries(signed.headers)];
      headers.push(['content-length', String(64 * 1024 * 1024)]);
      // Announce 64 MiB but send only 1 KiB: an answer can only come from the announced length.
      const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { hostname, port } = new URL(platform.url);
        const req = httpRequest(
          {
            hostname,
            port,
            method: 'POST',
            path: '/api/v1/payments',
            headers: headers.flat() as unknown as Record<string, string>,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
          },
        );
        req.on('error', reject);
        req.write(Buffer.alloc(1024, 0x20));
      });
      assert.equal(response.status, 413);
      assert.equal(JSON.parse(response.body).msg, 'PAYLOAD_TOO_LARGE');

      // A chunked body is cut off as soon as it passes 2 MiB.
      const chunked: [string, string][] = [['host', new URL(platform.url).host], ...entries(signed.headers)];
      chunked.push(['transfer-encoding', 'chunked']);
      const streamed = await new Promise<number>((resolve) => {
        const { hostname, port } = new URL(platform.url);
        const req = httpRequest(
          {
            hostname,
            port,
            method: 'POST',
            path: '/api/v1/payments',
            headers: chunked.flat() as unknown as Record<string, string>,
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', () => resolve(413));
        const chunk = Buffer.alloc(256 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 3 * 1024 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) return req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      assert.equal(streamed, 413);
    });
  });
}

describe('nonces across instances', () => {
  it(
    'a nonce replayed to a second instance on the same PostgreSQL succeeds once',
    {
      skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL',
    },
    async () => {
      const db = await freshPostgres();
      const a = await startTestPlatform({ databaseUrl: db.url });
      const b = await startTestPlatform({ databaseUrl: db.url });
      try {
        const merchant = await createMerchant(a);
        const signed = buildWrite(merchant, '/api/v1/payments', paymentInput(), Date.now());
        const results = await Promise.all(
          [a, b, a, b].map((p) => rawSend(p.url, 'POST', '/api/v1/payments', entries(signed.headers), signed.body)),
        );
        assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401]);
      } finally {
        await a.close();
        await b.close();
        await db.drop();
      }
    },
  );
});

describe('rate limiting', () => {
  it('answers 429 RATE_LIMITED with Retry-After once a merchant exceeds its rate, per merchant', async () => {
    // The clock stands still, so that no tokens come back however slowly the requests run.
    const frozen = Date.now();
    const platform = await startTestPlatform({ env: { PAYGATE_RATE_LIMIT: '5' }, now: () => frozen });
    try {
      const merchant = await createMerchant(platform);
      const other = await createMerchant(platform, 'Other');
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await get(platform, merchant, '/api/v1/payments/list')).status);
      assert.deepEqual(statuses.slice(0, 10), Array(10).fill(200));
      const limited = await get(platform, merchant, '/api/v1/payments/list');
      assert.equal(limited.status, 429);
      assert.equal(limited.body.msg, 'RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      assert.equal((await get(platform, other, '/api/v1/payments/list')).status, 200);
    } finally {
      await platform.close();
    }
  });
});
