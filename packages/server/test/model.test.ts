/**
 * Model-based tests of orders and balances under concurrency (issue 47, item 3), in-process over
 * the real database layer (PGlite, and PostgreSQL when TEST_DATABASE_URL is set).
 *
 * fast-check's `fc.commands` draws a run of batches; each batch is one to three operations
 * launched at once (payment creates, the sandbox channel's reports, cancels, payout creates,
 * confirms, settlements and returns, and outbox steps delivering webhooks). Every statement and
 * every transaction of those operations waits at a gate on the way to the database, and
 * `fc.scheduler` decides which waiting one goes next: the interleavings of concurrent requests,
 * of the outbox and of the channel appliers are the scheduler's, drawn from the seed. After each
 * batch the outcomes must be those of some order of the batch's operations applied one by one to
 * a model of the orders and the merchant's balances, and the database must hold that order's
 * result: each order's status, the balances to the cent, one event per final state. At the end
 * every event is delivered once to the receiver, with the stored bytes.
 *
 * A failure prints the seed, the path and the scheduler's trace, which replay it:
 * PAYGATE_MODEL_SEED=… PAYGATE_MODEL_PATH=… node scripts/test.mjs model.test. More runs:
 * PAYGATE_MODEL_RUNS=500 (npm test runs a bounded number).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Db, Queryable, TransactionOptions } from '../src/db/db.js';
import { DomainError } from '../src/errors.js';
import { paymentFee, payoutFee } from '../src/fees.js';
import { createServices, type Services } from '../src/services.js';
import { createMerchant, databases, startTestPlatform, TEST_MASTER_KEY, type TestPlatform } from './harness.js';
import { headerOf, type Receiver, startReceiver } from './receiver.js';

const RUNS = Number(process.env.PAYGATE_MODEL_RUNS ?? 12);
const SEED = process.env.PAYGATE_MODEL_SEED === undefined ? undefined : Number(process.env.PAYGATE_MODEL_SEED);
const PATH = process.env.PAYGATE_MODEL_PATH;

// ---- the gate: every statement waits for the scheduler ----------------------------------------

/** A Db whose statements and transactions each wait for `scheduler` (when one is set) first. */
class GatedDb implements Db {
  scheduler: fc.Scheduler | undefined;
  readonly kind: Db['kind'];

  constructor(private readonly inner: Db) {
    this.kind = inner.kind;
  }

  private async gate(label: string): Promise<void> {
    const s = this.scheduler;
    if (s) await s.schedule(Promise.resolve(label), label);
  }

  private gated(q: Queryable, where: string): Queryable {
    return {
      query: async (sql, params) => {
        const text = typeof sql === 'string' ? sql : sql.text;
        await this.gate(`${where} ${text.trim().split(/\s+/).slice(0, 3).join(' ')}`);
        return q.query(sql, params);
      },
    };
  }

  query: Db['query'] = (sql, params) => this.gated(this.inner, 'query').query(sql, params);

  async transaction<T>(work: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    await this.gate('BEGIN');
    return this.inner.transaction((tx) => work(this.gated(tx, 'tx')), options);
  }

  exec: Db['exec'] = (sql) => this.inner.exec(sql);
  close: Db['close'] = () => Promise.resolve();
  poolStats: Db['poolStats'] = () => this.inner.poolStats();
  embeddedMemoryBytes: Db['embeddedMemoryBytes'] = () => this.inner.embeddedMemoryBytes();
  acceptsWrites: Db['acceptsWrites'] = () => this.inner.acceptsWrites();
  embeddedDump: Db['embeddedDump'] = (compression) => this.inner.embeddedDump(compression);
}

// ---- the model ------------------------------------------------------------------------------------

