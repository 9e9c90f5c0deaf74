/**
 * The money suites that look at the whole: a model-based property test (random sequences of
 * pay-ins, payouts, confirms, channel outcomes, returns and repeats against a model of the
 * balances), and the balances and rates endpoints.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { assertBooksHealthy, type Balance, balanceOf, fund, type Payout, payoutInput } from './money-harness.js';

/** Fees of the property test: percentages that round, fixed parts that add up. */
const PROPERTY_FEES = JSON.stringify({
  payments: { BRL: { PIX: { percent: '1.5', fixed: '0.30' } } },
  payouts: { BRL: { percent: '1', fixed: '2.00' } },
});

/** The model's own fee arithmetic, written independently of the server's. */
const halfUp = (amount: bigint, bps: bigint) => (amount * bps + 5_000n) / 10_000n;
const payInFee = (paid: bigint) => {
  const fee = halfUp(paid, 150n) + 30n;
  return fee < paid ? fee : paid;
};
const payoutFee = (amount: bigint) => halfUp(amount, 100n) + 200n;

const major = (value: bigint) => `${value / 100n}.${(value % 100n).toString().padStart(2, '0')}`;

type Status = 'PENDING' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'REFUNDED';

interface ModelPayout {
  key: string;
  orderNo: string;
  amount: bigint;
  fee: bigint;
  status: Status;
  confirmed: boolean;
  refundNo?: string;
  refundTime?: number;
}

interface Model {
  available: bigint;
  reserved: bigint;
  payouts: Map<string, ModelPayout>;
  /** Keys of created payouts, in creation order (commands pick one by index). */
  created: string[];
  /** refundNo → key of the payout it refunded. */
  refundNos: Map<string, string>;
}

interface Real {
  platform: TestPlatform;
  merchant: TestMerchant;
  merchantId: bigint;
}

type Command = fc.AsyncCommand<Model, Real>;

/**
 * The payout a command acts on: by index among those `prefer` accepts when there are any (so that
 * returns mostly meet settled payouts and outcomes mostly meet open ones), else among all.
 */
function pick(m: Model, index: number, prefer?: (p: ModelPayout) => boolean): ModelPayout {
  const all = m.created.map((key) => m.payouts.get(key) as ModelPayout);
  const preferred = prefer ? all.filter(prefer) : [];
  const pool = preferred.length > 0 ? preferred : all;
  return pool[index % pool.length] as ModelPayout;
}

