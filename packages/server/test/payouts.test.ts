import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  count,
  createMerchant,
  databases,
  get,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import {
  assertBooksHealthy,
  balanceOf,
  eventsOf,
  fund,
  type Payout,
  payoutInput,
  postingsOf,
  SIMPLE_FEES,
} from './money-harness.js';

const ACCOUNT_NUMBER = '000123456789';

for (const database of databases()) {
  describe(`payout orders (${database})`, () => {
    let platform: TestPlatform;

    before(async () => {
      platform = await startTestPlatform({ database, env: { PAYGATE_FEES: SIMPLE_FEES } });
    });
    after(() => platform.close());

    /** A fresh merchant holding `amount` BRL available. */
    const fundedMerchant = async (amount: string) => {
      const merchant = await createMerchant(platform);
      await fund(platform, merchant, amount);
      return merchant;
    };

    const createPayout = async (merchant: TestMerchant, overrides: Record<string, unknown> = {}) => {
      const response = await post<Payout>(platform, merchant, '/api/v1/payouts', payoutInput(overrides));
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.data as Payout;
    };

    const simulate = (merchant: TestMerchant, orderNo: string, status: string) =>
      post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/simulate', { orderNo, status });

    /** A payout that has SUCCEEDED, from a merchant funded for exactly it. */
    const succeededPayout = async () => {
      const merchant = await fundedMerchant('103.00');
      const payout = await createPayout(merchant);
      await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payout.orderNo });
      assert.equal((await simulate(merchant, payout.orderNo, 'SUCCEEDED')).status, 200);
      return { merchant, payout };
    };

    it('create reserves amount + fee; confirm; SUCCEEDED settles the reserve and writes the event', async () => {
      const merchant = await fundedMerchant('500.00');
      const input = payoutInput({ amount: '100.00' });
      const created = await post<Payout>(platform, merchant, '/api/v1/payouts', input);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const payout = created.body.data as Payout;
      assert.match(payout.orderNo, /^W\d{18}$/);
      assert.equal(payout.status, 'PENDING');
      assert.equal(payout.amount, '100.00');
      assert.equal(payout.fee, '3.00', '1% + 2.00');
      assert.equal('payee' in payout, false);
      assert.deepEqual(await balanceOf(platform, merchant), {
        currency: 'BRL',
        available: '397.00',
        reserved: '103.00',
      });

      const confirmed = await post<Payout>(platform, merchant, '/api/v1/payouts/confirm', {
        merchantOrderNo: input.merchantOrderNo,
      });
      assert.equal(confirmed.body.data?.status, 'PROCESSING');
      assert.equal(typeof confirmed.body.data?.confirmedAt, 'number');
      assert.deepEqual(await eventsOf(platform, payout.orderNo), [], 'PROCESSING has no webhook');

      const done = await simulate(merchant, payout.orderNo, 'SUCCEEDED');
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.data?.status, 'SUCCEEDED');
      assert.ok(done.body.data?.channelTradeNo);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '397.00', reserved: '0.00' });

      const events = await eventsOf(platform, payout.orderNo);
      assert.equal(events.length, 1);
      assert.deepEqual(Object.keys(events[0]?.json ?? {}), [
        'eventId',
        'orderType',
        'orderNo',
        'merchantOrderNo',
        'status',
        'currency',
        'amount',
        'channelTradeNo',
        'attach',
      ]);
      assert.deepEqual(events[0]?.json, {
        eventId: events[0]?.event_id,
        orderType: 'PAYOUT',
        orderNo: payout.orderNo,
        merchantOrderNo: input.merchantOrderNo,
        status: 'SUCCEEDED',
        currency: 'BRL',
        amount: '100.00',
        channelTradeNo: done.body.data?.channelTradeNo,
        attach: 'batch=7',
      });
      assert.deepEqual(
        (await postingsOf(platform, payout.orderNo)).map((p) => p.reference),
        [`payout:${payout.orderNo}:reserve`, `payout:${payout.orderNo}:settle`],
      );
      // Settlement: the amount goes to the channel, the fee to the platform.
      const legs = await platform.services.db.query<{ kind: string; amount: bigint }>(
        `SELECT a.kind, e.amount FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
           JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.reference = $1 ORDER BY a.kind`,
        [`payout:${payout.orderNo}:settle`],
      );
      assert.deepEqual(legs.rows, [
        { kind: 'channel_clearing', amount: 10000n },
        { kind: 'fee_revenue', amount: 300n },
        { kind: 'reserved', amount: -10300n },
      ]);
      await assertBooksHealthy(platform);
    });

    it('FAILED releases the reserve back to available, with its event', async () => {
      const merchant = await fundedMerchant('200.00');
      const payout = await createPayout(merchant);
      await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payout.orderNo });
      const failed = await simulate(merchant, payout.orderNo, 'FAILED');
      assert.equal(failed.body.data?.status, 'FAILED');
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '200.00', reserved: '0.00' });
      assert.deepEqual(
        (await eventsOf(platform, payout.orderNo)).map((e) => [e.status, e.json.status, e.json.orderType]),
        [['FAILED', 'FAILED', 'PAYOUT']],
      );
      assert.deepEqual(
        (await postingsOf(platform, payout.orderNo)).map((p) => p.kind),
        ['payout_reserve', 'payout_release'],
      );
      // A final payout never moves again; repeating the final state changes nothing.
      assert.equal((await simulate(merchant, payout.orderNo, 'SUCCEEDED')).body.msg, 'INVALID_STATE');
      assert.equal((await simulate(merchant, payout.orderNo, 'FAILED')).status, 200);
      assert.equal((await eventsOf(platform, payout.orderNo)).length, 1);
      await assertBooksHealthy(platform);
    });

    it('INSUFFICIENT_BALANCE when available does not cover amount + fee, and nothing is written', async () => {
      const merchant = await fundedMerchant('102.99');
      const payouts = await count(platform, 'payouts');
      const transactions = await count(platform, 'ledger_transactions');
      const events = await count(platform, 'events');
      const refused = await post(platform, merchant, '/api/v1/payouts', payoutInput());
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.msg, 'INSUFFICIENT_BALANCE');
      // It says what was available and what the payout needed.
      assert.match(
        String(refused.body.message),
        /^the available balance is 102\.99 BRL; this payout needs 103\.00 BRL \(amount \d+\.\d\d \+ fee \d+\.\d\d\)$/,
      );
      assert.equal(await count(platform, 'payouts'), payouts);
      assert.equal(await count(platform, 'ledger_transactions'), transactions);
      assert.equal(await count(platform, 'events'), events);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '102.99', reserved: '0.00' });
      // Another currency's money does not count.
      const other = await createMerchant(platform);
      await fund(platform, other, '500.00', 'MXN');
      const otherRefused = await post(platform, other, '/api/v1/payouts', payoutInput());
      assert.equal(otherRefused.body.msg, 'INSUFFICIENT_BALANCE');
      assert.match(
        String(otherRefused.body.message),
        /^the available balance is 0\.00 BRL; this payout needs 103\.00 BRL/,
      );
      // Exactly enough is enough.
      await fund(platform, merchant, '0.01');
      assert.equal((await post(platform, merchant, '/api/v1/payouts', payoutInput())).status, 200);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '0.00', reserved: '103.00' });
    });

    it('a repeated create returns the same order and moves no money; different fields are DUPLICATE_ORDER', async () => {
      const merchant = await fundedMerchant('1000.00');
      const input = payoutInput();
      const first = await post<Payout>(platform, merchant, '/api/v1/payouts', input);
      const again = await post<Payout>(platform, merchant, '/api/v1/payouts', input);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.data, first.body.data);
      assert.deepEqual(await balanceOf(platform, merchant), {
        currency: 'BRL',
        available: '897.00',
        reserved: '103.00',
      });
      for (const change of [
        { amount: '99.00' },
        { attach: 'other' },
        { payee: { ...input.payee, accountNumber: '999' } },
        { payee: { name: 'João Souza', accountNumber: ACCOUNT_NUMBER } },
      ]) {
        const different = await post(platform, merchant, '/api/v1/payouts', { ...input, ...change });
        assert.equal(different.status, 409, JSON.stringify(change));
        assert.equal(different.body.msg, 'DUPLICATE_ORDER');
      }
      assert.deepEqual(await balanceOf(platform, merchant), {
        currency: 'BRL',
        available: '897.00',
        reserved: '103.00',
      });
      // A repeat after the payout failed still returns it and reserves nothing again.
      await simulate(merchant, first.body.data?.orderNo as string, 'FAILED');
      const late = await post<Payout>(platform, merchant, '/api/v1/payouts', input);
      assert.equal(late.body.data?.status, 'FAILED');
      assert.deepEqual(await balanceOf(platform, merchant), {
        currency: 'BRL',
        available: '1000.00',
        reserved: '0.00',
      });
    });

    it('validates the payout and payee fields without echoing them, and writes nothing', async () => {
      const merchant = await fundedMerchant('1000.00');
      const before = await count(platform, 'payouts');
      const payee = payoutInput().payee;
      const cases: [Record<string, unknown>, string][] = [
        [{ payee: undefined }, 'payee'],
        [{ payee: { ...payee, name: '' } }, 'payee.name'],
        [{ payee: { ...payee, name: 'João\u0000Souza' } }, 'payee.name'],
        [{ payee: { ...payee, accountNumber: undefined } }, 'payee.accountNumber'],
        [{ payee: { ...payee, accountNumber: '0001  2345 6789' } }, 'payee.accountNumber'],
        [{ payee: { ...payee, accountNumber: ' 000123456789' } }, 'payee.accountNumber'],
        [{ payee: { ...payee, bankCode: '34-1' } }, 'payee.bankCode'],
        [{ payee: { ...payee, documentNumber: '012 345' } }, 'payee.documentNumber'],
        [{ currency: 'XXX' }, 'currency'],
        [{ amount: '1.001' }, 'amount'],
        [{ amount: '0' }, 'amount'],
        [{ webhookUrl: 'ftp://merchant.example/x' }, 'webhookUrl'],
        [{ merchantOrderNo: 'has space' }, 'merchantOrderNo'],
      ];
      for (const [override, field] of cases) {
        const response = await post(platform, merchant, '/api/v1/payouts', payoutInput(override));
        assert.equal(response.status, 400, `${JSON.stringify(override)} → ${response.status}`);
        assert.equal(response.body.msg, 'VALIDATION_FAILED');
        assert.ok(
          response.body.errors?.some((e) => e.field === field),
          `${JSON.stringify(override)}: ${JSON.stringify(response.body.errors)}`,
        );
        assert.doesNotMatch(JSON.stringify(response.body), /0001 2345|012 345|João/);
      }
      // An empty name is one error, "required", not also a bogus "no control characters".
      const empty = await post(platform, merchant, '/api/v1/payouts', payoutInput({ payee: { ...payee, name: ' ' } }));
      assert.deepEqual(empty.body.errors, [{ field: 'payee.name', message: 'payee.name is required' }]);
      assert.equal(await count(platform, 'payouts'), before);
    });

    it('an unexpected database error from a create carries no payee details (it is logged whole)', async () => {
      // No such merchant: the insert fails on the foreign key, with the payee among its parameters.
      const error = await platform.services.payouts.create(987_654_321n, payoutInput()).catch((e: unknown) => e);
      assert.equal((error as { code?: string }).code, '23503');
      assert.doesNotMatch(inspect(error, { depth: 10, showHidden: true }), /000123456789|01234567890|João/);
    });

    it('update changes attach and webhookUrl only while PENDING; confirm is idempotent', async () => {
      const merchant = await fundedMerchant('500.00');
      const payout = await createPayout(merchant);
      const updated = await post<Payout>(platform, merchant, '/api/v1/payouts/update', {
        orderNo: payout.orderNo,
        attach: 'changed',
        webhookUrl: 'https://merchant.example/hooks/2',
      });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.equal(updated.body.data?.attach, 'changed');
      assert.equal(updated.body.data?.webhookUrl, 'https://merchant.example/hooks/2');
      const first = await post<Payout>(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payout.orderNo });
      const again = await post<Payout>(platform, merchant, '/api/v1/payouts/confirm', { orderNo: payout.orderNo });
      assert.equal(again.status, 200);
      assert.equal(again.body.data?.confirmedAt, first.body.data?.confirmedAt);
      const late = await post(platform, merchant, '/api/v1/payouts/update', { orderNo: payout.orderNo, attach: 'x' });
      assert.equal(late.status, 409);
      assert.equal(late.body.msg, 'INVALID_STATE');
      await simulate(merchant, payout.orderNo, 'FAILED');
      const failed = await createPayout(merchant);
      await simulate(merchant, failed.orderNo, 'FAILED');
      assert.equal(
        (await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo: failed.orderNo })).body.msg,
        'INVALID_STATE',
      );
      // The event carries the attach and URL in force when the order became final.
      const [event] = await eventsOf(platform, payout.orderNo);
      assert.equal(event?.json.attach, 'changed');
    });

    it('the receipt shows the payee; queries, lists and webhook bodies never do', async () => {
      const { merchant, payout } = await succeededPayout();
      const receipt = await get<Record<string, unknown>>(
        platform,
        merchant,
        '/api/v1/payouts/receipt',
        `orderNo=${payout.orderNo}`,
      );
      assert.equal(receipt.status, 200, JSON.stringify(receipt.body));
      const data = receipt.body.data as Record<string, unknown>;
      assert.deepEqual(data.payee, {
        name: 'João Souza',
        accountNumber: ACCOUNT_NUMBER,
        bankCode: '341',
        documentNumber: '01234567890',
      });
      assert.equal(data.amount, '100.00');
      assert.equal(data.fee, '3.00');
      assert.equal(data.total, '103.00');
      assert.equal(data.status, 'SUCCEEDED');
      for (const field of ['createdAt', 'confirmedAt', 'finalizedAt']) assert.equal(typeof data[field], 'number');
      assert.equal('refundNo' in data, false);

      const leaks = /000123456789|01234567890|João|payee/;
      const query = await get(platform, merchant, '/api/v1/payouts', `orderNo=${payout.orderNo}`);
      assert.equal(query.status, 200);
      assert.doesNotMatch(JSON.stringify(query.body), leaks);
      const list = await get(platform, merchant, '/api/v1/payouts/list', 'pageSize=100');
      assert.equal(list.status, 200);
      assert.doesNotMatch(JSON.stringify(list.body), leaks);
      await post(platform, merchant, '/api/v1/sandbox/payouts/return', { orderNo: payout.orderNo });
      const events = await platform.services.db.query<{ body: Uint8Array }>(
        `SELECT body FROM events WHERE order_type = 'PAYOUT'`,
      );
      assert.ok(events.rows.length >= 2);
      for (const row of events.rows) assert.doesNotMatch(Buffer.from(row.body).toString('utf8'), leaks);
      // Another merchant cannot read the receipt.
      const other = await createMerchant(platform);
      const foreign = await get(platform, other, '/api/v1/payouts/receipt', `orderNo=${payout.orderNo}`);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.msg, 'ORDER_NOT_FOUND');
      // Account numbers are not query parameters.
      const refused = await get(platform, merchant, '/api/v1/payouts', `accountNumber=${ACCOUNT_NUMBER}`);
      assert.equal(refused.status, 400);
      assert.doesNotMatch(JSON.stringify(refused.body), /000123456789/);
    });

    it('a return credits the principal once, moves SUCCEEDED → REFUNDED and writes its own event', async () => {
      const { merchant, payout } = await succeededPayout();
      const before = await get<Payout>(platform, merchant, '/api/v1/payouts', `orderNo=${payout.orderNo}`);
      assert.equal(before.body.data?.status, 'SUCCEEDED');
      for (const field of ['refundNo', 'refundAmount', 'refundTime'])
        assert.equal(field in (before.body.data ?? {}), false);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '0.00', reserved: '0.00' });

      const returned = await post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
        orderNo: payout.orderNo,
        refundNo: 'RET-0001',
      });
      assert.equal(returned.status, 200, JSON.stringify(returned.body));
      const refunded = returned.body.data as Payout;
      assert.equal(refunded.status, 'REFUNDED');
      assert.equal(refunded.refundNo, 'RET-0001');
      assert.equal(refunded.refundAmount, '100.00', 'the full principal');
      assert.equal(typeof refunded.refundTime, 'number');
      // The principal comes back; the payout fee does not.
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '100.00', reserved: '0.00' });

      const events = await eventsOf(platform, payout.orderNo);
      assert.deepEqual(
        events.map((e) => e.status),
        ['SUCCEEDED', 'REFUNDED'],
      );
      const refundEvent = events[1];
      assert.notEqual(refundEvent?.event_id, events[0]?.event_id);
      assert.deepEqual(refundEvent?.json, {
        eventId: refundEvent?.event_id,
        orderType: 'PAYOUT',
        orderNo: payout.orderNo,
        merchantOrderNo: payout.merchantOrderNo,
        status: 'REFUNDED',
        currency: 'BRL',
        amount: '100.00',
        refundNo: 'RET-0001',
        refundAmount: '100.00',
        refundTime: refunded.refundTime,
      });
      assert.equal(
        (refundEvent?.deliver_until?.getTime() ?? 0) - (refundEvent?.created_at.getTime() ?? 0),
        24 * 3_600_000,
      );

      // Repeats of the same order credit nothing, whatever refundNo they carry, and change no field.
      for (const repeat of [{}, { refundNo: 'RET-0001' }, { refundNo: 'RET-0002' }]) {
        const again = await post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
          orderNo: payout.orderNo,
          ...repeat,
        });
        assert.equal(again.status, 200);
        assert.deepEqual(
          [again.body.data?.refundNo, again.body.data?.refundAmount, again.body.data?.refundTime],
          ['RET-0001', '100.00', refunded.refundTime],
        );
      }
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '100.00', reserved: '0.00' });
      assert.equal((await eventsOf(platform, payout.orderNo)).length, 2);
      assert.deepEqual(
        (await postingsOf(platform, payout.orderNo)).map((p) => p.reference),
        [`payout:${payout.orderNo}:reserve`, `payout:${payout.orderNo}:settle`, `refund:${payout.orderNo}`],
      );

      const queried = await get<Payout>(platform, merchant, '/api/v1/payouts', `orderNo=${payout.orderNo}`);
      assert.deepEqual(queried.body.data, refunded);
      await assertBooksHealthy(platform);
    });

    it('a refundNo applies once: reused on another payout it credits nothing and returns the refunded order', async () => {
      const merchant = await fundedMerchant('206.00');
      const a = await createPayout(merchant);
      const b = await createPayout(merchant);
      await simulate(merchant, a.orderNo, 'SUCCEEDED');
      await simulate(merchant, b.orderNo, 'SUCCEEDED');
      const first = await post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
        orderNo: a.orderNo,
        refundNo: 'SHARED-1',
      });
      assert.equal(first.body.data?.status, 'REFUNDED');
      const reused = await post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
        orderNo: b.orderNo,
        refundNo: 'SHARED-1',
      });
      assert.equal(reused.status, 200);
      assert.equal(reused.body.data?.orderNo, a.orderNo);
      assert.equal(
        (await get<Payout>(platform, merchant, '/api/v1/payouts', `orderNo=${b.orderNo}`)).body.data?.status,
        'SUCCEEDED',
      );
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '100.00', reserved: '0.00' });
      // Without a refundNo the platform makes one up; b can still be returned under its own.
      const own = await post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', { orderNo: b.orderNo });
      assert.match(own.body.data?.refundNo ?? '', /^RF[0-9A-Z]{26}$/);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '200.00', reserved: '0.00' });
      // Only SUCCEEDED payouts can be returned.
      const pending = await createPayout(merchant);
      const refused = await post(platform, merchant, '/api/v1/sandbox/payouts/return', { orderNo: pending.orderNo });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.msg, 'INVALID_STATE');
      await assertBooksHealthy(platform);
    });

    it('a late SUCCEEDED after REFUNDED changes nothing: state, refund fields, events and books', async () => {
      const { merchant, payout } = await succeededPayout();
      const returned = await post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
        orderNo: payout.orderNo,
      });
      const row = await platform.services.payouts.row(
        (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint,
        { orderNo: payout.orderNo },
      );
      const events = await eventsOf(platform, payout.orderNo);
      const transactions = await count(platform, 'ledger_transactions');
      const balance = await balanceOf(platform, merchant);

      const late = await simulate(merchant, payout.orderNo, 'SUCCEEDED');
      assert.equal(late.status, 200, 'documented: 200 with the REFUNDED order');
      assert.deepEqual(late.body.data, returned.body.data);
      assert.equal((await simulate(merchant, payout.orderNo, 'PROCESSING')).body.msg, 'INVALID_STATE');
      assert.equal((await simulate(merchant, payout.orderNo, 'FAILED')).body.msg, 'INVALID_STATE');

      const rowAfter = await platform.services.payouts.row(row.merchant_id, { orderNo: payout.orderNo });
      assert.deepEqual(rowAfter, row);
      assert.deepEqual(await eventsOf(platform, payout.orderNo), events);
      assert.equal(await count(platform, 'ledger_transactions'), transactions);
      assert.deepEqual(await balanceOf(platform, merchant), balance);
    });

    it('50 concurrent payouts against a balance that covers 10: 10 PENDING, 40 INSUFFICIENT_BALANCE', async () => {
      const merchant = await fundedMerchant('1030.00');
      const results = await Promise.all(
        Array.from({ length: 50 }, () => post<Payout>(platform, merchant, '/api/v1/payouts', payoutInput())),
      );
      const outcomes = results.map((r) => `${r.status} ${r.body.msg}`);
      assert.equal(outcomes.filter((o) => o === '200 SUCCESS').length, 10, outcomes.join(', '));
      assert.equal(outcomes.filter((o) => o === '409 INSUFFICIENT_BALANCE').length, 40, outcomes.join(', '));
      assert.ok(results.every((r) => r.status !== 200 || r.body.data?.status === 'PENDING'));
      assert.deepEqual(await balanceOf(platform, merchant), {
        currency: 'BRL',
        available: '0.00',
        reserved: '1030.00',
      });
      const listed = await get<{ items: Payout[] }>(platform, merchant, '/api/v1/payouts/list', 'pageSize=100');
      assert.equal(listed.body.data?.items.length, 10);
      await assertBooksHealthy(platform);
    });

    it('20 concurrent returns of one payout: one refund posting, one REFUNDED event', async () => {
      const { merchant, payout } = await succeededPayout();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
            orderNo: payout.orderNo,
            ...(i % 2 === 0 ? { refundNo: `CONC-${i}` } : {}),
          }),
        ),
      );
      assert.ok(
        results.every((r) => r.status === 200),
        JSON.stringify(results.find((r) => r.status !== 200)?.body),
      );
      assert.equal(new Set(results.map((r) => r.body.data?.refundNo)).size, 1);
      assert.equal(new Set(results.map((r) => r.body.data?.refundTime)).size, 1);
      assert.equal((await postingsOf(platform, payout.orderNo)).filter((p) => p.kind === 'refund').length, 1);
      assert.deepEqual(
        (await eventsOf(platform, payout.orderNo)).map((e) => e.status),
        ['SUCCEEDED', 'REFUNDED'],
      );
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '100.00', reserved: '0.00' });
      await assertBooksHealthy(platform);
    });

    it('concurrent returns of 8 payouts under one refundNo: exactly one is refunded, the rest credit nothing', async () => {
      const merchant = await fundedMerchant('824.00');
      const orders = await Promise.all(Array.from({ length: 8 }, () => createPayout(merchant)));
      for (const order of orders) await simulate(merchant, order.orderNo, 'SUCCEEDED');
      const results = await Promise.all(
        orders.map((order) =>
          post<Payout>(platform, merchant, '/api/v1/sandbox/payouts/return', {
            orderNo: order.orderNo,
            refundNo: 'ONE-REFUND',
          }),
        ),
      );
      assert.ok(
        results.every((r) => r.status === 200),
        JSON.stringify(results.find((r) => r.status !== 200)?.body),
      );
      assert.equal(new Set(results.map((r) => r.body.data?.orderNo)).size, 1, 'all answer with the refunded order');
      const statuses = await Promise.all(
        orders.map(
          async (o) =>
            (await get<Payout>(platform, merchant, '/api/v1/payouts', `orderNo=${o.orderNo}`)).body.data?.status,
        ),
      );
      assert.deepEqual(statuses.filter((s) => s === 'REFUNDED').length, 1);
      assert.deepEqual(await balanceOf(platform, merchant), { currency: 'BRL', available: '100.00', reserved: '0.00' });
      await assertBooksHealthy(platform);
    });

    it('concurrent pay-ins, settlements, releases and returns of several merchants share the platform accounts without deadlock', async () => {
      const merchants = await Promise.all([1, 2, 3].map(() => fundedMerchant('1030.00')));
      const payouts = await Promise.all(
        merchants.flatMap((m) => Array.from({ length: 6 }, () => createPayout(m).then((p) => ({ m, p })))),
      );
      const results = await Promise.all([
        ...merchants.flatMap((m) => Array.from({ length: 4 }, () => fund(platform, m, '10.00'))),
        ...payouts.map(({ m, p }, i) =>
          simulate(m, p.orderNo, i % 3 === 0 ? 'FAILED' : 'SUCCEEDED').then(async (r) => {
            assert.equal(r.status, 200, JSON.stringify(r.body));
            if (i % 3 === 1) {
              const back = await post(platform, m, '/api/v1/sandbox/payouts/return', { orderNo: p.orderNo });
              assert.equal(back.status, 200, JSON.stringify(back.body));
            }
          }),
        ),
      ]);
      assert.equal(results.length, 30);
      // Each merchant: 1030 + 40 in; 6 payouts of 103: 2 failed (released), 2 returned (+100 each), 2 settled.
      for (const m of merchants) {
        assert.deepEqual(await balanceOf(platform, m), {
          currency: 'BRL',
          available: (1070 - 6 * 103 + 2 * 103 + 2 * 100).toFixed(2),
          reserved: '0.00',
        });
      }
      await assertBooksHealthy(platform);
    });

    it('lists newest first with status filter and cursor paging; unknown orders are ORDER_NOT_FOUND', async () => {
      const merchant = await fundedMerchant('1000.00');
      const orders: Payout[] = [];
      for (let i = 0; i < 5; i++) orders.push(await createPayout(merchant, { amount: '10.00' }));
      await simulate(merchant, orders[2]?.orderNo as string, 'FAILED');
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof get<{ items: Payout[]; nextCursor: string | null }>>> = await get(
          platform,
          merchant,
          '/api/v1/payouts/list',
          `pageSize=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        seen.push(...(page.body.data?.items ?? []).map((p) => p.orderNo));
        cursor = page.body.data?.nextCursor ?? null;
      } while (cursor);
      assert.deepEqual(seen, orders.map((o) => o.orderNo).reverse());
      const failed = await get<{ items: Payout[] }>(platform, merchant, '/api/v1/payouts/list', 'status=FAILED');
      assert.deepEqual(
        failed.body.data?.items.map((p) => p.orderNo),
        [orders[2]?.orderNo],
      );
      assert.equal((await get(platform, merchant, '/api/v1/payouts/list', 'status=CANCELED')).status, 400);
      const missing = await get(platform, merchant, '/api/v1/payouts', 'orderNo=W202601010000000001');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.msg, 'ORDER_NOT_FOUND');
      const byMerchantNo = await get<Payout>(
        platform,
        merchant,
        '/api/v1/payouts',
        `merchantOrderNo=${orders[0]?.merchantOrderNo}`,
      );
      assert.equal(byMerchantNo.body.data?.orderNo, orders[0]?.orderNo);
    });
  });
}
