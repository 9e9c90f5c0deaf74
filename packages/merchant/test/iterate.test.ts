/**
 * The auto-paginating iterators against a real platform: each follows the cursors across
 * several pages until the last, yields every item once in the list's order, keeps the filters
 * on every page, and fetches no further page when the loop stops early.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { PaygateClient } from '@paygate/merchant';
import {
  createMerchant,
  databases,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { clientFor } from './helpers.js';

const newOrderNo = () => `IT-${randomUUID().slice(0, 16)}`;

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

for (const database of databases()) {
  describe(`auto-paginating iterators against a real platform (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let client: PaygateClient;
    /** The list requests the client sent, by path. */
    const pages: string[] = [];
    const succeeded: string[] = [];
    const failed: string[] = [];

    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform);
      client = clientFor(platform, merchant, {
        fetch: (url, init) => {
          pages.push(new URL(String(url)).pathname + new URL(String(url)).search);
          return fetch(url, init);
        },
      });
      for (let i = 0; i < 7; i++) {
        const payment = await client.payments.create({
          merchantOrderNo: newOrderNo(),
          currency: 'BRL',
          amount: `${100 + i}.00`,
          paymentMethod: { code: 'PIX' },
          webhookUrl: 'https://merchant.example/webhook/payment',
        });
        const status = i < 5 ? 'SUCCEEDED' : 'FAILED';
        await client.sandbox.simulatePayment({ orderNo: payment.orderNo, status });
        (status === 'SUCCEEDED' ? succeeded : failed).push(payment.orderNo);
      }
      for (let i = 0; i < 4; i++) {
        await client.payouts.create({
          merchantOrderNo: newOrderNo(),
          currency: 'BRL',
          amount: '10.00',
          webhookUrl: 'https://merchant.example/webhook/payout',
          payee: { name: 'João Souza', accountNumber: '12345678', bankCode: '001', documentNumber: '00987654321' },
        });
      }
    });
    after(() => platform.close());

    it('payments.iterate follows the cursors across pages, with the filters on every page', async () => {
      pages.length = 0;
      const all = await collect(client.payments.iterate({ status: 'SUCCEEDED', pageSize: 2 }));
      assert.deepEqual(
        all.map((p) => p.orderNo),
        [...succeeded].reverse(),
        'every SUCCEEDED payment once, newest first',
      );
      const listed = pages.filter((p) => p.startsWith('/api/v1/payments/list'));
      assert.equal(listed.length, 3, '5 items in pages of 2');
      assert.ok(listed.every((p) => p.includes('status=SUCCEEDED') && p.includes('pageSize=2')));
      assert.ok(!listed[0]?.includes('cursor='), 'the first page has no cursor');
      assert.ok(listed.slice(1).every((p) => p.includes('cursor=')));

      const sameAsPaging: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.payments.list({ pageSize: 3, cursor });
        sameAsPaging.push(...page.items.map((p) => p.orderNo));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const iterated = (await collect(client.payments.iterate({ pageSize: 3 }))).map((p) => p.orderNo);
      assert.equal(iterated.length, 7);
      assert.deepEqual(iterated, sameAsPaging);
    });

    it('stopping the loop early fetches no further page', async () => {
      pages.length = 0;
      for await (const payment of client.payments.iterate({ pageSize: 2 })) {
        assert.ok(payment.orderNo);
        break;
      }
      assert.equal(pages.length, 1);
    });

    it('payouts.iterate, events.iterate and ledger.iterateEntries cross pages too', async () => {
      pages.length = 0;
      const payouts = await collect(client.payouts.iterate({ status: 'PENDING', pageSize: 3 }));
      assert.equal(payouts.length, 4);
      assert.equal(new Set(payouts.map((p) => p.orderNo)).size, 4);
      assert.equal(pages.filter((p) => p.startsWith('/api/v1/payouts/list')).length, 2);

      const events = await collect(client.events.iterate({ pageSize: 2 }));
      assert.equal(events.length, 7, 'one event per final payment');
      assert.equal(new Set(events.map((e) => e.eventId)).size, 7);
      assert.ok(pages.filter((p) => p.startsWith('/api/v1/events')).length >= 4);

      const firstPage = await client.ledger.entries({ currency: 'BRL', pageSize: 100 });
      assert.equal(firstPage.nextCursor, null, 'fits one page of 100');
      const entries = await collect(client.ledger.iterateEntries({ currency: 'BRL', pageSize: 4 }));
      assert.deepEqual(
        entries.map((e) => JSON.stringify(e)),
        firstPage.items.map((e) => JSON.stringify(e)),
      );
      assert.ok(entries.length > 8, `several pages of 4 (${entries.length} entries)`);
    });
  });
}
