/**
 * The HTTP layer's header rules, over raw bytes on a real socket to a real platform: limits on
 * header count and size (431), single-valued headers checked over every raw line whatever its
 * case (400; 401 under the merchant API where the spec makes it a request-shape failure), and
 * framing the parser refuses answered in the platform's JSON shape rather than a bare reset.
 * The rules do not touch storage, so one database is enough: PGlite, or PostgreSQL when
 * TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildRead, createMerchant, startTestPlatform, type TestMerchant, type TestPlatform } from './harness.js';

interface RawResponse {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

/** Writes `bytes` on a fresh connection and reads one response until the server closes it. */
function exchange(url: string, bytes: string): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no response head in ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers = new Map<string, string>();
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      let body = text.slice(end + 4);
      const length = headers.get('content-length');
      if (length !== undefined) body = body.slice(0, Number(length));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

/** A request head with exactly these header lines (in order, duplicates kept) and `Connection: close`. */
function head(method: string, target: string, lines: readonly (readonly [string, string])[], body = ''): string {
  const all = [...lines, ['Connection', 'close'] as const];
  return `${method} ${target} HTTP/1.1\r\n${all.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
}

/** `n` distinct filler headers, each counting 6 bytes (name and value) towards the size limit. */
const fillers = (n: number): [string, string][] =>
  Array.from({ length: n }, (_, i) => [`X${String(i).padStart(4, '0')}`, 'v'] as [string, string]);

function assertJson(response: RawResponse, status: number, msg: string) {
  assert.equal(response.status, status, response.body);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(response.body) as { msg: string };
  assert.equal(body.msg, msg, response.body);
  assert.match(response.headers.get('request-id') ?? '', /^req_/);
  return body as { msg: string; message?: string };
}

const database = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

describe(`HTTP header limits (${database})`, () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let host: string;
  const adminToken = 'test-admin-token-0123456789abcdef';

  before(async () => {
    platform = await startTestPlatform({ database });
    merchant = await createMerchant(platform);
    host = new URL(platform.url).host;
  });
  after(() => platform.close());

  const send = (bytes: string) => exchange(platform.url, bytes);
  /** A signed GET of the balances, as header lines, Host first. */
  const signedRead = (): [string, string][] => [
    ['Host', host],
    ...Object.entries(buildRead(merchant, '/api/v1/balances', undefined, platform.services.now()).headers),
  ];

  describe('header count: at most 100 header lines', () => {
    it('accepts exactly 100 header lines (Connection and Host included)', async () => {
      const response = await send(head('GET', '/healthz', [['Host', host], ...fillers(98)]));
      assert.equal(response.status, 200, response.body);
    });

    it('answers 101 header lines with 431 REQUEST_HEADER_FIELDS_TOO_LARGE', async () => {
      const response = await send(head('GET', '/healthz', [['Host', host], ...fillers(99)]));
      const body = assertJson(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
      assert.match(body.message ?? '', /101 header fields/);
    });

    it('answers too many header lines with 431 under the merchant API too, before authentication', async () => {
      const response = await send(head('GET', '/api/v1/balances', [...signedRead(), ...fillers(99)]));
      assertJson(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
    });

    it('drops no header: every line past the old limit of 2000 is still counted', async () => {
      // Node kept only about the first thousand header lines by default and served the request.
      const response = await send(head('GET', '/healthz', [['Host', host], ...fillers(2100)]));
      const body = assertJson(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
      assert.match(body.message ?? '', /2102 header fields/);
    });

    it('does not ignore a repeated Host placed past the old limit', async () => {
      const response = await send(head('GET', '/healthz', [['Host', host], ...fillers(1500), ['Host', 'evil']]));
      assert.equal(response.status, 431, response.body);
    });
  });

  describe('header size: at most 16 KiB of request target, header names and values', () => {
    // Counted: "/healthz" (8) + "Host" + host + "Connection" + "close" (15) + "X-Big" (5) + value.
    const sized = (total: number) => {
      const counted = 8 + 4 + host.length + 15 + 5;
      return head('GET', '/healthz', [
        ['Host', host],
        ['X-Big', 'a'.repeat(total - counted)],
      ]);
    };

    it('accepts a head of exactly 16384 counted bytes', async () => {
      const response = await send(sized(16 * 1024));
      assert.equal(response.status, 200, response.body);
    });

    it('answers one byte more with 431 in the JSON shape', async () => {
      assertJson(await send(sized(16 * 1024 + 1)), 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
    });

    it('answers a 20 KiB header with 431 in the JSON shape', async () => {
      const response = await send(
        head('GET', '/healthz', [
          ['Host', host],
          ['X-Big', 'a'.repeat(20 * 1024)],
        ]),
      );
      const body = assertJson(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
      assert.deepEqual(Object.keys(body).sort(), ['message', 'msg']);
    });

    it('answers a 20 KiB header under the merchant API with the same 431', async () => {
      const response = await send(head('GET', '/api/v1/balances', [...signedRead(), ['X-Big', 'a'.repeat(20 * 1024)]]));
      assertJson(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
    });
  });

  describe('Host: exactly one line, whatever its case', () => {
    const targets = [
      ['/healthz', () => [] as [string, string][]],
      ['/portal/api/session', () => [] as [string, string][]],
      ['/admin/v1/merchants', () => [['Authorization', `Bearer ${adminToken}`]] as [string, string][]],
    ] as const;
    for (const [target, extra] of targets) {
      it(`refuses Host twice in the same case on ${target} with 400 BAD_REQUEST`, async () => {
        const response = await send(head('GET', target, [['Host', host], ['Host', host], ...extra()]));
        assertJson(response, 400, 'BAD_REQUEST');
      });
      it(`refuses Host twice in different cases on ${target} with 400 BAD_REQUEST`, async () => {
        const response = await send(head('GET', target, [['host', host], ...extra(), ['hOST', 'other.example']]));
        assertJson(response, 400, 'BAD_REQUEST');
      });
    }

    it('refuses a repeated Host on an authentic merchant-API request with 400, not 401', async () => {
      const control = await send(head('GET', '/api/v1/balances', signedRead()));
      assert.equal(control.status, 200, control.body);
      const response = await send(head('GET', '/api/v1/balances', [...signedRead(), ['HOST', host]]));
      assertJson(response, 400, 'BAD_REQUEST');
    });

    it('refuses an HTTP/1.1 request without Host with 400 in the JSON shape', async () => {
      const response = await send('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
      assertJson(response, 400, 'BAD_REQUEST');
    });
  });

  describe('other single-valued headers', () => {
    it('refuses a repeated Authorization on the operator API (node kept the first and served it)', async () => {
      const response = await send(
        head('GET', '/admin/v1/merchants', [
          ['Host', host],
          ['Authorization', `Bearer ${adminToken}`],
          ['authorization', 'Bearer something-else'],
        ]),
      );
      assertJson(response, 400, 'BAD_REQUEST');
    });

    it('refuses a repeated User-Agent outside the merchant API with 400', async () => {
      const response = await send(
        head('GET', '/healthz', [
          ['Host', host],
          ['User-Agent', 'a'],
          ['USER-AGENT', 'b'],
        ]),
      );
      assertJson(response, 400, 'BAD_REQUEST');
    });

    it('refuses a repeated Content-Type outside the merchant API with 400', async () => {
      const response = await send(
        head(
          'POST',
          '/portal/api/session',
          [
            ['Host', host],
            ['Content-Type', 'application/json'],
            ['content-type', 'text/plain'],
            ['Content-Length', '2'],
          ],
          '{}',
        ),
      );
      assertJson(response, 400, 'BAD_REQUEST');
    });

    it('refuses a repeated User-Agent on an authentic merchant-API request as a request-shape failure (401)', async () => {
      const response = await send(
        head('GET', '/api/v1/balances', [...signedRead(), ['User-Agent', 'a'], ['user-agent', 'b']]),
      );
      assert.equal(response.status, 401, response.body);
      assert.equal(response.body, '{"msg":"UNAUTHORIZED"}');
    });
  });

  describe('framing: Content-Length and Transfer-Encoding', () => {
    for (const [name, lines] of [
      [
        'Content-Length twice with one value',
        [
          ['Content-Length', '2'],
          ['content-length', '2'],
        ],
      ],
      [
        'Content-Length twice with two values',
        [
          ['Content-Length', '2'],
          ['Content-Length', '3'],
        ],
      ],
      ['a Content-Length list', [['Content-Length', '2, 2']]],
      [
        'Content-Length with Transfer-Encoding',
        [
          ['Content-Length', '2'],
          ['Transfer-Encoding', 'chunked'],
        ],
      ],
      [
        'chunked on two lines',
        [
          ['Transfer-Encoding', 'chunked'],
          ['Transfer-Encoding', 'chunked'],
        ],
      ],
      [
        'Transfer-Encoding on two lines',
        [
          ['Transfer-Encoding', 'gzip'],
          ['transfer-encoding', 'chunked'],
        ],
      ],
    ] as const) {
      for (const target of ['/portal/api/session', '/api/v1/payments']) {
        it(`refuses ${name} on ${target} with 400 BAD_REQUEST`, async () => {
          const chunked = lines.some(([n]) => n.toLowerCase() === 'transfer-encoding');
          const response = await send(
            head(
              'POST',
              target,
              [['Host', host], ['Content-Type', 'application/json'], ...lines],
              chunked ? '2\r\n{}\r\n0\r\n\r\n' : '{}',
            ),
          );
          assertJson(response, 400, 'BAD_REQUEST');
        });
      }
    }

    for (const coding of ['gzip, chunked', 'deflate,chunked', 'br, chunked']) {
      for (const target of ['/portal/api/session', '/api/v1/payments']) {
        it(`answers Transfer-Encoding: ${coding} on ${target} with 501 NOT_IMPLEMENTED`, async () => {
          const response = await send(
            head(
              'POST',
              target,
              [
                ['Host', host],
                ['Content-Type', 'application/json'],
                ['Transfer-Encoding', coding],
              ],
              '2\r\n{}\r\n0\r\n\r\n',
            ),
          );
          assertJson(response, 501, 'NOT_IMPLEMENTED');
        });
      }
    }

    it('answers bytes that are not HTTP with 400 in the JSON shape', async () => {
      assertJson(await send('NOT HTTP AT ALL\r\n\r\n'), 400, 'BAD_REQUEST');
    });
  });
});
