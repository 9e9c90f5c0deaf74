/**
 * HTTP fuzzing of the real platform over real sockets (`npm run test:fuzz`): generated raw
 * requests, signed reads with generated queries, signed and sealed writes with generated
 * business JSON, and sealed envelopes mutated before or after signing. For every request: no 5xx
 * and, when it was refused, nothing written (payments, payouts, ledger, events). After every batch
 * the process still answers /healthz, and nothing was logged at error level (the harness's rule).
 *
 * Bounded: FUZZ_RUNS scales the runs of every property (default 3) and FUZZ_BUDGET_MS (default
 * 70 000 per database) stops the properties cleanly when it runs out. FUZZ_SEED replays a run.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  buildSignatureBase,
  contentDigest,
  ENVELOPE_ALG,
  generateBoxKeyPair,
  REQUEST_LABEL,
  sealEnvelope,
  serializeSignature,
  serializeSignatureInput,
  sign,
  signReadRequest,
  signWriteRequest,
  WRITE_COMPONENTS,
} from '@paygate/protocol';
import fc from 'fast-check';
import {
  count,
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../harness.js';
import { fund, payoutInput, SIMPLE_FEES } from '../money-harness.js';
import { ADMIN_TOKEN } from '../portal-harness.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? '3');
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? '70000');
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const runs = (base: number) => Math.max(1, Math.round(base * RUNS));

/** Tables a refused request must leave alone. */
const WRITTEN_TABLES = ['payments', 'payouts', 'ledger_transactions', 'ledger_entries', 'events'] as const;

const uncaught: unknown[] = [];
process.on('uncaughtExceptionMonitor', (error) => uncaught.push(error));

// --- sending raw bytes ----------------------------------------------------------------------

interface RawAnswer {
  /** Status codes of the responses received (none when the server closed without answering). */
  readonly statuses: number[];
  readonly text: string;
  readonly hung: boolean;
}

/**
 * Writes `bytes` to the platform's socket and reads until the server closes. Once the server has
 * been quiet for `quietMs` the client half-closes, so that a request still waiting for body bytes
 * ends (half-closing at once would make Node abort requests in flight).
 */
function sendRaw(url: string, bytes: Buffer, timeoutMs = 10_000, quietMs = 500): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) });
    let settled = false;
    const finish = (hung: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(quiet);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})/g)].map((match) => Number(match[1]));
      resolve({ statuses, text, hung });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    let quiet: NodeJS.Timeout | undefined;
    const waitQuiet = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => socket.end(), quietMs);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      waitQuiet();
    });
    socket.on('close', () => finish(false));
    socket.on('error', () => finish(false));
    socket.on('connect', () => {
      socket.write(bytes);
      waitQuiet();
    });
  });
}

type Header = readonly [string, string];