type PaymentKey = 0 | 1 | 2;
type PayoutKey = 0 | 1;
type Op =
  | { kind: 'createPayment'; key: PaymentKey; currency: 'EUR' | 'USD'; amount: string }
  | { kind: 'simulatePayment'; key: PaymentKey; status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'EXPIRED' }
  | { kind: 'cancelPayment'; key: PaymentKey }
  | { kind: 'createPayout'; key: PayoutKey; amount: string }
  | { kind: 'confirmPayout'; key: PayoutKey }
  | { kind: 'settlePayout'; key: PayoutKey; status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED' }
  | { kind: 'returnPayout'; key: PayoutKey }
  | { kind: 'deliver' };

interface ModelOrder {
  readonly currency: string;
  readonly amountMinor: bigint;
  readonly feeMinor: bigint;
  status: string;
  /** The create's fields, to tell a repeat from a duplicate. */
  readonly fields: string;
}

interface Model {
  payments: Map<PaymentKey, ModelOrder>;
  payouts: Map<PayoutKey, ModelOrder>;
  balances: Map<string, { available: bigint; reserved: bigint }>;
  /** `<P|W><key>:<status>` of every event the platform must have written. */
  events: Set<string>;
}

const clone = (m: Model): Model => ({
  payments: new Map([...m.payments].map(([k, o]) => [k, { ...o }])),
  payouts: new Map([...m.payouts].map(([k, o]) => [k, { ...o }])),
  balances: new Map([...m.balances].map(([c, b]) => [c, { ...b }])),
  events: new Set(m.events),
});

const minor = (amount: string) => BigInt(amount.replace('.', ''));
const PAYMENT_MOVES: Record<string, string[]> = {
  PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'],
  PROCESSING: ['SUCCEEDED', 'FAILED'],
};
const PAYOUT_MOVES: Record<string, string[]> = {
  PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED'],
  PROCESSING: ['SUCCEEDED', 'FAILED'],
  SUCCEEDED: ['REFUNDED'],
};
const FINAL = new Set(['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED', 'REFUNDED']);

/** Applies `op` to the model (mutating it); the outcome the platform must answer. */
function applyModel(m: Model, op: Op, fees: Services['config']['fees']): string {
  const balance = (currency: string) => {
    const b = m.balances.get(currency) ?? { available: 0n, reserved: 0n };
    m.balances.set(currency, b);
    return b;
  };
  switch (op.kind) {
    case 'createPayment': {
      const fields = `${op.currency} ${op.amount}`;
      const known = m.payments.get(op.key);
      if (known) return known.fields === fields ? `ok:same:${known.status}` : 'DUPLICATE_ORDER';
      m.payments.set(op.key, {
        currency: op.currency,
        amountMinor: minor(op.amount),
        feeMinor: 0n,
        status: 'PENDING',
        fields,
      });
      return 'ok:new:PENDING';
    }
    case 'simulatePayment':
    case 'cancelPayment': {
      const order = m.payments.get(op.key);
      if (!order) return 'ORDER_NOT_FOUND';
      const to = op.kind === 'cancelPayment' ? 'CANCELED' : op.status;
      if (order.status === to) return `ok:${to}`;
      if (!(PAYMENT_MOVES[order.status] ?? []).includes(to)) return 'INVALID_STATE';
      order.status = to;
      if (to === 'SUCCEEDED') {
        const code = order.currency === 'EUR' ? 'SEPA' : 'CARD';
        balance(order.currency).available +=
          order.amountMinor - paymentFee(fees, order.currency, code, order.amountMinor);
      }
      if (FINAL.has(to)) m.events.add(`P${op.key}:${to}`);
      return `ok:${to}`;
    }
    case 'createPayout': {
      const fields = op.amount;
      const known = m.payouts.get(op.key);
      if (known) return known.fields === fields ? `ok:same:${known.status}` : 'DUPLICATE_ORDER';
      const amountMinor = minor(op.amount);
      const feeMinor = payoutFee(fees, 'EUR', amountMinor);
      const b = balance('EUR');
      if (b.available < amountMinor + feeMinor) return 'INSUFFICIENT_BALANCE';
      b.available -= amountMinor + feeMinor;
      b.reserved += amountMinor + feeMinor;
      m.payouts.set(op.key, { currency: 'EUR', amountMinor, feeMinor, status: 'PENDING', fields });
      return 'ok:new:PENDING';
    }
    case 'confirmPayout': {
      const order = m.payouts.get(op.key);
      if (!order) return 'ORDER_NOT_FOUND';
      if (order.status === 'PROCESSING') return 'ok:PROCESSING';
      if (order.status !== 'PENDING') return 'INVALID_STATE';
      order.status = 'PROCESSING';
      return 'ok:PROCESSING';
    }
    case 'settlePayout':
    case 'returnPayout': {
      const order = m.payouts.get(op.key);
      if (!order) return 'ORDER_NOT_FOUND';
      const to = op.kind === 'returnPayout' ? 'REFUNDED' : op.status;
      if (order.status === to) return `ok:${to}`;
      if (order.status === 'REFUNDED' && to === 'SUCCEEDED') return 'ok:REFUNDED';
      if (!(PAYOUT_MOVES[order.status] ?? []).includes(to)) return 'INVALID_STATE';
      const b = balance('EUR');
      const total = order.amountMinor + order.feeMinor;
      if (to === 'SUCCEEDED') b.reserved -= total;
      if (to === 'FAILED') {
        b.reserved -= total;
        b.available += total;
      }
      if (to === 'REFUNDED') b.available += order.amountMinor;
      order.status = to;
      if (FINAL.has(to)) m.events.add(`W${op.key}:${to}`);
      return `ok:${to}`;
    }
    case 'deliver':
      return 'any';
  }
}

/** Every order of `items` (permutations of at most three). */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

// ---- the platform side ----------------------------------------------------------------------------

interface Real {
  readonly services: Services;
  readonly gate: GatedDb;
  readonly reader: Services;
  readonly merchantId: bigint;
  readonly scheduler: fc.Scheduler;
  readonly receiver: Receiver;
  readonly prefix: string;
  /** orderNo of each key, once its create answered. */
  readonly orderNos: Map<string, string>;
}

const paymentRef = (real: Real, key: number) => `${real.prefix}-p${key}`;
const payoutRef = (real: Real, key: number) => `${real.prefix}-w${key}`;

/** Runs `op` against the platform (through the gate); its outcome in the model's terms. */
async function applyReal(real: Real, op: Op): Promise<string> {
  const { services, merchantId, receiver } = real;
  const outcome = (status: string) => `ok:${status}`;
  try {
    switch (op.kind) {
      case 'createPayment': {
        const { payment, created } = await services.payments.create(merchantId, {
          merchantOrderNo: paymentRef(real, op.key),
          currency: op.currency,
          amount: op.amount,
          paymentMethod: { code: op.currency === 'EUR' ? 'SEPA' : 'CARD' },
          webhookUrl: `${receiver.url}/hook`,
        });
        real.orderNos.set(`P${op.key}`, payment.orderNo);
        return `ok:${created ? 'new' : 'same'}:${payment.status}`;
      }
      case 'simulatePayment': {
        const orderNo = real.orderNos.get(`P${op.key}`);
        if (!orderNo) return 'ORDER_NOT_FOUND';
        return outcome((await services.payments.applyChannelReport(merchantId, { orderNo, status: op.status })).status);
      }
      case 'cancelPayment':
        return outcome(
          (await services.payments.cancel(merchantId, { merchantOrderNo: paymentRef(real, op.key) })).status,
        );
      case 'createPayout': {
        const { payout, created } = await services.payouts.create(merchantId, {
          merchantOrderNo: payoutRef(real, op.key),
          currency: 'EUR',
          amount: op.amount,
          webhookUrl: `${receiver.url}/hook`,
          payee: { name: 'Model Payee', accountNumber: 'DE89370400440532013000' },
        });
        real.orderNos.set(`W${op.key}`, payout.orderNo);
        return `ok:${created ? 'new' : 'same'}:${payout.status}`;
      }
      case 'confirmPayout':
        return outcome(
          (await services.payouts.confirm(merchantId, { merchantOrderNo: payoutRef(real, op.key) })).status,
        );
      case 'settlePayout': {
        const orderNo = real.orderNos.get(`W${op.key}`);
        if (!orderNo) return 'ORDER_NOT_FOUND';
        return outcome((await services.payouts.applyChannelReport(merchantId, { orderNo, status: op.status })).status);
      }
      case 'returnPayout': {
        const orderNo = real.orderNos.get(`W${op.key}`);
        if (!orderNo) return 'ORDER_NOT_FOUND';
        return outcome((await services.payouts.returnPayout(merchantId, { orderNo })).status);
      }
      case 'deliver':
        await services.webhooks.deliverNext('model-worker');
        return 'any';
    }
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}

/** The database agrees with the model: statuses, balances, events. */
async function verify(real: Real, model: Model): Promise<void> {
  const { reader, merchantId } = real;
  for (const [key, order] of model.payments) {
    const view = await reader.payments.get(merchantId, { merchantOrderNo: paymentRef(real, key) });
    assert.equal(view.status, order.status, `payment ${key}`);
  }
  for (const [key, order] of model.payouts) {
    const view = await reader.payouts.get(merchantId, { merchantOrderNo: payoutRef(real, key) });
    assert.equal(view.status, order.status, `payout ${key}`);
  }
  const balances = await reader.ledger.balances(merchantId);
  for (const currency of new Set([...model.balances.keys(), ...balances.keys()])) {
    const want = model.balances.get(currency) ?? { available: 0n, reserved: 0n };
    const have = balances.get(currency) ?? { available: 0n, reserved: 0n };
    assert.deepEqual(
      { available: have.available, reserved: have.reserved },
      { available: want.available, reserved: want.reserved },
      `balance ${currency}`,
    );
  }
  const keyOf = new Map([...real.orderNos].map(([key, orderNo]) => [orderNo, key]));
  const events = await reader.db.query<{ order_no: string; status: string }>(
    'SELECT order_no, status FROM events WHERE merchant_id = $1',
    [merchantId],
  );
  const stored = events.rows.map((row) => `${keyOf.get(row.order_no) ?? row.order_no}:${row.status}`);
  assert.deepEqual([...stored].sort(), [...model.events].sort(), 'one event per final state');
}

class Batch implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ops: readonly Op[]) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    const { scheduler } = real;
    real.gate.scheduler = scheduler;
    const running = Promise.allSettled(this.ops.map((op) => applyReal(real, op)));
    let settled: PromiseSettledResult<string>[];
    try {
      settled = await scheduler.waitFor(running);
    } finally {
      real.gate.scheduler = undefined;
    }
    const outcomes = settled.map((result) => {
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    });
    // Some order of the batch, applied one by one to the model, gives exactly these outcomes.
    const fees = real.services.config.fees;
    const orders = permutations(this.ops.map((op, i) => ({ op, i })));
    const explained = orders
      .map((order) => {
        const candidate = clone(model);
        const expected: string[] = [];
        for (const { op, i } of order) expected[i] = applyModel(candidate, op, fees);
        return { candidate, expected };
      })
      .find(({ expected }) => expected.every((want, i) => want === 'any' || want === outcomes[i]));
    assert.ok(
      explained,
      `no order of ${JSON.stringify(this.ops)} answers ${JSON.stringify(outcomes)}; the model was ${describeModel(model)}`,
    );
    Object.assign(model, explained.candidate);
    await verify(real, model);
  }

  toString(): string {
    return `batch(${this.ops.map((op) => Object.values(op).join(' ')).join(' | ')})`;
  }
}

