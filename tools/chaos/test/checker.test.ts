/**
 * The checker against a small world built by hand: everything consistent, every rule holds;
 * then one thing broken at a time (a release missing, an unbalanced transaction, an event lost,
 * other bytes delivered, a nonce accepted twice, a 5xx outside any fault, a payout in two files,
 * a final state that changed, a create answered with two orders, a channel that disagrees), and
 * the rule that should see it does, by name.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BankView } from '../src/channels.js';
import {
  type CheckInput,
  checkCampaign,
  type DbAccount,
  type DbCredit,
  type DbState,
  type DbEvent,
  type DbOrder,
  type DbPosting,
  type RuleResult,
} from '../src/checker.js';
import type { Attempt } from '../src/client.js';
import { History } from '../src/history.js';
import type { Delivery } from '../src/receivers.js';

const M = 'ak_test_shop';
const URL = 'http://127.0.0.1:4000';
const T = 1_700_000_000_000;

interface World {
  orders: DbOrder[];
  events: DbEvent[];
  postings: DbPosting[];
  deliveries: Delivery[];
  history: History;
  bank: BankView;
  sepaFiles: Map<string, string[]>;
  credits: DbCredit[];
  bankInbox: DbState['bankInbox'][number][];
  batchBookings: DbState['batchBookings'][number][];
  verdicts: Map<string, string>;
}

const order = (o: Partial<DbOrder> & Pick<DbOrder, 'type' | 'orderNo' | 'status' | 'currency'>): DbOrder => ({
  merchantOrderNo: `m-${o.orderNo}`,
  merchant: M,
  amountMinor: 1000n,
  feeMinor: 0n,
  paidMinor: null,
  refundMinor: null,
  webhookUrl: `${URL}/hook`,
  channelTradeNo: null,
  ...o,
});

let transaction = 0;
function post(kind: string, orderNo: string, currency: string, legs: [string, string | null, bigint][]): DbPosting[] {
  transaction += 1;
  return legs.map(([accountKind, merchant, amount]) => ({
    transactionId: String(transaction),
    kind,
    orderNo,
    currency,
    amount,
    accountKind,
    merchant,
  }));
}

function attempt(nonce: string, status: number, sentAt = T, extra: Partial<Attempt> = {}): Attempt {
  return {
    merchant: M,
    method: 'POST',
    path: '/api/v1/payments',
    nonce,
    sentAt,
    answeredAt: sentAt + 10,
    status,
    replay: false,
    ...extra,
  };
}

function world(): World {
  const orders = [
    order({
      type: 'PAYMENT',
      orderNo: 'P1',
      status: 'SUCCEEDED',
      currency: 'EUR',
      amountMinor: 5000n,
      paidMinor: 5000n,
    }),
    order({ type: 'PAYOUT', orderNo: 'W1', status: 'REFUNDED', currency: 'EUR', feeMinor: 50n, refundMinor: 1000n }),
    order({ type: 'PAYOUT', orderNo: 'W2', status: 'FAILED', currency: 'BRL', feeMinor: 50n }),
    // A payment by bank transfer, settled by the payer's credit PGBC1 (paid twice: PGBC2 unmatched).
    order({
      type: 'PAYMENT',
      orderNo: 'P3',
      status: 'SUCCEEDED',
      currency: 'EUR',
      amountMinor: 2000n,
      paidMinor: 2000n,
      expiresAt: T + 600_000,
      channelTradeNo: 'PGBC1',
    }),
  ];
  const postings = [
    ...post('payment', 'P1', 'EUR', [
      ['channel_clearing', null, -5000n],
      ['available', M, 4935n],
      ['fee_revenue', null, 65n],
    ]),
    ...post('payout_reserve', 'W1', 'EUR', [
      ['available', M, -1050n],
      ['reserved', M, 1050n],
    ]),
    ...post('payout_settle', 'W1', 'EUR', [
      ['reserved', M, -1050n],
      ['channel_clearing', null, 1000n],
      ['fee_revenue', null, 50n],
    ]),
    ...post('refund', 'W1', 'EUR', [
      ['channel_clearing', null, -1000n],
      ['available', M, 1000n],
    ]),
    ...post('payout_reserve', 'W2', 'BRL', [
      ['available', M, -1050n],
      ['reserved', M, 1050n],
    ]),
    ...post('payout_release', 'W2', 'BRL', [
      ['reserved', M, -1050n],
      ['available', M, 1050n],
    ]),
    ...post('payment', 'P3', 'EUR', [
      ['channel_clearing', null, -2000n],
      ['available', M, 1974n],
      ['fee_revenue', null, 26n],
    ]),
  ];
  const event = (eventId: string, orderType: string, orderNo: string, status: string, at: number): DbEvent => ({
    eventId,
    merchant: M,
    orderType,
    orderNo,
    status,
    body: Buffer.from(JSON.stringify({ eventId, orderNo, status })),
    createdAt: at,
    deliveryStatus: 'delivered',
    webhookUrl: `${URL}/hook`,
  });
  const events = [
    event('evt_1', 'PAYMENT', 'P1', 'SUCCEEDED', T + 1),
    event('evt_2', 'PAYOUT', 'W1', 'SUCCEEDED', T + 2),
    event('evt_3', 'PAYOUT', 'W1', 'REFUNDED', T + 3),
    event('evt_4', 'PAYOUT', 'W2', 'FAILED', T + 4),
    event('evt_5', 'PAYMENT', 'P3', 'SUCCEEDED', T + 5),
  ];
  const deliveries: Delivery[] = events.map((e) => ({
    at: e.createdAt + 100,
    eventId: e.eventId,
    body: Buffer.from(e.body),
    verified: true,
    mode: 'ok',
  }));
  const history = new History();
  const record = (
    type: 'PAYMENT' | 'PAYOUT',
    orderNo: string,
    channel: 'sandbox' | 'bank',
    statuses: string[],
    amount = '10.00',
  ) => {
    const r = history.order({
      merchant: M,
      type,
      channel,
      merchantOrderNo: `m-${orderNo}`,
      currency: 'EUR',
      amount,
    });
    r.orderNo = orderNo;
    r.createAnswers.push(orderNo);
    statuses.forEach((status, i) =>
      r.observations.push({ status, sentAt: T + i * 1000, answeredAt: T + i * 1000 + 10, source: 'query' }),
    );
    return r;
  };
  record('PAYMENT', 'P1', 'sandbox', ['PENDING', 'SUCCEEDED', 'SUCCEEDED']).intents.push({
    action: 'SUCCEEDED',
    at: T,
    outcome: 'ok',
  });
  record('PAYOUT', 'W1', 'bank', ['PENDING', 'SUCCEEDED', 'REFUNDED']).confirmed = 'ok';
  const w2 = record('PAYOUT', 'W2', 'sandbox', ['PENDING', 'FAILED']);
  w2.confirmed = 'ok';
  w2.intents.push({ action: 'FAILED', at: T, outcome: 'ok' });
  record('PAYMENT', 'P3', 'bank', ['PENDING', 'SUCCEEDED'], '20.00').reference = 'RF47P3';
  history.attempts.push(attempt('n1', 200), attempt('n2', 200), attempt('n1', 401, T + 5, { replay: true }));
  const bank: BankView = {
    transfers: [
      {
        endToEndId: 'W1',
        msgId: 'MSG1',
        status: 'booked',
        reported: true,
        amount: '10.00',
        returns: [{ amount: '10.00' }],
      },
    ],
    uploads: [{ name: 'MSG1.xml', msgId: 'MSG1', outcome: 'accepted' }],
    credits: [
      { ref: 'PGBC1', amount: '20.00', bookedAt: T + 2000, references: ['RF47P3'], texts: [] },
      { ref: 'PGBC2', amount: '20.00', bookedAt: T + 4000, references: [], texts: ['order m-P3 rf47 p3'] },
    ],
  };
  const credits: DbCredit[] = [
    { accountServicerRef: 'PGBC1', amountMinor: 2000n, state: 'matched', reason: null, orderNo: 'P3' },
    { accountServicerRef: 'PGBC2', amountMinor: 2000n, state: 'unmatched', reason: 'payment_final', orderNo: 'P3' },
  ];
  return {
    orders,
    events,
    postings,
    deliveries,
    history,
    bank,
    sepaFiles: new Map([['W1', ['MSG1']]]),
    credits,
    bankInbox: [
      { name: 'pain002-1.xml', message: 'pain.002.001.10', state: 'applied', reason: null },
      { name: 'camt053-1.xml', message: 'camt.053.001.08', state: 'applied', reason: null },
    ],
    batchBookings: [{ msgId: 'MSG1', state: 'applied', reason: null, transactions: 1, fileTransactions: 1 }],
    verdicts: new Map(),
  };
}

/** Accounts as the ledger keeps them: balances maintained from the entries. */
function accountsOf(postings: readonly DbPosting[]): DbAccount[] {
  const accounts = new Map<string, DbAccount>();
  for (const p of postings) {
    const key = `${p.merchant}/${p.currency}/${p.accountKind}`;
    const have = accounts.get(key);
    const balance = (have?.balance ?? 0n) + p.amount;
    accounts.set(key, { merchant: p.merchant, currency: p.currency, kind: p.accountKind, balance, entries: balance });
  }
  return [...accounts.values()];
}