/** An HTTP/1.1 request's bytes; Host, Connection and (unless given) Content-Length are added. */
function requestBytes(method: string, target: string, headers: readonly Header[], body: Buffer): Buffer {
  const names = new Set(headers.map(([name]) => name.toLowerCase()));
  const all: Header[] = [['host', '127.0.0.1'], ['connection', 'close'], ...headers];
  if (!names.has('content-length') && !names.has('transfer-encoding') && body.length > 0) {
    all.push(['content-length', String(body.length)]);
  }
  const head = `${method} ${target} HTTP/1.1\r\n${all.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

// --- what the suite knows about the app -----------------------------------------------------

const READ_PATHS = [
  '/api/v1/payments',
  '/api/v1/payments/list',
  '/api/v1/payouts',
  '/api/v1/payouts/list',
  '/api/v1/payouts/receipt',
  '/api/v1/balances',
  '/api/v1/rates',
  '/api/v1/ledger/entries',
  '/api/v1/events',
];
const WRITE_PATHS = [
  '/api/v1/payments',
  '/api/v1/payments/cancel',
  '/api/v1/payments/update',
  '/api/v1/payouts',
  '/api/v1/payouts/confirm',
  '/api/v1/payouts/update',
  '/api/v1/sandbox/payments/simulate',
  '/api/v1/sandbox/payouts/simulate',
  '/api/v1/sandbox/payouts/return',
  '/api/v1/events/resend',
];
const OTHER_PATHS = [
  '/',
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/metrics',
  '/.well-known/paygate/webhook-keys',
  '/api/v1',
  '/api/v1/unknown',
  '/portal',
  '/portal/',
  '/portal/index.html',
  '/portal/api/session',
  '/portal/api/setup',
  '/portal/api/session/logout',
  '/portal/api/payments',
  '/portal/api/ledger/export.csv',
  '/portal/api/events/evt_x/resend',
  '/cashier/P000000000000000001',
  '/admin/v1/merchants',
  '/admin/v1/merchants/ak_test_AAAAAAAA/keys',
  '/admin/v1/platform-keys',
];
const QUERY_KEYS = [
  'orderNo',
  'merchantOrderNo',
  'currency',
  'method',
  'status',
  'from',
  'to',
  'pageSize',
  'cursor',
  'eventId',
  'orderType',
  'extra',
];

/** Printable ASCII a request target may carry (no space, no control characters). */
const targetChar = fc.mapToConstant(
  { num: 94, build: (v) => String.fromCharCode(0x21 + v) }, // '!'..'~'
);
const targetText = (maxLength: number) => fc.string({ unit: targetChar, maxLength });

const queryValue = fc.oneof(
  targetText(40).map((text) => text.replace(/[#&]/g, '')),
  fc.string({ maxLength: 30 }).map((text) => encodeURIComponent(text)),
  fc.string({ unit: 'grapheme', maxLength: 10 }).map((text) => encodeURIComponent(text)),
  // Raw bytes 0x80..0xff, sent as they are (the request line is written as latin1).
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 6 }),
  fc.constantFrom('', 'P000000000000000001', 'W000000000000000001', 'BRL', 'SUCCEEDED', '0', '-1', '1e9', '100000'),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
);
const rawQuery = fc.oneof(
  fc.constant(undefined),
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), targetText(8)), queryValue, fc.boolean()), {
      maxLength: 5,
    })
    .map((pairs) => pairs.map(([key, value, withEquals]) => (withEquals ? `${key}=${value}` : key)).join('&')),
  targetText(60).map((text) => text.replace(/#/g, '')),
);

/** The query parameters each read accepts (only these get past the unknown-parameter check). */
const READ_PARAMETERS: Record<string, readonly string[]> = {
  '/api/v1/payments': ['orderNo', 'merchantOrderNo'],
  '/api/v1/payouts': ['orderNo', 'merchantOrderNo'],
  '/api/v1/payouts/receipt': ['orderNo', 'merchantOrderNo'],
  '/api/v1/payments/list': ['status', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/payouts/list': ['status', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/ledger/entries': ['currency', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/events': ['orderNo', 'status', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/balances': ['currency'],
  '/api/v1/rates': ['currency', 'method'],
};
/** Numbers as a query carries them: huge, negative, fractional, exponent, hex, padded. */
const numberText = fc.oneof(
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.integer().map(String),
  fc.double({ noNaN: false }).map(String),
  fc.constantFrom(
    '0',
    '1',
    '100',
    '101',
    '8640000000000000',
    '8640000000000001',
    '9223372036854775807',
    '1e400',
    '0x10',
    '%2B5',
  ),
);
/** Cursors: well-formed base64url of "<millis>:<id>" with any digits, and garbage. */
const cursorText = fc.oneof(
  fc
    .tuple(fc.stringMatching(/^-?\d{1,20}$/), fc.stringMatching(/^-?\d{1,22}$/))
    .map(([time, id]) => Buffer.from(`${time}:${id}`).toString('base64url')),
  targetText(40).map((text) => text.replace(/[#&]/g, '')),
);
/** A query of the path's own parameters, each at most once, with values near their types. */
const readQuery = (path: string) =>
  fc
    .uniqueArray(
      fc
        .constantFrom(...(READ_PARAMETERS[path] ?? ['orderNo']))
        .chain((key) =>
          fc.tuple(
            fc.constant(key),
            key === 'cursor' ? cursorText : ['from', 'to', 'pageSize'].includes(key) ? numberText : queryValue,
          ),
        ),
      { selector: ([key]) => key, maxLength: 4 },
    )
    .map((pairs) => pairs.map(([key, value]) => `${key}=${value}`).join('&'));

const anyPath = fc.constantFrom(...READ_PATHS, ...WRITE_PATHS, ...OTHER_PATHS);
const requestTarget = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(anyPath, rawQuery).map(([path, query]) => (query === undefined ? path : `${path}?${query}`)),
  },
  { weight: 1, arbitrary: anyPath.chain((path) => targetText(30).map((tail) => `${path}${tail}`)) },
  { weight: 1, arbitrary: targetText(80) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '*',
      'http://127.0.0.1/api/v1/payments',
      '//api/v1/payments',
      '/api/v1/../v1/payments',
      '/api/v1/%2e%2e/payments',
      '/api/v1/payments%00',
      '/api/v1/PAYMENTS',
      '/portal/../../etc/passwd',
      '/portal/%2e%2e/%2e%2e/package.json',
    ),
  },
);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'get', 'Post'];
const method = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
);

const HEADER_NAMES = [
  'content-type',
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'content-encryption',
  'content-digest',
  'idempotency-key',
  'merchant-access-key',
  'signature',
  'signature-input',
  'authorization',
  'cookie',
  'origin',
  'x-csrf-token',
  'accept',
  'expect',
  'x-forwarded-for',
];
/** Header values: visible ASCII and spaces, plus some that look like the real thing. */
const headerValue = fc.oneof(
  fc.string({ unit: fc.mapToConstant({ num: 95, build: (v) => String.fromCharCode(0x20 + v) }), maxLength: 80 }),
  // obs-text: bytes 0x80..0xff (the head is written as latin1).
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 10 }),
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    ENVELOPE_ALG,
    'gzip',
    'identity',
    'chunked',
    '0',
    '-1',
    '99999999999999999999',
    'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:',
    'merchant=("@method" "@path" "@query" "merchant-access-key");created=1;expires=2;nonce="x"',
    'merchant=:AAAA:',
    'ak_test_AAAAAAAAAAAA',
    `Bearer ${'x'.repeat(32)}`,
    `Bearer ${ADMIN_TOKEN}`,
    'paygate_session=abc',
    '100-continue',
  ),
);
const header = fc.tuple(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HEADER_NAMES) },
    { weight: 1, arbitrary: fc.stringMatching(/^[a-zA-Z0-9-]{1,20}$/) },
  ),
  headerValue,
);

const jsonText = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  // Any UTF-16 code units, lone surrogates included (JSON.stringify escapes them).
  fc.jsonValue({ stringUnit: 'binary' }).map((value) => JSON.stringify(value)),
  fc.json(),
  fc.constantFrom('{', '{"a":1,"a":2}', '[]', 'null', '"\\ud800"', '{"__proto__":{"x":1}}', '1e999'),
);
const body = fc.oneof(
  fc.constant(Buffer.alloc(0)),
  jsonText.map((text) => Buffer.from(text)),
  fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ maxLength: 200 }).map((text) => Buffer.from(text)),
);

// --- business JSON --------------------------------------------------------------------------

/** One JSON change to a valid body: a member replaced, removed or added, or the whole replaced. */
function mutateBusiness(base: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(base);
  const value = fc.oneof(
    fc.jsonValue(),
    fc.jsonValue({ stringUnit: 'binary', maxDepth: 2 }),
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom('', ' ', '0', '-1', '0.001', '1e3', '99999999999999999999.99', 'NaN', '１２', 'BRL', 'XXX', null),
    fc.double().map(String),
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(base) },
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...keys), value).map(([key, v]) => ({ ...base, [key]: v })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...keys).map((key) => {
        const copy = { ...base };
        delete copy[key];
        return copy;
      }),
    },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 12 }), value).map(([key, v]) => ({ ...base, [key]: v })) },
    { weight: 1, arbitrary: fc.jsonValue() },
  );
}

// --- signing what the generators made -------------------------------------------------------

/** Signs a POST whose wire body is given as is (a mutated envelope), with a correct digest. */
function signRawWrite(
  merchant: TestMerchant,
  path: string,
  wire: Buffer,
  nowMs: number,
  contentEncryption = ENVELOPE_ALG,
): Header[] {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-encryption': contentEncryption,
    'content-digest': contentDigest(wire),
    'idempotency-key': randomUUID(),
    'merchant-access-key': merchant.accessKey,
  };
  const created = Math.floor(nowMs / 1000);
  const params = {
    label: REQUEST_LABEL,
    components: WRITE_COMPONENTS,
    created,
    expires: created + 300,
    nonce: randomUUID(),
  };
  const base = buildSignatureBase({ method: 'POST', path, headers }, params);
  if (!base.ok) throw new Error(`cannot sign: ${base.error.component}`);
  return [
    ...Object.entries(headers),
    ['signature-input', serializeSignatureInput(params)],
    ['signature', serializeSignature(REQUEST_LABEL, sign(base.value, merchant.key))],
  ];
}

// --- the suite ------------------------------------------------------------------------------

for (const database of databases()) {
  describe(`HTTP fuzzing (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let deadline = 0;
    const refs = { payment: '', paidPayment: '', payout: '', eventId: '' };
    const outcomes = new Map<string, number>();
    const note = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);

    before(async () => {
      platform = await startTestPlatform({
        database,
        env: { PAYGATE_FEES: SIMPLE_FEES, PAYGATE_RATE_LIMIT: '1000000' },
      });
      merchant = await createMerchant(platform);
      refs.paidPayment = await fund(platform, merchant, '5000.00');
      const pending = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
      refs.payment = pending.body.data?.orderNo as string;
      const payout = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
      assert.equal(payout.status, 200, JSON.stringify(payout.body));
      refs.payout = payout.body.data?.orderNo as string;
      const event = await platform.services.db.query<{ event_id: string }>('SELECT event_id FROM events LIMIT 1');
      refs.eventId = event.rows[0]?.event_id ?? 'evt_none';
      deadline = Date.now() + BUDGET_MS;
    });
    after(async () => {
      // One line per outcome, for the report: what the generated requests got back.
      console.log(`outcomes (${database}): ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`);
      await platform.close();
    });

    /** Error lines already blamed on a request (each is reported once, with its request). */
    let attributed = 0;
    const counts = async () => Promise.all(WRITTEN_TABLES.map((table) => count(platform, table)));

    /** Runs one property within what is left of the budget; afterwards the platform is healthy. */
    async function check<T>(
      name: string,
      numRuns: number,
      arbitrary: fc.Arbitrary<T>,
      send: (input: T) => Promise<void>,
    ) {
      const left = deadline - Date.now();
      if (left <= 0) {
        console.log(`${name}: skipped, the time budget is spent`);
        return;
      }
      let executed = 0;
      const property = fc.assert(
        fc.asyncProperty(arbitrary, async (input) => {
          executed += 1;
          await send(input);
          if (executed % 25 === 0) await assertHealthy();
        }),
        {
          numRuns,
          interruptAfterTimeLimit: Math.min(left, 40_000),
          markInterruptAsFailure: false,
          ...(SEED === undefined ? {} : { seed: SEED }),
        },
      );
      // fast-check keeps the failed assertion as the cause; the test report shows messages only.
      await property.catch((error: unknown) => {
        const cause = error instanceof Error && error.cause instanceof Error ? `\n${error.cause.message}` : '';
        throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}${cause}`);
      });
      console.log(`${name}: ${executed} runs (of ${numRuns})`);
      await assertHealthy();
    }

    async function assertHealthy() {
      const health = await fetch(`${platform.url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(platform.errorLogs().slice(attributed), [], 'the platform logged an error');
      assert.deepEqual(uncaught, [], 'an exception went uncaught');
    }

    /** Sends, then asserts no 5xx, no hang, and that a refused request wrote nothing. */
    async function exchange(label: string, bytes: Buffer, mayWrite: boolean): Promise<number[]> {
      const before = mayWrite ? await counts() : undefined;
      const logged = platform.errorLogs().length;
      const answer = await sendRaw(platform.url, bytes);
      assert.equal(
        answer.hung,
        false,
        `no answer within 10 s to ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`,
      );
      // 501 NOT_IMPLEMENTED is the deliberate answer to a transfer coding other than chunked; an
      // answer to HEAD carries no body to name it, so there the request's Transfer-Encoding must.
      const request = bytes.toString('latin1');
      const codingRefused =
        answer.text.includes('"NOT_IMPLEMENTED"') ||
        (request.startsWith('HEAD ') && /\r\ntransfer-encoding:/i.test(request.split('\r\n\r\n')[0] ?? ''));
      for (const status of answer.statuses) {
        assert.ok(
          status < 500 || (status === 501 && codingRefused),
          `${status} for ${JSON.stringify(bytes.toString('latin1').slice(0, 2000))}\n${answer.text.slice(0, 1000)}`,
        );
      }
      const errors = platform.errorLogs().slice(logged);
      attributed = platform.errorLogs().length;
      assert.deepEqual(
        errors.map((line) => JSON.stringify(line).slice(0, 1500)),
        [],
        `an error was logged for ${JSON.stringify(bytes.toString('latin1').slice(0, 2000))}`,
      );
      note(`${label} ${answer.statuses.join(',') || 'closed'}`);
      const accepted = answer.statuses.length > 0 && answer.statuses.every((status) => status < 300);
      if (before && !accepted) {
        assert.deepEqual(
          await counts(),
          before,
          `a refused request wrote rows: ${bytes.toString('latin1').slice(0, 500)}`,
        );
      }
      return answer.statuses;
    }

    it('raw requests: generated methods, targets, headers and bodies', async () => {
      const start = await counts();
      await check(
        'raw requests',
        runs(400),
        fc.record({ method, target: requestTarget, headers: fc.array(header, { maxLength: 8 }), body }),
        async (input) => {
          await exchange('raw', requestBytes(input.method, input.target, input.headers, input.body), false);
        },
      );
      await check('raw bytes', runs(100), fc.uint8Array({ minLength: 1, maxLength: 600 }), async (bytes) => {
        await exchange('bytes', Buffer.from(bytes), false);
      });
      // Nothing here is signed by a merchant: no order, posting or event may appear.
      assert.deepEqual(await counts(), start);
    });

    it('signed reads with generated query strings', async () => {
      const start = await counts();
      await check(
        'signed reads',
        runs(250),
        fc.constantFrom(...READ_PATHS).chain((path) =>
          fc.record({
            path: fc.constant(path),
            query: fc.oneof({ weight: 1, arbitrary: rawQuery }, { weight: 2, arbitrary: readQuery(path) }),
          }),
        ),
        async ({ path, query }) => {
          const signed = signReadRequest(
            { path, query },
            {
              accessKey: merchant.accessKey,
              key: merchant.key,
              created: Math.floor(platform.services.now() / 1000),
              nonce: randomUUID(),
            },
          );
          const target = query === undefined ? path : `${path}?${query}`;
          await exchange('read', requestBytes('GET', target, Object.entries(signed.headers), Buffer.alloc(0)), false);
        },
      );
      assert.deepEqual(await counts(), start);
    });

    it('signed, sealed writes with generated business JSON', async () => {
      const bases: Record<string, () => Record<string, unknown>> = {
        '/api/v1/payments': () => paymentInput(),
        '/api/v1/payments/cancel': () => ({ orderNo: refs.payment }),
        '/api/v1/payments/update': () => ({ orderNo: refs.payment, attach: 'a' }),
        '/api/v1/payouts': () => payoutInput(),
        '/api/v1/payouts/confirm': () => ({ orderNo: refs.payout }),
        '/api/v1/payouts/update': () => ({ orderNo: refs.payout, attach: 'b' }),
        '/api/v1/sandbox/payments/simulate': () => ({ orderNo: refs.payment, status: 'FAILED' }),
        '/api/v1/sandbox/payouts/simulate': () => ({ orderNo: refs.payout, status: 'FAILED' }),
        '/api/v1/sandbox/payouts/return': () => ({ orderNo: refs.payout }),
        '/api/v1/events/resend': () => ({ eventId: refs.eventId }),
      };
      const plaintext = fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constantFrom(...WRITE_PATHS).chain((path) =>
            fc.tuple(
              fc.constant(path),
              mutateBusiness((bases[path] as () => Record<string, unknown>)()).map((value) =>
                Buffer.from(JSON.stringify(value) ?? 'undefined'),
              ),
            ),
          ),
        },
        {
          weight: 1,
          arbitrary: fc.tuple(
            fc.constantFrom(...WRITE_PATHS),
            jsonText.map((text) => Buffer.from(text)),
          ),
        },
        {
          weight: 1,
          arbitrary: fc.tuple(
            fc.constantFrom(...WRITE_PATHS),
            fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
          ),
        },
      );
      await check('signed writes', runs(300), plaintext, async ([path, bytes]) => {
        const signed = signWriteRequest(
          { path, plaintext: bytes, bodyKey: merchant.bodyKey, idempotencyKey: randomUUID() },
          {
            accessKey: merchant.accessKey,
            key: merchant.key,
            created: Math.floor(platform.services.now() / 1000),
            nonce: randomUUID(),
          },
        );
        await exchange('write', requestBytes('POST', path, Object.entries(signed.headers), signed.body), true);
      });
    });

    it('sealed envelopes mutated after signing, and mutated envelopes signed correctly', async () => {
      const start = await counts();
      const otherBoxKey = generateBoxKeyPair();
      const validEnvelope = () => {
        const sealed = sealEnvelope(Buffer.from(JSON.stringify(paymentInput())), merchant.bodyKey);
        if (!sealed.ok) throw new Error(sealed.error.reason);
        return JSON.parse(sealed.value.toString('utf8')) as Record<string, unknown>;
      };
      const envelopeMember = fc.oneof(
        fc.jsonValue(),
        fc.constantFrom(
          1,
          2,
          0,
          -1,
          1.0,
          1.5,
          '1',
          ENVELOPE_ALG,
          `${ENVELOPE_ALG} `,
          'none',
          merchant.bodyKey.keyId,
          'bk_unknown',
          '',
        ),
        fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(bytes).toString('base64')),
        fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
      );
      type Mutation =
        | { kind: 'after'; at: number; insert: Uint8Array; remove: number }
        | { kind: 'member'; key: string; value: unknown }
        | { kind: 'drop'; key: string }
        | { kind: 'text'; prefix: string; suffix: string }
        | { kind: 'ciphertext'; flip: number; cut: number }
        | { kind: 'foreign-key' }
        | { kind: 'encryption'; header: string };
      const KEYS = ['version', 'alg', 'keyId', 'ciphertext'];
      const mutation: fc.Arbitrary<Mutation> = fc.oneof(
        fc.record({
          kind: fc.constant('after' as const),
          at: fc.nat(),
          insert: fc.uint8Array({ maxLength: 8 }),
          remove: fc.nat({ max: 8 }),
        }),
        fc.record({
          kind: fc.constant('member' as const),
          key: fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 8 })),
          value: envelopeMember,
        }),
        fc.record({ kind: fc.constant('drop' as const), key: fc.constantFrom(...KEYS) }),
        fc.record({
          kind: fc.constant('text' as const),
          prefix: fc.constantFrom('', ' ', '\ufeff', '[', '{"version":1,'),
          suffix: fc.constantFrom('', ' ', '\n', 'x', '}', ',{}', '\u0000'),
        }),
        fc.record({ kind: fc.constant('ciphertext' as const), flip: fc.nat(), cut: fc.nat({ max: 60 }) }),
        fc.constant({ kind: 'foreign-key' as const }),
        fc.record({ kind: fc.constant('encryption' as const), header: headerValue }),
      );
      const path = fc.constantFrom(...WRITE_PATHS);
      await check('mutated envelopes', runs(250), fc.tuple(path, mutation), async ([target, change]) => {
        const nowMs = platform.services.now();
        if (change.kind === 'after') {
          // Signed first, then the bytes change: the digest no longer matches.
          const signed = signWriteRequest(
            {
              path: target,
              plaintext: Buffer.from(JSON.stringify(paymentInput())),
              bodyKey: merchant.bodyKey,
              idempotencyKey: randomUUID(),
            },
            {
              accessKey: merchant.accessKey,
              key: merchant.key,
              created: Math.floor(nowMs / 1000),
              nonce: randomUUID(),
            },
          );
          const at = change.at % (signed.body.length + 1);
          const wire = Buffer.concat([
            signed.body.subarray(0, at),
            Buffer.from(change.insert),
            signed.body.subarray(at + change.remove),
          ]);
          if (wire.equals(signed.body)) wire[0] = 0x20; // always a change
          await exchange('envelope-after', requestBytes('POST', target, Object.entries(signed.headers), wire), true);
          return;
        }
        const envelope = validEnvelope();
        let wire: Buffer;
        let encryption = ENVELOPE_ALG;
        switch (change.kind) {
          case 'member':
            wire = Buffer.from(JSON.stringify({ ...envelope, [change.key]: change.value }));
            break;
          case 'drop': {
            const copy = { ...envelope };
            delete copy[change.key];
            wire = Buffer.from(JSON.stringify(copy));
            break;
          }
          case 'text':
            wire = Buffer.from(`${change.prefix}${JSON.stringify(envelope)}${change.suffix}`);
            break;
          case 'ciphertext': {
            const box = Buffer.from(envelope.ciphertext as string, 'base64');
            const at = change.flip % box.length;
            box[at] = (box[at] as number) ^ 0x01;
            const cut = change.cut % 2 === 0 ? box : box.subarray(0, Math.max(0, box.length - change.cut));
            wire = Buffer.from(JSON.stringify({ ...envelope, ciphertext: cut.toString('base64') }));
            break;
          }
          case 'foreign-key': {
            const sealed = sealEnvelope(Buffer.from('{}'), {
              keyId: merchant.bodyKey.keyId,
              publicKey: otherBoxKey.publicKey,
            });
            if (!sealed.ok) throw new Error(sealed.error.reason);
            wire = sealed.value;
            break;
          }
          case 'encryption':
            wire = Buffer.from(JSON.stringify(envelope));
            encryption = change.header;
            break;
        }
        const headers = signRawWrite(merchant, target, wire, nowMs, encryption);
        await exchange('envelope-signed', requestBytes('POST', target, headers, wire), true);
      });
      // Every one of these was refused (or, for the unchanged cases, wrote through the API); the
      // books still balance.
      const end = await counts();
      assert.ok(end.every((value, index) => value >= (start[index] as number)));
      assert.deepEqual(await platform.services.ledger.audit(), { unbalanced: [], drifted: [], negative: [] });
    });

    it('operator and portal APIs with generated JSON', async () => {
      const bases: Record<string, Record<string, unknown>> = {
        '/admin/v1/merchants': { name: 'Fuzz shop', publicKey: merchant.key.publicKey.toString('base64') },
        [`/admin/v1/merchants/${merchant.accessKey}/users`]: { email: 'fuzz@shop.example' },
        [`/admin/v1/merchants/${merchant.accessKey}/keys`]: { publicKey: merchant.key.publicKey.toString('base64') },
        '/admin/v1/events/resend': { eventId: refs.eventId },
        '/portal/api/session': { email: 'fuzz@shop.example', password: 'correct horse battery staple' },
        '/portal/api/setup': { token: 'x'.repeat(43), password: 'correct horse battery staple' },
      };
      const paths = Object.keys(bases);
      const generated = fc.constantFrom(...paths).chain((path) =>
        fc.tuple(
          fc.constant(path),
          fc.oneof(
            {
              weight: 3,
              arbitrary: mutateBusiness(bases[path] as Record<string, unknown>).map(
                (value) => JSON.stringify(value) ?? '',
              ),
            },
            { weight: 1, arbitrary: jsonText },
          ),
        ),
      );
      await check(
        'operator and portal JSON',
        runs(150),
        fc.record({
          request: generated,
          contentType: fc.constantFrom(
            'application/json',
            'application/json',
            'application/json',
            'text/plain',
            'application/x-www-form-urlencoded',
          ),
        }),
        async ({ request: [path, text], contentType }) => {
          const headers: Header[] = [['content-type', contentType]];
          if (path.startsWith('/admin/')) headers.push(['authorization', `Bearer ${ADMIN_TOKEN}`]);
          if (path.startsWith('/portal/')) headers.push(['origin', platform.url]);
          await exchange('json', requestBytes('POST', path, headers, Buffer.from(text)), true);
        },
      );
    });

    it('the process stayed healthy', async () => {
      await assertHealthy();
      const ready = await fetch(`${platform.url}/readyz`);
      assert.equal(ready.status, 200);
    });
  });
}
