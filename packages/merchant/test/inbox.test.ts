/**
 * The inbox stores against one contract — in memory, on PGlite, and on PostgreSQL when
 * TEST_DATABASE_URL is set — including concurrent claims and compare-and-set, and the inbox's
 * own rules over each store: a duplicate applied once, concurrent deliveries, a failed handler
 * retried, forward moves applied without asking the platform.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import {
  InboxBusyError,
  type InboxStore,
  MemoryInboxStore,
  type OrderUpdate,
  PaygateClient,
  PaygateConfigError,
  SqlInboxStore,
  type WebhookEvent,
  WebhookInbox,
} from '@paygate/merchant';
import { generateBoxKeyPair, generateSigningKey } from '@paygate/protocol';
import pg from 'pg';

interface StoreKind {
  readonly name: string;
  open(): Promise<{ store: InboxStore; close(): Promise<void> }>;
}

const kinds: StoreKind[] = [
  { name: 'memory', open: async () => ({ store: new MemoryInboxStore(), close: async () => undefined }) },
  {
    name: 'PGlite',
    open: async () => {
      const db = new PGlite();
      const store = new SqlInboxStore(db);
      await store.migrate();
      await store.migrate(); // idempotent
      return { store, close: () => db.close() };
    },
  },
];
const databaseUrl = process.env.TEST_DATABASE_URL;
if (databaseUrl) {
  kinds.push({
    name: 'PostgreSQL',
    open: async () => {
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 8 });
      const prefix = `test_inbox_${randomBytes(4).toString('hex')}_`;
      const store = new SqlInboxStore(pool, { tablePrefix: prefix });
      await store.migrate();
      return {
        store,
        close: async () => {
          await pool.query(`DROP TABLE IF EXISTS ${prefix}events, ${prefix}orders`);
          await pool.end();
        },
      };
    },
  });
}

let sequence = 0;
const eventId = () => `evt_TEST${String(++sequence).padStart(22, '0')}`;
const order = (orderType: 'PAYMENT' | 'PAYOUT' = 'PAYMENT') => ({
  orderType,
  orderNo: `${orderType === 'PAYMENT' ? 'P' : 'W'}${randomBytes(9).readBigUInt64BE().toString().padStart(18, '0').slice(0, 18)}`,
  merchantOrderNo: `M-${randomBytes(4).toString('hex')}`,
});

function paymentEvent(o: ReturnType<typeof order>, status: 'SUCCEEDED' | 'FAILED', id = eventId()): WebhookEvent {
  const base = {
    eventId: id,
    orderNo: o.orderNo,
    merchantOrderNo: o.merchantOrderNo,
    currency: 'BRL' as const,
    amount: '1.00',
  };
  return status === 'SUCCEEDED'
    ? { ...base, orderType: 'PAYMENT', status, paidAmount: '1.00' }
    : { ...base, orderType: 'PAYMENT', status };
}

/** A client whose platform does not exist: any query the inbox makes fails the test loudly. */
const unreachable = new PaygateClient({
  baseUrl: 'http://127.0.0.1:9',
  accessKey: 'ak_test_unreachable0',
  privateKey: generateSigningKey().secretKey,
  bodyKey: { keyId: 'bk_test_x', publicKey: generateBoxKeyPair().publicKey },
  retries: 0,
});

