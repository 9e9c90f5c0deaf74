/**
 * The portal finds things (issue 39, item 6), on PGlite and PostgreSQL: its API searches a
 * merchant's payments and payouts by order number, merchant order number, payer or payee name or
 * document number, and amount (migration 0023's indexes serve each condition), and writes a
 * payouts report (CSV) for a period with fees and returns.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Payment } from '@paygate/wire';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { fund, type Payout, payoutInput, SIMPLE_FEES } from './money-harness.js';
import { PortalClient, portalUser } from './portal-harness.js';

interface Found<T> {
  items: T[];
  nextCursor: string | null;
  total: number;
}

for (const database of databases()) {
  describe(`portal search and payouts report (${database})`, () => {
    let platform: TestPlatform;
    let client: PortalClient;
    let other: PortalClient;
    let merchant: TestMerchant;
    const payments: Record<string, Payment> = {};
    const payouts: Record<string, Payout> = {};

    before(async () => {
      platform = await startTestPlatform({ database, env: { PAYGATE_FEES: SIMPLE_FEES } });
      merchant = await createMerchant(platform, 'Loja Busca');
      const pay = async (key: string, overrides: Record<string, unknown>, payer?: Record<string, string>) => {
        const created = await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput(overrides));
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const payment = created.body.data as Payment;
        if (payer) {
          const paid = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
            orderNo: payment.orderNo,
            status: 'SUCCEEDED',
            payer,
          });
          assert.equal(paid.status, 200, JSON.stringify(paid.body));
        }
        payments[key] = payment;
      };
      await pay(
        'maria',
        { amount: '10.00', merchantOrderNo: 'SHOP-1001' },
        {
          name: 'Maria Silva',
          documentNumber: '123.456.789-01',
        },
      );
      await pay(
        'joao',
        { amount: '250.75', merchantOrderNo: 'SHOP-1002' },
        {
          name: 'João Silva Souza',
          documentNumber: '98765432100',
        },
      );
      await pay(
        'mx',
        { amount: '10', currency: 'MXN', paymentMethod: { code: 'SPEI' } },
        {
          name: 'José Pérez',
          documentNumber: 'GODE561231GR8',
        },
      );
      await pay('open', { amount: '33.30', merchantOrderNo: 'SHOP-1003' });
      await pay('big', { amount: '1234.50' });

      await fund(platform, merchant, '1000.00');
      const payout = async (key: string, overrides: Record<string, unknown>, steps: string[]) => {
        const created = await post<Payout>(platform, merchant, '/api/v1/payouts', payoutInput(overrides));
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const orderNo = (created.body.data as Payout).orderNo;
        for (const step of steps) {
          const path = step === 'confirm' ? '/api/v1/payouts/confirm' : `/api/v1/sandbox/payouts/${step}`;
          const body = step === 'simulate' ? { orderNo, status: 'SUCCEEDED' } : { orderNo };
          const answer = await post(platform, merchant, path, body);
          assert.equal(answer.status, 200, `${step}: ${JSON.stringify(answer.body)}`);
        }
        payouts[key] = created.body.data as Payout;
      };
      await payout(
        'paid',
        { amount: '100.00', payee: { name: 'Ana Costa', accountNumber: '0001', documentNumber: '111.222.333-44' } },
        ['confirm', 'simulate'],
      );
      await payout('returned', { amount: '50.00', merchantOrderNo: 'PAYOUT-RET' }, ['confirm', 'simulate', 'return']);
      await payout('pending', { amount: '10.00' }, []);

      client = await PortalClient.signIn(
        platform,
        ...(Object.values(await portalUser(platform, merchant)) as [string, string]),
      );
      // Another merchant with an order of the same amount and payer name: never found by the first.
      const stranger = await createMerchant(platform, 'Outra Loja');
      await post(
        platform,
        stranger,
        '/api/v1/payments',
        paymentInput({ amount: '10.00', merchantOrderNo: 'SHOP-1001' }),
      );
      other = await PortalClient.signIn(
        platform,
        ...(Object.values(await portalUser(platform, stranger)) as [string, string]),
      );
    });
    after(() => platform.close());

    const search = async (noun: 'payments' | 'payouts', q: string, extra = '', as = client) => {
      const answer = await as.get<Found<{ orderNo: string }>>(`/portal/api/${noun}?q=${encodeURIComponent(q)}${extra}`);
      assert.equal(answer.status, 200, answer.text);
      const found = answer.body.data as Found<{ orderNo: string }>;
      return { orderNos: found.items.map((item) => item.orderNo).sort(), total: found.total, next: found.nextCursor };
    };
    const orderNos = (...keys: string[]) => keys.map((key) => (payments[key] ?? payouts[key])?.orderNo).sort();

    it('finds payments by order number, merchant order number, payer name words and document number', async () => {
      const maria = payments.maria as Payment;
      assert.deepEqual((await search('payments', maria.orderNo)).orderNos, orderNos('maria'));
      assert.deepEqual((await search('payments', 'SHOP-1002')).orderNos, orderNos('joao'));
      assert.deepEqual((await search('payments', 'silva')).orderNos, orderNos('maria', 'joao'));
      assert.deepEqual((await search('payments', 'Sil mar')).orderNos, orderNos('maria'), 'every word, by prefix');
      assert.deepEqual((await search('payments', 'joão souza')).orderNos, orderNos('joao'));
      assert.deepEqual((await search('payments', '12345678901')).orderNos, orderNos('maria'), 'digits only');
      assert.deepEqual((await search('payments', '987.654.321-00')).orderNos, orderNos('joao'), 'formatted');
      assert.deepEqual((await search('payments', 'gode561231gr8')).orderNos, orderNos('mx'));
      assert.deepEqual((await search('payments', 'nobody')).orderNos, []);
    });

    it('finds payments by amount in any currency, with a point or a comma; other filters still apply', async () => {
      assert.deepEqual((await search('payments', '10')).orderNos, orderNos('maria', 'mx'));
      assert.deepEqual((await search('payments', '10.00')).orderNos, orderNos('maria', 'mx'));
      assert.deepEqual((await search('payments', '250,75')).orderNos, orderNos('joao'));
      assert.deepEqual((await search('payments', '33.3')).orderNos, orderNos('open'));
      for (const typed of ['1234.5', '1.234,50', '1,234.50']) {
        assert.deepEqual((await search('payments', typed)).orderNos, orderNos('big'), typed);
      }
      assert.deepEqual((await search('payments', '10', '&status=SUCCEEDED')).orderNos, orderNos('maria', 'mx'));
      assert.deepEqual((await search('payments', '33.30', '&status=SUCCEEDED')).orderNos, []);
      const future = Date.now() + 86_400_000;
      assert.deepEqual((await search('payments', '10', `&from=${future}`)).orderNos, []);
      const paged = await search('payments', '10', '&pageSize=1');
      assert.equal(paged.orderNos.length, 1);
      assert.equal(paged.total, 2);
      assert.ok(paged.next);
      const rest = await search('payments', '10', `&pageSize=1&cursor=${paged.next}`);
      assert.deepEqual([...paged.orderNos, ...rest.orderNos].sort(), orderNos('maria', 'mx'));
      assert.equal(rest.next, null);
    });

    it('finds payouts by order number, merchant order number, payee name and document, and amount', async () => {
      const paid = payouts.paid as Payout;
      assert.deepEqual((await search('payouts', paid.orderNo)).orderNos, orderNos('paid'));
      assert.deepEqual((await search('payouts', 'PAYOUT-RET')).orderNos, orderNos('returned'));
      assert.deepEqual((await search('payouts', 'ana')).orderNos, orderNos('paid'));
      assert.deepEqual((await search('payouts', '11122233344')).orderNos, orderNos('paid'));
      assert.deepEqual((await search('payouts', 'João')).orderNos, orderNos('returned', 'pending'));
      assert.deepEqual((await search('payouts', '50')).orderNos, orderNos('returned'));
      assert.deepEqual((await search('payouts', '10.00')).orderNos, orderNos('pending'));
    });

    it("never finds another merchant's orders; refuses an empty or long search, and q with orderNo", async () => {
      assert.deepEqual((await search('payments', 'SHOP-1001', '', other)).orderNos.length, 1);
      assert.deepEqual((await search('payments', 'silva', '', other)).orderNos, []);
      assert.deepEqual((await search('payments', (payments.maria as Payment).orderNo, '', other)).orderNos, []);
      for (const query of ['q=', `q=${'x'.repeat(101)}`, 'q=silva&orderNo=SHOP-1001', 'q=a&q=b']) {
        const refused = await client.get(`/portal/api/payments?${query}`);
        assert.equal(refused.status, 400, query);
      }
    });

    it('writes the payouts report for a period: fee, total, the return and what each payout took', async () => {
      const report = await client.get('/portal/api/payouts/report.csv');
      assert.equal(report.status, 200, report.text);
      assert.match(report.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(
        report.headers.get('content-disposition') ?? '',
        /^attachment; filename="payouts-all-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d\.csv"$/,
      );
      const [header, ...lines] = report.text.trim().split('\r\n');
      assert.equal(
        header,
        'orderNo,merchantOrderNo,status,currency,amount,fee,total,refundNo,refundAmount,refundedAt,charged,createdAt,confirmedAt,finalizedAt,channelTradeNo',
      );
      const rows = new Map(lines.map((line) => [line.split(',')[0], line.split(',')]));
      assert.equal(rows.size, 3);
      // SIMPLE_FEES: BRL payouts 1% + 2.00.
      const paid = rows.get((payouts.paid as Payout).orderNo) as string[];
      assert.deepEqual(paid.slice(2, 11), ['SUCCEEDED', 'BRL', '100.00', '3.00', '103.00', '', '', '', '103.00']);
      const returned = rows.get((payouts.returned as Payout).orderNo) as string[];
      assert.deepEqual(returned.slice(2, 7), ['REFUNDED', 'BRL', '50.00', '2.50', '52.50']);
      assert.ok(returned[7], 'the refund number');
      assert.equal(returned[8], '50.00', 'the whole principal returned');
      assert.match(returned[9] as string, /^\d{4}-\d\d-\d\dT/);
      assert.equal(returned[10], '2.50', 'the fee is kept');
      const pending = rows.get((payouts.pending as Payout).orderNo) as string[];
      assert.deepEqual(pending.slice(2, 11), ['PENDING', 'BRL', '10.00', '2.10', '12.10', '', '', '', '0.00']);

      const none = await client.get(`/portal/api/payouts/report.csv?from=0&to=1000&currency=BRL`);
      assert.equal(none.text.trim().split('\r\n').length, 1, 'a period with no payouts is the header alone');
      assert.match(none.headers.get('content-disposition') ?? '', /payouts-BRL-1970-01-01-to-1970-01-01\.csv/);
      const mxn = await client.get('/portal/api/payouts/report.csv?currency=MXN');
      assert.equal(mxn.text.trim().split('\r\n').length, 1);
      for (const query of ['currency=XXX', 'from=10&to=5', `from=0&to=${400 * 86_400_000}`, 'status=PAID']) {
        assert.equal((await client.get(`/portal/api/payouts/report.csv?${query}`)).status, 400, query);
      }
      assert.equal((await other.get('/portal/api/payouts/report.csv')).text.trim().split('\r\n').length, 1);
      assert.equal((await fetch(`${platform.url}/portal/api/payouts/report.csv`)).status, 401);
    });

    it('writes the payments report for a period, beside the payouts’: owner and finance, not developer or viewer', async () => {
      const report = await client.get('/portal/api/payments/report.csv');
      assert.equal(report.status, 200, report.text);
      assert.match(report.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(
        report.headers.get('content-disposition') ?? '',
        /^attachment; filename="payments-all-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d\.csv"$/,
      );
      const [header, ...lines] = report.text.trim().split('\r\n');
      assert.equal(
        header,
        'orderNo,merchantOrderNo,status,currency,amount,paidAmount,method,createdAt,expiresAt,finalizedAt,channelTradeNo',
      );
      const rows = new Map(lines.map((line) => [line.split(',')[0], line.split(',')]));
      // Each payment of the period (the funding payment too), one row each.
      for (const payment of Object.values(payments)) assert.ok(rows.has(payment.orderNo), payment.orderNo);
      assert.equal(rows.size, lines.length);
      const maria = rows.get((payments.maria as Payment).orderNo) as string[];
      assert.deepEqual(maria.slice(1, 7), ['SHOP-1001', 'SUCCEEDED', 'BRL', '10.00', '10.00', 'PIX']);
      assert.match(maria[7] as string, /^\d{4}-\d\d-\d\dT.*Z$/);
      assert.match(maria[9] as string, /^\d{4}-\d\d-\d\dT/);
      const open = rows.get((payments.open as Payment).orderNo) as string[];
      assert.deepEqual([open[2], open[5], open[9]], ['PENDING', '', '']);
      const mxn = await client.get('/portal/api/payments/report.csv?currency=MXN');
      assert.deepEqual(
        mxn.text
          .trim()
          .split('\r\n')
          .slice(1)
          .map((line) => line.split(',')[0]),
        [(payments.mx as Payment).orderNo],
      );
      for (const query of ['currency=XXX', 'from=10&to=5', `from=0&to=${400 * 86_400_000}`, 'status=PAID']) {
        assert.equal((await client.get(`/portal/api/payments/report.csv?${query}`)).status, 400, query);
      }
      // Another merchant's report holds its own payment only.
      assert.equal((await other.get('/portal/api/payments/report.csv')).text.trim().split('\r\n').length, 2);
      assert.equal((await fetch(`${platform.url}/portal/api/payments/report.csv`)).status, 401);
      const roles: Record<string, number> = {};
      for (const role of ['finance', 'developer', 'viewer']) {
        const person = await portalUser(platform, merchant, undefined, role);
        const signedIn = await PortalClient.signIn(platform, person.email, person.password);
        roles[role] = (await signedIn.get('/portal/api/payments/report.csv')).status;
      }
      assert.deepEqual(roles, { finance: 200, developer: 403, viewer: 403 });
    });

    it('uses its indexes: at many orders a search is a bitmap of its conditions’ index scans', async () => {
      // A large merchant (20,000 orders of each kind), then ANALYZE: scanning all its orders would cost
      // more than the conditions' indexes.
      const db = platform.services.db;
      await db.query(
        `INSERT INTO merchants (name, environment, access_key)
         SELECT 'bulk ' || g, 'sandbox', 'ak_test_searchbulk' || g FROM generate_series(1, 1) g`,
      );
      await db.query(
        `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url,
                               status, payer_name, payer_document, expires_at, created_at, updated_at)
         SELECT 'P2025' || lpad(g::text, 14, '0'), m.id, 'BULK-' || g, 'BRL', 100 + g % 5000, 'PIX', 'https://m.example/w',
                'SUCCEEDED', 'Payer ' || g || ' Name' || g % 977, lpad(g::text, 11, '0'), now(),
                now() - (g || ' seconds')::interval, now()
           FROM generate_series(1, 20000) g
           JOIN merchants m ON m.access_key = 'ak_test_searchbulk1'`,
      );
      await db.query(
        `INSERT INTO payouts (order_no, merchant_id, merchant_order_no, currency, amount_minor, fee_minor, webhook_url,
                              payee_name, payee_account_number, payee_document, status, created_at, updated_at)
         SELECT 'W2025' || lpad(g::text, 14, '0'), m.id, 'BULK-' || g, 'BRL', 100 + g % 5000, 0, 'https://m.example/w',
                'Payee ' || g || ' Name' || g % 977, '0001', lpad(g::text, 11, '0'), 'PENDING',
                now() - (g || ' seconds')::interval, now()
           FROM generate_series(1, 20000) g
           JOIN merchants m ON m.access_key = 'ak_test_searchbulk1'`,
      );
      await db.query('ANALYZE');
      const merchant = (
        await db.query<{ id: bigint }>(`SELECT id FROM merchants WHERE access_key = 'ak_test_searchbulk1'`)
      ).rows[0]?.id;
      for (const [table, name, document] of [
        ['payments', 'payer_name', 'payer_document'],
        ['payouts', 'payee_name', 'payee_document'],
      ] as const) {
        // The statement db/order-search.ts writes for a text that is a name, a document and an amount at once.
        const plan = await db.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM ${table} WHERE merchant_id = $1 AND (order_no = $2 OR merchant_order_no = $2
             OR to_tsvector('simple', coalesce(${name}, '')) @@ to_tsquery('simple', $3)
             OR upper(regexp_replace(${document}, '[^0-9A-Za-z]', '', 'g')) = $4 AND ${document} IS NOT NULL
             OR (amount_minor = $5 AND currency = ANY($6::text[])))
           ORDER BY created_at DESC, id DESC LIMIT 51`,
          [merchant, '4321', '4321:*', '4321', '432100', ['BRL', 'MXN', 'USD', 'EUR']],
        );
        const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
        for (const index of [`${table}_search_name`, `${table}_search_document`, `${table}_search_amount`]) {
          assert.ok(text.includes(index), `${index} in\n${text}`);
        }
        assert.doesNotMatch(text, /Seq Scan/, text);
      }
    });
  });
}
