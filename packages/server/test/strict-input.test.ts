/**
 * Strict input at the edge, table-driven through the real APIs: query parameters and cursors
 * are type- and range-checked before they reach SQL, and JSON bodies (the merchant API's
 * decrypted business JSON, the portal's and the operator's) refuse duplicated member names.
 * Every refusal is a 400 VALIDATION_FAILED naming the parameter or member; none is a 500.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { generateSigningKey, signWriteRequest } from '@paygate/protocol';
import {
  type ApiResponse,
  count,
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { fund, payoutInput } from './money-harness.js';
import { ADMIN_TOKEN, PortalClient, portalUser } from './portal-harness.js';

/** base64url of a cursor's inner text, as a tampering client would build it. */
const b64 = (text: string) => Buffer.from(text).toString('base64url');
const GOOD_CURSOR = b64('1700000000000:5');

type Api = 'merchant' | 'portal' | 'operator';
interface QueryRow {
  readonly kind: string;
  readonly api: Api;
  readonly path: string;
  readonly query: string;
  /** The parameter the refusal must name. */
  readonly field: string;
  /** Already refused before the strict parsing (a regression guard, not a found fault). */
  readonly guard?: boolean;
}

const MERCHANT_LISTS = ['/api/v1/payments/list', '/api/v1/payouts/list', '/api/v1/events', '/api/v1/ledger/entries'];
const PORTAL_LISTS = ['/portal/api/payments', '/portal/api/payouts', '/portal/api/ledger'];

/**
 * Malformed numbers for `from`, `to` (Unix ms) and `pageSize`; `true` marks inputs that were
 * already refused before the strict parsing (kept as guards), the rest were accepted or a 500.
 */
const BAD_NUMBERS: readonly [string, boolean][] = [
  ['0x10', false],
  ['1e3', false],
  ['+5', false],
  ['%2012', false], // " 12"
  ['12%20', false], // "12 "
  ['8640000000000001', false], // past the end of the JS Date range
  ['253402300800000', false], // year 10000
  ['1e400', true],
  ['9223372036854775808', true], // 2^63
  ['-1', true],
  ['1.5', true],
  ['abc', true],
  ['1_000', true],
];
const BAD_PAGE_SIZES: readonly [string, boolean][] = [
  ['1e1', false],
  ['0x14', false],
  ['20.0', false],
  ['020', false],
  ['0', true],
  ['101', true],
];
const BAD_CURSORS: readonly [string, boolean][] = [
  [b64('1700000000000:9223372036854775808'), false], // id 2^63
  [b64('1700000000000:0'), false], // id 0
  [b64('999999999999999:5'), false], // past year 9999
  [b64('01700000000000:5'), false], // leading zero
  [`${GOOD_CURSOR}==`, false], // padding added
  [`${GOOD_CURSOR}!!`, false], // garbage appended
  ['not%20base64!', true],
  [b64('{"createdAt":1700000000000,"id":5}'), true], // JSON
  [b64('1700000000000:-5'), true],
  [b64('1700000000000:99999999999999999999'), true], // 20 digits
  [b64('1700000000000:five'), true],
  [b64('1700000000000.5:5'), true],
  [b64('1700000000000:5:6'), true],
  [Buffer.from('1700000000000:5\u00ff\u00fe').toString('base64'), true], // standard alphabet
];