for (const kind of kinds) {
  describe(`inbox store contract (${kind.name})`, () => {
    let store: InboxStore;
    let close: () => Promise<void>;
    before(async () => ({ store, close } = await kind.open()));
    after(() => close());

    it('claims a new event once; busy while claimed; done once completed', async () => {
      const id = eventId();
      const claim = { order: order(), nowMs: 1_000, leaseMs: 60_000, token: 'first' };
      assert.equal(await store.claimEvent(id, claim), 'claimed');
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 2_000, token: 'second' }), 'busy');
      await store.completeEvent(id, 3_000);
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 4_000, token: 'third' }), 'done');
      await store.releaseEvent(id, 'first'); // a completed event stays completed
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 100_000_000 }), 'done');
    });

    it('a released claim, or one whose lease ran out, is claimed again', async () => {
      const id = eventId();
      const claim = { order: order(), nowMs: 1_000, leaseMs: 60_000, token: 'first' };
      assert.equal(await store.claimEvent(id, claim), 'claimed');
      await store.releaseEvent(id, 'first');
      assert.equal(await store.claimEvent(id, { ...claim, token: 'second' }), 'claimed');
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 61_000, token: 'third' }), 'busy');
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 61_001, token: 'third' }), 'claimed');
    });

    it('a claim holder whose lease ran out cannot release the claim that took over', async () => {
      const id = eventId();
      const claim = { order: order(), nowMs: 1_000, leaseMs: 60_000, token: 'stale' };
      assert.equal(await store.claimEvent(id, claim), 'claimed');
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 70_000, token: 'live' }), 'claimed');
      await store.releaseEvent(id, 'stale'); // the first holder fails late
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 71_000, token: 'third' }), 'busy');
      await store.releaseEvent(id, 'live');
      assert.equal(await store.claimEvent(id, { ...claim, nowMs: 72_000, token: 'fourth' }), 'claimed');
    });

    it('of many concurrent claims of one event, exactly one wins', async () => {
      const id = eventId();
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          store.claimEvent(id, { order: order(), nowMs: 1_000, leaseMs: 60_000, token: `t${i}` }),
        ),
      );
      assert.equal(results.filter((r) => r === 'claimed').length, 1);
      assert.equal(results.filter((r) => r === 'busy').length, 15);
    });

    it('order status is a compare-and-set; of concurrent moves from one status, exactly one wins', async () => {
      const o = order();
      assert.equal(await store.orderStatus(o), undefined);
      assert.equal(await store.setOrderStatus(o, 'FAILED', 'SUCCEEDED', 1), false, 'nothing stored yet');
      assert.equal(await store.setOrderStatus(o, undefined, 'PENDING', 1), true);
      assert.equal(await store.setOrderStatus(o, undefined, 'FAILED', 1), false, 'already stored');
      assert.equal(await store.orderStatus(o), 'PENDING');
      const results = await Promise.all(
        (['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'] as const).map((next) =>
          store.setOrderStatus(o, 'PENDING', next, 2),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
      assert.notEqual(await store.orderStatus(o), 'PENDING');
      assert.equal(
        await store.orderStatus({ orderType: 'PAYOUT', orderNo: o.orderNo }),
        undefined,
        'keyed by type too',
      );
    });

    describe('WebhookInbox over it', () => {
      const updates: OrderUpdate[] = [];
      let failNext = false;
      let inbox: WebhookInbox;
      before(() => {
        inbox = new WebhookInbox({
          store,
          client: unreachable,
          onUpdate: (update) => {
            if (failNext) {
              failNext = false;
              throw new Error('the shop database is down');
            }
            updates.push(update);
          },
        });
      });
      const updatesOf = (orderNo: string) => updates.filter((u) => u.orderNo === orderNo);

      it('applies an event once; the same eventId again is a duplicate', async () => {
        const o = order();
        const event = paymentEvent(o, 'SUCCEEDED');
        assert.equal((await inbox.process(event)).kind, 'applied');
        assert.deepEqual(await inbox.process(event), { kind: 'duplicate', eventId: event.eventId });
        assert.equal(updatesOf(o.orderNo).length, 1);
        assert.equal(await inbox.status(o), 'SUCCEEDED');
      });

      it('recordStatus records forward moves only: a late PENDING never overwrites a final status', async () => {
        const o = order();
        assert.equal(await inbox.recordStatus(o, 'PENDING'), true);
        assert.equal((await inbox.process(paymentEvent(o, 'SUCCEEDED'))).kind, 'applied');
        assert.equal(await inbox.recordStatus(o, 'PENDING'), false);
        assert.equal(await inbox.recordStatus(o, 'SUCCEEDED'), true);
        assert.equal(await inbox.status(o), 'SUCCEEDED');
      });

      it('a different event with the status already held changes nothing', async () => {
        const o = order();
        await inbox.recordStatus(o, 'PENDING');
        assert.equal((await inbox.process(paymentEvent(o, 'FAILED'))).kind, 'applied');
        const other = await inbox.process(paymentEvent(o, 'FAILED'));
        assert.equal(other.kind, 'unchanged');
        assert.deepEqual(
          updatesOf(o.orderNo).map((u) => [u.previousStatus, u.status]),
          [['PENDING', 'FAILED']],
        );
      });

      it('concurrent deliveries of one event: one applies it, the others are told to come back', async () => {
        const o = order();
        const event = paymentEvent(o, 'SUCCEEDED');
        const results = await Promise.allSettled(Array.from({ length: 6 }, () => inbox.process(event)));
        const applied = results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'applied');
        assert.equal(applied.length, 1);
        for (const r of results) {
          if (r.status === 'rejected') assert.ok(r.reason instanceof InboxBusyError);
          else assert.ok(['applied', 'duplicate'].includes(r.value.kind));
        }
        assert.equal(updatesOf(o.orderNo).length, 1);
      });

      it('a failed handler releases the event, so the retry applies it', async () => {
        const o = order();
        const event = paymentEvent(o, 'SUCCEEDED');
        failNext = true;
        await assert.rejects(inbox.process(event), /database is down/);
        assert.equal(await inbox.status(o), undefined);
        assert.equal((await inbox.process(event)).kind, 'applied');
        assert.equal(updatesOf(o.orderNo).length, 1);
      });

      it("a payout's SUCCEEDED → REFUNDED is a forward move, applied without a query", async () => {
        const o = order('PAYOUT');
        const common = {
          orderNo: o.orderNo,
          merchantOrderNo: o.merchantOrderNo,
          currency: 'BRL' as const,
          amount: '5.00',
        };
        await inbox.process({ ...common, eventId: eventId(), orderType: 'PAYOUT', status: 'SUCCEEDED' });
        const refunded = await inbox.process({
          ...common,
          eventId: eventId(),
          orderType: 'PAYOUT',
          status: 'REFUNDED',
          refundNo: 'RF1',
          refundAmount: '5.00',
          refundTime: 1_767_225_600_000,
        });
        assert.equal(refunded.kind, 'applied');
        assert.equal(await inbox.status(o), 'REFUNDED');
      });
    });
  });
}

it('SqlInboxStore refuses a table prefix that is not a plain identifier', () => {
  const db = { query: async () => ({ rows: [] }) };
  assert.throws(() => new SqlInboxStore(db, { tablePrefix: 'x; DROP TABLE y; --' }), PaygateConfigError);
});