/** After every command: the books are sound and agree with the model. */
async function checkInvariants(m: Model, r: Real) {
  const { db } = r.platform.services;
  await assertBooksHealthy(r.platform);
  const refunds = await db.query<{ order_no: string; n: bigint }>(
    `SELECT t.order_no, count(*)::bigint AS n FROM ledger_transactions t JOIN payouts p ON p.order_no = t.order_no
      WHERE t.kind = 'refund' AND p.merchant_id = $1 GROUP BY t.order_no`,
    [r.merchantId],
  );
  assert.ok(
    refunds.rows.every((row) => row.n === 1n),
    'each refund posted at most once',
  );
  const refunded = [...m.payouts.values()].filter((p) => p.status === 'REFUNDED');
  assert.deepEqual(refunds.rows.map((row) => row.order_no).sort(), refunded.map((p) => p.orderNo).sort());
  const refundEvents = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM events WHERE merchant_id = $1 AND order_type = 'PAYOUT' AND status = 'REFUNDED'`,
    [r.merchantId],
  );
  assert.equal(refundEvents.rows[0]?.n, BigInt(refunded.length));
  const rows = await db.query<{ merchant_order_no: string; status: Status; refund_no: string | null }>(
    'SELECT merchant_order_no, status, refund_no FROM payouts WHERE merchant_id = $1',
    [r.merchantId],
  );
  assert.deepEqual(
    new Map(rows.rows.map((row) => [row.merchant_order_no, [row.status, row.refund_no]])),
    new Map([...m.payouts.values()].map((p) => [p.key, [p.status, p.refundNo ?? null]])),
  );
  assert.deepEqual(await balanceOf(r.platform, r.merchant), {
    currency: 'BRL',
    available: major(m.available),
    reserved: major(m.reserved),
  });
}

class PayIn implements Command {
  constructor(readonly amount: bigint) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await fund(r.platform, r.merchant, major(this.amount));
    m.available += this.amount - payInFee(this.amount);
    await checkInvariants(m, r);
  }
  toString = () => `PayIn(${major(this.amount)})`;
}

class CreatePayout implements Command {
  constructor(
    readonly key: string,
    readonly amount: bigint,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const input = payoutInput({ merchantOrderNo: this.key, amount: major(this.amount) });
    const response = await post<Payout>(r.platform, r.merchant, '/api/v1/payouts', input);
    const existing = m.payouts.get(this.key);
    const fee = payoutFee(this.amount);
    if (existing) {
      if (existing.amount === this.amount) {
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(response.body.data?.orderNo, existing.orderNo);
        assert.equal(response.body.data?.status, existing.status);
      } else {
        assert.equal(response.body.msg, 'DUPLICATE_ORDER');
      }
    } else if (m.available >= this.amount + fee) {
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.data?.status, 'PENDING');
      assert.equal(response.body.data?.fee, major(fee));
      m.available -= this.amount + fee;
      m.reserved += this.amount + fee;
      const orderNo = response.body.data?.orderNo as string;
      m.payouts.set(this.key, {
        key: this.key,
        orderNo,
        amount: this.amount,
        fee,
        status: 'PENDING',
        confirmed: false,
      });
      m.created.push(this.key);
    } else {
      assert.equal(response.status, 409);
      assert.equal(response.body.msg, 'INSUFFICIENT_BALANCE');
    }
    await checkInvariants(m, r);
  }
  toString = () => `CreatePayout(${this.key}, ${major(this.amount)})`;
}

class Confirm implements Command {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.created.length > 0;
  async run(m: Model, r: Real) {
    const payout = pick(m, this.index, this.index % 4 !== 0 ? (p) => p.status === 'PENDING' : undefined);
    const response = await post<Payout>(r.platform, r.merchant, '/api/v1/payouts/confirm', {
      orderNo: payout.orderNo,
    });
    if (payout.confirmed || payout.status === 'PROCESSING') {
      assert.equal(response.status, 200);
      assert.equal(response.body.data?.status, payout.status);
    } else if (payout.status === 'PENDING') {
      assert.equal(response.body.data?.status, 'PROCESSING');
      payout.status = 'PROCESSING';
      payout.confirmed = true;
    } else {
      assert.equal(response.body.msg, 'INVALID_STATE');
    }
    await checkInvariants(m, r);
  }
  toString = () => `Confirm(#${this.index})`;
}

const MOVES: Record<Status, Status[]> = {
  PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED'],
  PROCESSING: ['SUCCEEDED', 'FAILED'],
  SUCCEEDED: [],
  FAILED: [],
  REFUNDED: [],
};

class Simulate implements Command {
  constructor(
    readonly index: number,
    readonly status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED',
  ) {}
  check = (m: Readonly<Model>) => m.created.length > 0;
  async run(m: Model, r: Real) {
    const payout = pick(
      m,
      this.index,
      this.index % 4 !== 0 ? (p) => p.status === 'PENDING' || p.status === 'PROCESSING' : undefined,
    );
    const response = await post<Payout>(r.platform, r.merchant, '/api/v1/sandbox/payouts/simulate', {
      orderNo: payout.orderNo,
      status: this.status,
    });
    const unchanged = payout.status === this.status || (payout.status === 'REFUNDED' && this.status === 'SUCCEEDED');
    if (unchanged) {
      assert.equal(response.status, 200);
      assert.equal(response.body.data?.status, payout.status);
      assert.equal(response.body.data?.refundNo, payout.refundNo);
    } else if (MOVES[payout.status].includes(this.status)) {
      assert.equal(response.body.data?.status, this.status, JSON.stringify(response.body));
      const total = payout.amount + payout.fee;
      if (this.status === 'SUCCEEDED') m.reserved -= total;
      if (this.status === 'FAILED') {
        m.reserved -= total;
        m.available += total;
      }
      payout.status = this.status;
    } else {
      assert.equal(response.body.msg, 'INVALID_STATE');
    }
    await checkInvariants(m, r);
  }
  toString = () => `Simulate(#${this.index}, ${this.status})`;
}

class Return implements Command {
  constructor(
    readonly index: number,
    readonly refundNo: string | undefined,
  ) {}
  check = (m: Readonly<Model>) => m.created.length > 0;
  async run(m: Model, r: Real) {
    const payout = pick(
      m,
      this.index,
      this.index % 4 !== 0 ? (p) => p.status === 'SUCCEEDED' || p.status === 'REFUNDED' : undefined,
    );
    const response = await post<Payout>(r.platform, r.merchant, '/api/v1/sandbox/payouts/return', {
      orderNo: payout.orderNo,
      ...(this.refundNo === undefined ? {} : { refundNo: this.refundNo }),
    });
    const owner = this.refundNo === undefined ? undefined : m.refundNos.get(this.refundNo);
    if (payout.status === 'REFUNDED') {
      assert.equal(response.status, 200);
      assert.equal(response.body.data?.refundNo, payout.refundNo);
      assert.equal(response.body.data?.refundTime, payout.refundTime, 'refundTime never changes');
    } else if (owner !== undefined) {
      // The refundNo already applied elsewhere: nothing credited, the refunded order returned.
      assert.equal(response.status, 200);
      assert.equal(response.body.data?.orderNo, m.payouts.get(owner)?.orderNo);
    } else if (payout.status === 'SUCCEEDED') {
      const data = response.body.data as Payout;
      assert.equal(data.status, 'REFUNDED', JSON.stringify(response.body));
      assert.equal(data.refundAmount, major(payout.amount));
      if (this.refundNo !== undefined) assert.equal(data.refundNo, this.refundNo);
      payout.status = 'REFUNDED';
      payout.refundNo = data.refundNo as string;
      payout.refundTime = data.refundTime as number;
      m.refundNos.set(payout.refundNo, payout.key);
      m.available += payout.amount;
    } else {
      assert.equal(response.body.msg, 'INVALID_STATE');
    }
    await checkInvariants(m, r);
  }
  toString = () => `Return(#${this.index}, ${this.refundNo ?? '-'})`;
}

const payIn = fc.integer({ min: 1, max: 60_000 }).map((n) => new PayIn(BigInt(n)));
const createPayout = fc
  .tuple(fc.constantFrom('K0', 'K1', 'K2', 'K3', 'K4'), fc.constantFrom(1_000n, 4_000n, 15_001n))
  .map(([key, amount]) => new CreatePayout(key, amount));
const confirm = fc.nat(11).map((i) => new Confirm(i));
const simulate = fc
  .tuple(
    fc.nat(11),
    fc.constantFrom('PROCESSING' as const, 'SUCCEEDED' as const, 'SUCCEEDED' as const, 'FAILED' as const),
  )
  .map(([i, status]) => new Simulate(i, status));
const returnPayout = fc
  .tuple(fc.nat(11), fc.constantFrom(undefined, 'R1', 'R2'))
  .map(([i, refundNo]) => new Return(i, refundNo));
// Repeated entries weight the mix towards the commands that need earlier ones to matter.
const commands = [
  payIn,
  createPayout,
  createPayout,
  createPayout,
  confirm,
  simulate,
  simulate,
  simulate,
  returnPayout,
  returnPayout,
  returnPayout,
];

for (const database of databases()) {
  describe(`money model (${database})`, () => {
    let platform: TestPlatform;

    before(async () => {
      platform = await startTestPlatform({ database, env: { PAYGATE_FEES: PROPERTY_FEES } });
    });
    after(() => platform.close());

    it('random pay-ins, payouts, confirms, outcomes, returns and repeats keep the books sound and match the model', async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 15, size: 'max' }), async (cmds) => {
          const setup = async () => {
            const merchant = await createMerchant(platform);
            const merchantId = (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
            // Start with money, so that payouts can succeed from the first command.
            await fund(platform, merchant, '600.00');
            const model: Model = {
              available: 60_000n - payInFee(60_000n),
              reserved: 0n,
              payouts: new Map(),
              created: [],
              refundNos: new Map(),
            };
            return { model, real: { platform, merchant, merchantId } };
          };
          await fc.asyncModelRun(setup, cmds);
        }),
        { numRuns: 30 },
      );
    });
  });

  describe(`balances and rates (${database})`, () => {
    let platform: TestPlatform;

    before(async () => {
      platform = await startTestPlatform({
        database,
        env: { PAYGATE_FEES: JSON.stringify({ payments: { MXN: { SPEI: { percent: '2', fixed: '1.00' } } } }) },
      });
    });
    after(() => platform.close());

    it('balances list every sandbox currency, zeros included, and filter by currency', async () => {
      const merchant = await createMerchant(platform);
      const empty = await get<Balance[]>(platform, merchant, '/api/v1/balances');
      assert.equal(empty.status, 200, JSON.stringify(empty.body));
      assert.deepEqual(empty.body.data, [
        { currency: 'BRL', available: '0.00', reserved: '0.00' },
        { currency: 'MXN', available: '0.00', reserved: '0.00' },
        { currency: 'USD', available: '0.00', reserved: '0.00' },
        { currency: 'EUR', available: '0.00', reserved: '0.00' },
      ]);
      await fund(platform, merchant, '100.00', 'MXN'); // configured: 2 % + 1.00 → 3.00
      await post(platform, merchant, '/api/v1/payouts', payoutInput({ currency: 'MXN', amount: '50.00' })); // + 8.00
      const mxn = await get<Balance[]>(platform, merchant, '/api/v1/balances', 'currency=MXN');
      assert.deepEqual(mxn.body.data, [{ currency: 'MXN', available: '39.00', reserved: '58.00' }]);
      const bad = await get(platform, merchant, '/api/v1/balances', 'currency=XXX');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.msg, 'VALIDATION_FAILED');
      assert.equal((await get(platform, merchant, '/api/v1/balances', 'merchantId=1')).status, 400);
      // One merchant's money is invisible to another.
      const other = await createMerchant(platform);
      assert.deepEqual((await balanceOf(platform, other, 'MXN')).available, '0.00');
    });

    it('rates serve the configured table, filtered by currency and method', async () => {
      const merchant = await createMerchant(platform);
      const all = await get<unknown[]>(platform, merchant, '/api/v1/rates');
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.deepEqual(all.body.data, [
        {
          currency: 'BRL',
          scale: 2,
          payments: [
            { method: 'PIX', feePercent: '0.99', feeFixed: '0.00' },
            { method: 'BOLETO', feePercent: '0.00', feeFixed: '3.50' },
          ],
          payout: { feePercent: '0.00', feeFixed: '2.00' },
        },
        {
          currency: 'MXN',
          scale: 2,
          payments: [{ method: 'SPEI', feePercent: '2.00', feeFixed: '1.00' }],
          payout: { feePercent: '0.00', feeFixed: '8.00' },
        },
        {
          currency: 'USD',
          scale: 2,
          payments: [{ method: 'CARD', feePercent: '2.90', feeFixed: '0.30' }],
          payout: { feePercent: '0.00', feeFixed: '1.00' },
        },
        {
          currency: 'EUR',
          scale: 2,
          payments: [{ method: 'SEPA', feePercent: '0.80', feeFixed: '0.25' }],
          payout: { feePercent: '0.00', feeFixed: '0.50' },
        },
      ]);
      const boleto = await get<{ currency: string; payments: { method: string }[] }[]>(
        platform,
        merchant,
        '/api/v1/rates',
        'method=BOLETO',
      );
      assert.deepEqual(
        boleto.body.data?.map((r) => [r.currency, r.payments.map((p) => p.method)]),
        [['BRL', ['BOLETO']]],
      );
      const usd = await get<{ currency: string }[]>(platform, merchant, '/api/v1/rates', 'currency=USD');
      assert.deepEqual(
        usd.body.data?.map((r) => r.currency),
        ['USD'],
      );
      const none = await get(platform, merchant, '/api/v1/rates', 'currency=USD&method=PIX');
      assert.deepEqual(none.body.data, []);
      const bad = await get(platform, merchant, '/api/v1/rates', 'currency=XXX&method=WIRE');
      assert.equal(bad.status, 400);
      assert.deepEqual(
        bad.body.errors?.map((e) => e.field),
        ['currency', 'method'],
      );
    });

    it('the rate table is what pay-ins are charged', async () => {
      const merchant = await createMerchant(platform);
      const created = await post<{ orderNo: string }>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ currency: 'MXN', amount: '250.00', paymentMethod: { code: 'SPEI' } }),
      );
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo: created.body.data?.orderNo,
        status: 'SUCCEEDED',
      });
      assert.equal((await balanceOf(platform, merchant, 'MXN')).available, '244.00'); // 250 − (5.00 + 1.00)
      await assertBooksHealthy(platform);
    });
  });
}