function listRows(api: Api, path: string, params: readonly string[]): QueryRow[] {
  const rows: QueryRow[] = [];
  for (const name of ['from', 'to'] as const) {
    for (const [value, guard] of BAD_NUMBERS) {
      rows.push({ kind: 'number', api, path, query: `${name}=${value}`, field: name, guard });
    }
  }
  for (const [value, guard] of BAD_PAGE_SIZES) {
    rows.push({ kind: 'number', api, path, query: `pageSize=${value}`, field: 'pageSize', guard });
  }
  for (const [value, guard] of BAD_CURSORS) {
    rows.push({ kind: 'cursor', api, path, query: `cursor=${value}`, field: 'cursor', guard });
  }
  for (const name of params) {
    rows.push({ kind: 'empty', api, path, query: `${name}=`, field: name });
    rows.push({ kind: 'empty', api, path, query: name, field: name });
  }
  const merchant = api === 'merchant';
  rows.push({ kind: 'repeated', api, path, query: 'pageSize=5&pageSize=5', field: 'pageSize', guard: true });
  rows.push({ kind: 'repeated', api, path, query: 'from=1&to=2&from=1', field: 'from', guard: true });
  rows.push({ kind: 'unknown', api, path, query: 'pageSize=5&limit=5', field: 'limit', guard: merchant });
  rows.push({ kind: 'unknown', api, path, query: 'PageSize=5', field: 'PageSize', guard: merchant });
  rows.push({ kind: 'range', api, path, query: 'from=1700000000001&to=1700000000000', field: 'to' });
  return rows;
}