function describeModel(model: Model): string {
  const orders = [
    ...[...model.payments].map(([k, o]) => `P${k} ${o.status}`),
    ...[...model.payouts].map(([k, o]) => `W${k} ${o.status}`),
  ];
  const balances = [...model.balances].map(([c, b]) => `${c} ${b.available}/${b.reserved}`);
  return `${orders.join(', ') || 'no orders'}; ${balances.join(', ') || 'no balances'}`;
}

const paymentKey = fc.constantFrom<PaymentKey>(0, 1, 2);
const payoutKey = fc.constantFrom<PayoutKey>(0, 1);

/** One operation on the orders `pk` and `wk`. */
const opOn = (pk: fc.Arbitrary<PaymentKey>, wk: fc.Arbitrary<PayoutKey>): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('createPayment' as const),
        key: pk,
        currency: fc.constantFrom('EUR' as const, 'USD' as const),
        amount: fc.constantFrom('10.00', '25.50'),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('simulatePayment' as const),
        key: pk,
        status: fc.constantFrom('PROCESSING' as const, 'SUCCEEDED' as const, 'FAILED' as const, 'EXPIRED' as const),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancelPayment' as const), key: pk }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('createPayout' as const),
        key: wk,
        amount: fc.constantFrom('5.00', '30.00'),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('confirmPayout' as const), key: wk }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('settlePayout' as const),
        key: wk,
        status: fc.constantFrom('PROCESSING' as const, 'SUCCEEDED' as const, 'FAILED' as const),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('returnPayout' as const), key: wk }) },
    { weight: 2, arbitrary: fc.constant({ kind: 'deliver' as const }) },
  );

