/**
 * The wire schemas (@paygate/wire) against the served document and the running platform: the
 * OpenAPI components /openapi.json serves are exactly those the schemas generate, every operation
 * refers to them by $ref, and what real requests answer parses under them with nothing left over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Balance,
  CurrencyRates,
  LedgerEntry,
  openApiComponents,
  pageOf,
  Payment,
  PaymentEvent,
  Payout,
  PayoutEvent,
  countedPageOf,
  Credentials,
  Overview,
  PaymentDetail,
  PortalAuditEntry,
  PortalPerson,
  PortalSession,
  PortalSessionInfo,
  RecoverResult,
  PayoutDetail,
  PayoutReceipt,
  RejectedRequest,
  WebhookEvent,
  WebhookKeys,
} from '@paygate/wire';
import { z } from 'zod';
import {
  buildRead,
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { PortalClient, portalUser } from './portal-harness.js';

/** `value` parses under `schema` and parsing drops nothing: no member the schema does not declare. */
function assertWire(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `${what}: ${JSON.stringify(parsed.error?.issues)}\n${JSON.stringify(value)}`);
  assert.deepEqual(parsed.data, value, `${what} has members the wire schema does not declare`);
}

/** Every `$ref` in `node`, with the JSON path it was found at. */
function refsIn(node: unknown, path = '#'): { path: string; ref: string }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => refsIn(item, `${path}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [{ path, ref: value }] : refsIn(value, `${path}/${key}`),
  );
}

describe('wire schemas and the served OpenAPI document', () => {
  let platform: TestPlatform;
  let document: {
    components: { schemas: Record<string, unknown> };
    paths: Record<string, Record<string, { requestBody?: { 'x-plaintext'?: unknown } }>>;
  };

  before(async () => {
    platform = await startTestPlatform();
    document = (await (await fetch(`${platform.url}/openapi.json`)).json()) as typeof document;
  });
  after(() => platform.close());

  it('serves exactly the components the wire schemas generate', () => {
    assert.deepEqual(document.components.schemas, openApiComponents());
  });

  it('refers only to components that exist, and every write plaintext is a generated component', () => {
    const names = new Set(Object.keys(document.components.schemas));
    for (const { path, ref } of refsIn(document)) {
      const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
      assert.ok(match && names.has(match[1] as string), `${path}: ${ref}`);
    }
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const plaintext = operation.requestBody?.['x-plaintext'];
        if (plaintext !== undefined) assert.deepEqual(Object.keys(plaintext as object), ['$ref'], `${method} ${path}`);
      }
    }
  });
});

for (const database of databases()) {
  describe(`answers of the running platform parse under the wire schemas (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
    });
    after(() => platform.close());

    it('payments, payouts, balances, rates, ledger entries, events and their webhook bodies', async () => {
      const created = await post(platform, merchant, '/api/v1/payments', paymentInput({ amount: '200.00' }));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assertWire(Payment, created.body.data, 'created payment');
      const { orderNo } = created.body.data as Payment;

      const paid = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo,
        status: 'SUCCEEDED',
        channelTradeNo: 'CT-1',
        payer: { name: 'Ana Souza', documentNumber: '01234567890' },
      });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      assertWire(Payment, paid.body.data, 'succeeded payment');
      assertWire(
        Payment,
        (await get(platform, merchant, '/api/v1/payments', `orderNo=${orderNo}`)).body.data,
        'queried payment',
      );
      assertWire(pageOf(Payment), (await get(platform, merchant, '/api/v1/payments/list')).body.data, 'payment list');

      const payout = await post(platform, merchant, '/api/v1/payouts', {
        merchantOrderNo: 'W-wire-1',
        currency: 'BRL',
        amount: '10.00',
        webhookUrl: 'https://merchant.example/webhook/payout',
        payee: { name: 'João Lima', accountNumber: 'joao@example.com', bankCode: '001', documentNumber: '98765432100' },
      });
      assert.equal(payout.status, 200, JSON.stringify(payout.body));
      assertWire(Payout, payout.body.data, 'created payout');
      const payoutNo = (payout.body.data as Payout).orderNo;
      await post(platform, merchant, '/api/v1/sandbox/payouts/simulate', { orderNo: payoutNo, status: 'SUCCEEDED' });
      const returned = await post(platform, merchant, '/api/v1/sandbox/payouts/return', { orderNo: payoutNo });
      assert.equal(returned.status, 200, JSON.stringify(returned.body));
      assertWire(Payout, returned.body.data, 'returned payout');
      assertWire(pageOf(Payout), (await get(platform, merchant, '/api/v1/payouts/list')).body.data, 'payout list');
      const receipt = await get(platform, merchant, '/api/v1/payouts/receipt', `orderNo=${payoutNo}`);
      assertWire(PayoutReceipt, receipt.body.data, 'payout receipt');

      for (const balance of (await get<unknown[]>(platform, merchant, '/api/v1/balances')).body.data ?? []) {
        assertWire(Balance, balance, 'balance');
      }
      for (const rates of (await get<unknown[]>(platform, merchant, '/api/v1/rates')).body.data ?? []) {
        assertWire(CurrencyRates, rates, 'rates');
      }
      const entries = await get(platform, merchant, '/api/v1/ledger/entries');
      assertWire(pageOf(LedgerEntry), entries.body.data, 'ledger entries');
      assert.ok((entries.body.data as { items: unknown[] }).items.length >= 4);

      const events = await get(platform, merchant, '/api/v1/events', `orderNo=${payoutNo}`);
      assertWire(pageOf(WebhookEvent), events.body.data, 'events with attempt log');
      assertWire(pageOf(WebhookEvent), (await get(platform, merchant, '/api/v1/events')).body.data, 'events');

      // The webhook bodies as stored, the bytes every delivery attempt sends.
      const bodies = await platform.services.db.query<{ order_type: string; body: Uint8Array }>(
        'SELECT order_type, body FROM events ORDER BY id',
      );
      assert.equal(bodies.rows.length, 3);
      for (const row of bodies.rows) {
        const body: unknown = JSON.parse(Buffer.from(row.body).toString('utf8'));
        assertWire(row.order_type === 'PAYMENT' ? PaymentEvent : PayoutEvent, body, `${row.order_type} webhook body`);
      }

      const keys = (await (await fetch(`${platform.url}/.well-known/paygate/webhook-keys`)).json()) as unknown;
      assertWire(WebhookKeys, keys, 'published webhook keys');

      // The portal API's order pages, read by the portal web app with the same types.
      const user = await portalUser(platform, merchant);
      const portal = await PortalClient.signIn(platform, user.email, user.password);
      const paymentPage = await portal.get(`/portal/api/payments/${orderNo}`);
      assert.equal(paymentPage.status, 200, paymentPage.text);
      assertWire(PaymentDetail, paymentPage.body.data, 'portal payment page');
      const payoutPage = await portal.get(`/portal/api/payouts/${payoutNo}`);
      assert.equal(payoutPage.status, 200, payoutPage.text);
      assertWire(PayoutDetail, payoutPage.body.data, 'portal payout page');
      const forged = buildRead(merchant, '/api/v1/balances', undefined, platform.services.now());
      forged.headers.signature = `merchant=:${Buffer.alloc(64).toString('base64')}:`;
      assert.equal((await fetch(`${platform.url}/api/v1/balances`, { headers: forged.headers })).status, 401);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const rejected = await portal.get('/portal/api/rejected-requests');
      assert.ok(Array.isArray(rejected.body.data) && rejected.body.data.length > 0, rejected.text);
      assertWire(z.array(RejectedRequest), rejected.body.data, 'rejected requests');
      assertWire(PortalSession, (await portal.get('/portal/api/session')).body.data, 'portal session');
      assertWire(z.array(PortalSessionInfo), (await portal.get('/portal/api/sessions')).body.data, 'portal sessions');
      assertWire(z.array(PortalPerson), (await portal.get('/portal/api/people')).body.data, 'portal people');
      const audit = await portal.get<{ entries: unknown[] }>('/portal/api/audit');
      assert.ok((audit.body.data?.entries.length ?? 0) > 0, audit.text);
      assertWire(z.object({ entries: z.array(PortalAuditEntry), max: z.int() }), audit.body.data, 'portal audit trail');
      assertWire(Credentials, (await portal.get('/portal/api/credentials')).body.data, 'portal credentials');
      assertWire(Overview, (await portal.get('/portal/api/overview')).body.data, 'portal overview');
      const payments = await portal.get('/portal/api/payments');
      assertWire(countedPageOf(Payment), payments.body.data, 'portal payment list');
      const recovered = await portal.post('/portal/api/events/recover', { from: 0, to: platform.services.now() });
      assertWire(RecoverResult, recovered.body.data, 'portal recover');
    });
  });
}