const MERCHANT_LIST_PARAMS: Record<string, readonly string[]> = {
  '/api/v1/payments/list': ['status', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/payouts/list': ['status', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/events': ['orderNo', 'status', 'from', 'to', 'pageSize', 'cursor'],
  '/api/v1/ledger/entries': ['currency', 'from', 'to', 'pageSize', 'cursor'],
};
const PORTAL_LIST_PARAMS: Record<string, readonly string[]> = {
  '/portal/api/payments': ['status', 'from', 'to', 'orderNo', 'pageSize', 'cursor'],
  '/portal/api/payouts': ['status', 'from', 'to', 'orderNo', 'pageSize', 'cursor'],
  '/portal/api/ledger': ['currency', 'from', 'to', 'pageSize', 'cursor'],
};

const P = `P${'1'.repeat(18)}`;
const W = `W${'1'.repeat(18)}`;

export const QUERY_ROWS: readonly QueryRow[] = [
  ...MERCHANT_LISTS.flatMap((path) => listRows('merchant', path, MERCHANT_LIST_PARAMS[path] ?? [])),
  ...PORTAL_LISTS.flatMap((path) => listRows('portal', path, PORTAL_LIST_PARAMS[path] ?? [])),
  // Order look-ups.
  ...['/api/v1/payments', '/api/v1/payouts', '/api/v1/payouts/receipt'].flatMap((path): QueryRow[] => {
    const no = path === '/api/v1/payments' ? P : W;
    return [
      { kind: 'repeated', api: 'merchant', path, query: `orderNo=${no}&orderNo=${no}`, field: 'orderNo', guard: true },
      {
        kind: 'repeated',
        api: 'merchant',
        path,
        query: 'merchantOrderNo=a&merchantOrderNo=b',
        field: 'merchantOrderNo',
        guard: true,
      },
      { kind: 'empty', api: 'merchant', path, query: 'orderNo=&merchantOrderNo=M-1', field: 'orderNo' },
      { kind: 'empty', api: 'merchant', path, query: `orderNo=${no}&merchantOrderNo=`, field: 'merchantOrderNo' },
      { kind: 'empty', api: 'merchant', path, query: `orderNo=${no}&merchantOrderNo`, field: 'merchantOrderNo' },
      { kind: 'unknown', api: 'merchant', path, query: `orderNo=${no}&amount=1`, field: 'amount', guard: true },
      { kind: 'string', api: 'merchant', path, query: 'merchantOrderNo=M%00-1', field: 'merchantOrderNo', guard: true },
      { kind: 'string', api: 'merchant', path, query: 'orderNo=P1', field: 'orderNo', guard: true },
    ];
  }),
  // Events by order: a platform order number only.
  { kind: 'string', api: 'merchant', path: '/api/v1/events', query: 'orderNo=%00', field: 'orderNo' },
  { kind: 'string', api: 'merchant', path: '/api/v1/events', query: 'orderNo=M-1', field: 'orderNo' },
  { kind: 'string', api: 'merchant', path: '/api/v1/events', query: `orderNo=${P}%00`, field: 'orderNo' },
  { kind: 'string', api: 'merchant', path: '/api/v1/events', query: 'status=DELIVERED', field: 'status', guard: true },
  {
    kind: 'string',
    api: 'merchant',
    path: '/api/v1/payments/list',
    query: 'status=pending',
    field: 'status',
    guard: true,
  },
  {
    kind: 'string',
    api: 'merchant',
    path: '/api/v1/payouts/list',
    query: 'status=EXPIRED',
    field: 'status',
    guard: true,
  },
  {
    kind: 'string',
    api: 'merchant',
    path: '/api/v1/ledger/entries',
    query: 'currency=brl',
    field: 'currency',
    guard: true,
  },
  // Balances and rates.
  { kind: 'string', api: 'merchant', path: '/api/v1/balances', query: 'currency=XXX', field: 'currency', guard: true },
  {
    kind: 'string',
    api: 'merchant',
    path: '/api/v1/balances',
    query: 'currency=BRL%00',
    field: 'currency',
    guard: true,
  },
  { kind: 'empty', api: 'merchant', path: '/api/v1/balances', query: 'currency=', field: 'currency' },
  {
    kind: 'repeated',
    api: 'merchant',
    path: '/api/v1/balances',
    query: 'currency=BRL&currency=BRL',
    field: 'currency',
    guard: true,
  },
  {
    kind: 'unknown',
    api: 'merchant',
    path: '/api/v1/balances',
    query: 'currency=BRL&account=1',
    field: 'account',
    guard: true,
  },
  { kind: 'string', api: 'merchant', path: '/api/v1/rates', query: 'currency=brl', field: 'currency', guard: true },
  { kind: 'string', api: 'merchant', path: '/api/v1/rates', query: 'method=pix', field: 'method', guard: true },
  { kind: 'empty', api: 'merchant', path: '/api/v1/rates', query: 'method=', field: 'method' },
  {
    kind: 'repeated',
    api: 'merchant',
    path: '/api/v1/rates',
    query: 'method=PIX&method=SPEI',
    field: 'method',
    guard: true,
  },
  { kind: 'unknown', api: 'merchant', path: '/api/v1/rates', query: 'fee=1', field: 'fee', guard: true },
  // Portal: order numbers, currencies, the export and parameterless lists.
  { kind: 'string', api: 'portal', path: '/portal/api/payments', query: 'orderNo=M%00-1', field: 'orderNo' },
  { kind: 'string', api: 'portal', path: '/portal/api/payouts', query: 'orderNo=%00', field: 'orderNo' },
  { kind: 'string', api: 'portal', path: '/portal/api/payments', query: 'status=BOGUS', field: 'status', guard: true },
  { kind: 'string', api: 'portal', path: '/portal/api/ledger', query: 'currency=XX', field: 'currency', guard: true },
  { kind: 'unknown', api: 'portal', path: '/portal/api/ledger/export.csv', query: 'cursor=abc', field: 'cursor' },
  { kind: 'number', api: 'portal', path: '/portal/api/ledger/export.csv', query: 'from=0x10', field: 'from' },
  {
    kind: 'repeated',
    api: 'portal',
    path: '/portal/api/ledger/export.csv',
    query: 'currency=BRL&currency=MXN',
    field: 'currency',
    guard: true,
  },
  { kind: 'unknown', api: 'portal', path: '/portal/api/balances', query: 'currency=BRL', field: 'currency' },
  { kind: 'unknown', api: 'portal', path: '/portal/api/rejected-requests', query: 'pageSize=5', field: 'pageSize' },
  // Operator: its listings take no parameters.
  { kind: 'unknown', api: 'operator', path: '/admin/v1/merchants', query: 'pageSize=5', field: 'pageSize' },
  { kind: 'unknown', api: 'operator', path: '/admin/v1/platform-keys', query: 'kind=body', field: 'kind' },
];

/** A signed, sealed POST whose decrypted business JSON is exactly `plaintext`. */
async function postRaw(platform: TestPlatform, merchant: TestMerchant, path: string, plaintext: string) {
  const signed = signWriteRequest(
    { path, plaintext: Buffer.from(plaintext), bodyKey: merchant.bodyKey, idempotencyKey: randomUUID() },
    {
      accessKey: merchant.accessKey,
      key: merchant.key,
      created: Math.floor(platform.services.now() / 1000),
      nonce: randomUUID(),
    },
  );
  const response = await fetch(platform.url + path, {
    method: 'POST',
    headers: signed.headers,
    body: new Uint8Array(signed.body),
  });
  return { status: response.status, body: (await response.json()) as ApiResponse['body'] };
}

interface BodyContext {
  /** A PENDING payment's merchantOrderNo. */
  readonly pendingOrderNo: string;
  /** An event of the merchant. */
  readonly eventId: string;
  /** A fresh merchant public key (base64). */
  publicKey(): string;
}

interface BodyRow {
  readonly api: Api;
  readonly name: string;
  readonly path: string;
  /** The JSON text sent; built per call, so order numbers stay unique. */
  readonly text: (context: BodyContext) => string;
  readonly field: string;
  /** The table whose row count must not change. */
  readonly table?: string;
}

/** Appends raw members to a JSON object's text. */
const withMembers = (value: object, members: string) => JSON.stringify(value).replace(/}$/, `,${members}}`);