function check(w: World, overrides: Partial<CheckInput> = {}): RuleResult[] {
  const accounts = accountsOf(w.postings);
  const eur = (kind: string) =>
    accounts.find((a) => a.merchant === M && a.currency === 'EUR' && a.kind === kind)?.balance ?? 0n;
  const [available, reserved] = [eur('available'), eur('reserved')];
  const major = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;
  return checkCampaign({
    history: w.history,
    db: {
      orders: w.orders,
      events: w.events,
      postings: w.postings,
      accounts,
      sepaFiles: w.sepaFiles,
      credits: w.credits,
      bankInbox: w.bankInbox,
      batchBookings: w.batchBookings,
    },
    deliveries: new Map([[URL, w.deliveries]]),
    channelVerdicts: w.verdicts,
    bank: w.bank,
    apiBalances: new Map([[M, [{ currency: 'EUR', available: major(available), reserved: major(reserved) }]]]),
    exits: new Map([['api1', { exits: 1, caused: 1 }]]),
    recoveryBoundMs: 60_000,
    ...overrides,
  });
}

/** The rules broken, by a word of their name. */
function broken(results: RuleResult[]): string[] {
  return results.filter((r) => r.violations > 0).map((r) => r.rule);
}

describe('the checker', () => {
  test('a consistent world: every rule holds, and each checked something', () => {
    const results = check(world());
    assert.deepEqual(broken(results), []);
    const nothing = results.filter((r) => r.checked === 0).map((r) => r.rule);
    assert.deepEqual(nothing, [
      'a receiver that recovered got every event pending for it',
      'no 5xx or missing answer that a fault does not explain',
      'every fault recovered within 60 s of its heal',
    ]);
  });

  const cases: [string, (w: World) => void, RegExp][] = [
    [
      'a FAILED payout whose reserve was never released',
      (w) => (w.postings = w.postings.filter((p) => p.kind !== 'payout_release')),
      /released on FAILED|what its orders imply/,
    ],
    [
      'a transaction that does not balance',
      (w) => (w.postings[1] = { ...(w.postings[1] as DbPosting), amount: 4936n }),
      /sums to zero/,
    ],
    [
      'a final state without its event',
      (w) => (w.events = w.events.filter((e) => e.eventId !== 'evt_4')),
      /has its event/,
    ],
    [
      'a delivery of other bytes',
      (w) => (w.deliveries[0] = { ...(w.deliveries[0] as Delivery), body: Buffer.from('{}') }),
      /reached its receiver/,
    ],
    [
      'an event never answered 2xx',
      (w) => (w.deliveries[0] = { ...(w.deliveries[0] as Delivery), mode: '5xx' }),
      /reached its receiver/,
    ],
    ['a nonce accepted twice', (w) => w.history.attempts.push(attempt('n2', 409, T + 20)), /nonce/],
    ['a 5xx outside every fault', (w) => w.history.attempts.push(attempt('n9', 503, T + 50)), /5xx/],
    [
      'a SEPA payout in two accepted files',
      (w) => {
        w.bank.uploads.push({ name: 'MSG2.xml', msgId: 'MSG2', outcome: 'accepted' });
        w.bank.transfers.push({ ...(w.bank.transfers[0] as BankView['transfers'][number]), msgId: 'MSG2' });
      },
      /exactly one file/,
    ],
    [
      'a final state that changed',
      (w) =>
        w.history.orders[0]?.observations.push({
          status: 'FAILED',
          sentAt: T + 9000,
          answeredAt: T + 9010,
          source: 'list',
        }),
      /never changes/,
    ],
    ['a create answered with two orders', (w) => w.history.orders[0]?.createAnswers.push('P9'), /exists once/],
    [
      'a bank credit the platform read twice',
      (w) => w.credits.push({ ...(w.credits[1] as DbCredit) }),
      /credit the bank booked read once/,
    ],
    [
      'a bank credit the platform never read',
      (w) => (w.credits = w.credits.slice(0, 1)),
      /credit the bank booked read once/,
    ],
    [
      'a payment by transfer settled by a credit of another amount',
      (w) => {
        (w.bank.credits[0] as { amount: string }).amount = '19.99';
        w.credits[0] = { ...(w.credits[0] as DbCredit), amountMinor: 1999n };
      },
      /channel's|credit the bank booked/,
    ],
    [
      'a payment by transfer settled by two credits',
      (w) => (w.credits[1] = { ...(w.credits[1] as DbCredit), state: 'matched', reason: null }),
      /credit the bank booked read once/,
    ],
    [
      'a paid payment by transfer left to expire',
      (w) => (w.orders[3] = { ...(w.orders[3] as DbOrder), status: 'EXPIRED', paidMinor: null }),
      /channel's/,
    ],
    [
      'a bank file set aside',
      (w) => (w.bankInbox[1] = { ...(w.bankInbox[1] as World['bankInbox'][number]), state: 'set_aside', reason: 'x' }),
      /none set aside/,
    ],
    [
      'a mismatched batch booking',
      (w) =>
        (w.batchBookings[0] = {
          msgId: 'MSG1',
          state: 'mismatch',
          reason: 'count',
          transactions: 2,
          fileTransactions: 1,
        }),
      /batch booking matched/,
    ],
    [
      'the channel disagreeing',
      (w) => (w.bank.transfers[0] = { ...(w.bank.transfers[0] as BankView['transfers'][number]), status: 'rejected' }),
      /channel's/,
    ],
  ];
  for (const [name, breakIt, rule] of cases) {
    test(`sees ${name}`, () => {
      const w = world();
      breakIt(w);
      const rules = broken(check(w));
      assert.ok(
        rules.some((r) => rule.test(r)),
        `expected a rule matching ${rule}, broken: ${rules.join('; ')}`,
      );
    });
  }

  test("a batch booking short of the file's transfers the bank rejected is refused and explained; short for no reason, not", () => {
    const w = world();
    // MSG1 held a second transfer, which the bank rejected: it booked the file as one transfer of two.
    w.bank.transfers.push({
      endToEndId: 'W9',
      msgId: 'MSG1',
      status: 'rejected',
      reported: true,
      amount: '5.00',
      returns: [],
    });
    w.batchBookings[0] = {
      msgId: 'MSG1',
      state: 'mismatch',
      reason: 'NbOfTxs 1 is not the 2 payouts of file MSG1',
      transactions: 1,
      fileTransactions: 2,
    };
    const results = check(w);
    assert.deepEqual(broken(results), []);
    const inbox = results.find((r) => /batch booking matched/.test(r.rule));
    assert.match(JSON.stringify(inbox), /booked short of their rejected transfers/);
    // The same count with nothing rejected at the bank is a real mismatch.
    w.bank.transfers.pop();
    assert.ok(broken(check(w)).some((r) => /batch booking matched/.test(r)));
  });

  test('a 5xx inside an API instance kill is explained; one of the sandbox during a PSP outage is not', () => {
    const w = world();
    w.history.attempts.push(attempt('n7', 0, T + 100, { error: 'ECONNRESET' }));
    w.history.faults.push({
      id: 1,
      kind: 'api-kill',
      target: 'api1',
      startedAt: T,
      healedAt: T + 200,
      recoveredAt: T + 300,
      detail: {},
    });
    assert.deepEqual(broken(check(w)), []);
    w.history.attempts.push(
      attempt('n8', 503, T + 10_000, { path: '/api/v1/sandbox/payments/simulate', msg: 'CHANNEL_UNAVAILABLE' }),
    );
    w.history.faults.push({
      id: 2,
      kind: 'net-reset',
      target: 'psp',
      startedAt: T + 9000,
      healedAt: T + 11_000,
      recoveredAt: T + 11_100,
      detail: {},
    });
    assert.deepEqual(broken(check(w)), ['no 5xx or missing answer that a fault does not explain']);
  });
});