/**
 * A batch: mostly operations on the same payment and payout (where races live), sometimes on
 * any of them.
 */
const batch: fc.Arbitrary<Op[]> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(paymentKey, payoutKey)
      .chain(([pk, wk]) => fc.array(opOn(fc.constant(pk), fc.constant(wk)), { minLength: 1, maxLength: 3 })),
  },
  { weight: 1, arbitrary: fc.array(opOn(paymentKey, payoutKey), { minLength: 1, maxLength: 3 }) },
);
const batches = fc.commands([batch.map((ops) => new Batch(ops))], { maxCommands: 10 });

for (const database of databases()) {
  describe(`model: orders and balances under reordered concurrency (${database})`, () => {
    let platform: TestPlatform;
    let receiver: Receiver;
    let gate: GatedDb;
    let services: Services;
    let runs = 0;

    before(async () => {
      platform = await startTestPlatform({ database });
      receiver = await startReceiver();
      gate = new GatedDb(platform.services.db);
      services = createServices(platform.services.config, gate, { masterKey: TEST_MASTER_KEY });
    });
    after(async () => {
      await receiver?.close();
      await platform?.close();
    });

    it(`${RUNS} runs: every batch's outcomes are those of some order of it, and the books agree`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), batches, async (scheduler, commands) => {
          runs += 1;
          const merchant = await createMerchant(platform, `Model shop ${runs}`);
          const id = await platform.services.db.query<{ id: bigint }>(
            'SELECT id FROM merchants WHERE access_key = $1',
            [merchant.accessKey],
          );
          const real: Real = {
            services,
            gate,
            reader: platform.services,
            merchantId: BigInt(id.rows[0]?.id as bigint),
            scheduler,
            receiver,
            prefix: `run${runs}`,
            orderNos: new Map(),
          };
          const model: Model = { payments: new Map(), payouts: new Map(), balances: new Map(), events: new Set() };
          await fc.asyncModelRun(() => ({ model, real }), commands);
          // The outbox drained without the gate: every event of the merchant delivered once, its bytes.
          const mine = await platform.services.db.query<{ event_id: string; body: Uint8Array }>(
            'SELECT event_id, body FROM events WHERE merchant_id = $1',
            [real.merchantId],
          );
          for (let i = 0; i < 200; i++) {
            const step = await platform.services.webhooks.deliverNext('model-drain');
            if (step === 'idle') break;
          }
          for (const event of mine.rows) {
            const got = receiver.received.filter((r) => headerOf(r, 'webhook-event-id') === event.event_id);
            assert.equal(got.length, 1, `${event.event_id} delivered ${got.length} times`);
            assert.ok(Buffer.from(event.body).equals(got[0]?.body as Buffer), `${event.event_id}: the stored bytes`);
          }
        }),
        {
          numRuns: RUNS,
          ...(SEED === undefined ? {} : { seed: SEED }),
          ...(PATH === undefined ? {} : { path: PATH }),
          endOnFailure: true,
        },
      );
    });
  });
}