const BODY_ROWS: readonly BodyRow[] = [
  {
    api: 'merchant',
    name: 'payment create, top-level member twice',
    path: '/api/v1/payments',
    text: () => withMembers(paymentInput(), '"merchantOrderNo":"M-other-1"'),
    field: 'merchantOrderNo',
    table: 'payments',
  },
  {
    api: 'merchant',
    name: 'payment create, nested member twice',
    path: '/api/v1/payments',
    text: () => JSON.stringify(paymentInput()).replace('{"code":"PIX"}', '{"code":"PIX","code":"BOLETO"}'),
    field: 'paymentMethod.code',
    table: 'payments',
  },
  {
    api: 'merchant',
    name: 'payment create, the same name escaped',
    path: '/api/v1/payments',
    text: () => withMembers(paymentInput(), '"\\u0061ttach":"cart=1"'),
    field: 'attach',
    table: 'payments',
  },
  {
    api: 'merchant',
    name: 'payment create, twice inside an array element',
    path: '/api/v1/payments',
    text: () => withMembers(paymentInput(), '"extra":[{"k":1},{"k":1,"k":2}]'),
    field: 'extra.1.k',
    table: 'payments',
  },
  {
    api: 'merchant',
    name: 'payout create, payee.name twice',
    path: '/api/v1/payouts',
    text: () => JSON.stringify(payoutInput()).replace('"payee":{', '"payee":{"name":"Mallory",'),
    field: 'payee.name',
    table: 'payouts',
  },
  {
    api: 'merchant',
    name: 'payment cancel, orderNo twice',
    path: '/api/v1/payments/cancel',
    text: (c) => `{"merchantOrderNo":"M-none","merchantOrderNo":"${c.pendingOrderNo}"}`,
    field: 'merchantOrderNo',
    table: 'events',
  },
  {
    api: 'merchant',
    name: 'event resend, eventId twice',
    path: '/api/v1/events/resend',
    text: (c) => `{"eventId":"evt_none","eventId":"${c.eventId}"}`,
    field: 'eventId',
  },
  {
    api: 'operator',
    name: 'merchant create, name twice',
    path: '/admin/v1/merchants',
    text: (c) => `{"name":"Shop A","publicKey":"${c.publicKey()}","name":"Shop B"}`,
    field: 'name',
    table: 'merchants',
  },
  {
    api: 'portal',
    name: 'portal key add, publicKey twice',
    path: '/portal/api/keys',
    text: (c) => `{"publicKey":"not a key","publicKey":"${c.publicKey()}"}`,
    field: 'publicKey',
    table: 'merchant_keys',
  },
];

for (const database of databases()) {
  describe(`strict input (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let portal: PortalClient;
    let context: BodyContext;

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
      await fund(platform, merchant, '1000.00');
      const user = await portalUser(platform, merchant);
      portal = await PortalClient.signIn(platform, user.email, user.password);
      const pending = paymentInput();
      assert.equal((await post(platform, merchant, '/api/v1/payments', pending)).status, 200);
      const event = await platform.services.db.query<{ event_id: string }>('SELECT event_id FROM events LIMIT 1');
      context = {
        pendingOrderNo: pending.merchantOrderNo,
        eventId: event.rows[0]?.event_id ?? '',
        publicKey: () => generateSigningKey().publicKey.toString('base64'),
      };
    });
    after(() => platform.close());

    const send = async (api: Api, path: string, query: string) => {
      if (api === 'merchant') return get(platform, merchant, path, query);
      if (api === 'portal') return portal.get(`${path}?${query}`);
      const response = await fetch(`${platform.url}${path}?${query}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return { status: response.status, body: (await response.json()) as ApiResponse['body'] };
    };

    for (const row of QUERY_ROWS) {
      const label = row.guard ? `${row.kind} (already refused before)` : row.kind;
      it(`${label}: ${row.api} GET ${row.path}?${row.query} is a 400 naming ${row.field}`, async () => {
        const response = await send(row.api, row.path, row.query);
        assert.equal(response.status, 400, JSON.stringify(response.body));
        assert.equal(response.body.msg, 'VALIDATION_FAILED');
        assert.ok(
          response.body.errors?.some((error) => error.field === row.field),
          `expected an error for ${row.field}: ${JSON.stringify(response.body)}`,
        );
      });
    }

    for (const row of BODY_ROWS) {
      it(`duplicate member: ${row.name} is a 400 naming ${row.field} and creates nothing`, async () => {
        const before = row.table ? await count(platform, row.table) : 0;
        let response: { status: number; body: ApiResponse['body'] };
        if (row.api === 'merchant') {
          response = await postRaw(platform, merchant, row.path, row.text(context));
        } else if (row.api === 'portal') {
          const sent = await fetch(platform.url + row.path, {
            method: 'POST',
            headers: {
              cookie: portal.cookie ?? '',
              'x-csrf-token': portal.csrfToken ?? '',
              'content-type': 'application/json',
            },
            body: row.text(context),
          });
          response = { status: sent.status, body: (await sent.json()) as ApiResponse['body'] };
        } else {
          const sent = await fetch(platform.url + row.path, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            body: row.text(context),
          });
          response = { status: sent.status, body: (await sent.json()) as ApiResponse['body'] };
        }
        assert.equal(response.status, 400, JSON.stringify(response.body));
        assert.equal(response.body.msg, 'VALIDATION_FAILED');
        assert.deepEqual(
          response.body.errors?.map((error) => error.field),
          [row.field],
        );
        if (row.table) assert.equal(await count(platform, row.table), before);
      });
    }

    it('still accepts the same names in different objects and valid queries and cursors', async () => {
      const created = await postRaw(
        platform,
        merchant,
        '/api/v1/payments',
        JSON.stringify(paymentInput({ paymentMethod: { code: 'PIX' } })),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      await post(platform, merchant, '/api/v1/payments', paymentInput());
      const first = await get<{ items: unknown[]; nextCursor: string | null }>(
        platform,
        merchant,
        '/api/v1/payments/list',
        `pageSize=1&from=0&to=${platform.services.now() + 1000}`,
      );
      assert.equal(first.status, 200);
      assert.ok(first.body.data?.nextCursor);
      const second = await get(
        platform,
        merchant,
        '/api/v1/payments/list',
        `pageSize=1&cursor=${first.body.data.nextCursor}`,
      );
      assert.equal(second.status, 200);
      assert.equal(
        (await portal.get(`/portal/api/payments?pageSize=1&cursor=${first.body.data.nextCursor}`)).status,
        200,
      );
      assert.equal((await get(platform, merchant, '/api/v1/events', `orderNo=${P}`)).status, 200);
    });
  });
}
