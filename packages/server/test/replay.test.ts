import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '../src/errors.js';
import { NonceRefused } from '../src/db/request-nonce.js';
import {
  buildRead,
  buildWrite,
  count,
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { fund, type Payout, payoutInput, SIMPLE_FEES } from './money-harness.js';

/**
 * A signed request sent again with its nonce (a replay) changes nothing and answers 401, whether
 * the nonce is recorded by the write's own statement (creates), its transaction (payout creates,
 * cancels, confirms) or in the same flight as a read; a request refused for its business still
 * spends its nonce; a transaction that fails for anything else records neither.
 */
const UNAUTHORIZED = { msg: 'UNAUTHORIZED' };

/** The tables a write of these routes touches. */
const TABLES = ['payments', 'payouts', 'ledger_transactions', 'ledger_entries', 'events', 'request_nonces'] as const;

interface Sent {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly text: string;
}

async function send(url: string, init: RequestInit): Promise<Sent> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

for (const database of databases()) {
  describe(`replayed requests (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;

    before(async () => {
      platform = await startTestPlatform({ database, env: { PAYGATE_FEES: SIMPLE_FEES } });
      merchant = await createMerchant(platform);
    });
    after(() => platform.close());

    const snapshot = async () => Promise.all(TABLES.map((table) => count(platform, table)));

    /** One signed write, to be sent as often as a test likes (the same bytes, the same nonce). */
    const write = (path: string, payload: unknown, by = merchant) => {
      const signed = buildWrite(by, `/api/v1${path}`, payload, platform.services.now());
      return () =>
        send(`${platform.url}/api/v1${path}`, {
          method: 'POST',
          headers: signed.headers,
          body: new Uint8Array(signed.body),
        });
    };
    const read = (path: string, query: string, by = merchant) => {
      const signed = buildRead(by, `/api/v1${path}`, query, platform.services.now());
      return () => send(`${platform.url}/api/v1${path}?${query}`, { headers: signed.headers });
    };

    const rejectedReplays = async () =>
      Number(
        (
          await platform.services.db.query<{ n: bigint }>(
            `SELECT count(*)::bigint AS n FROM rejected_requests WHERE step = 'nonce'`,
          )
        ).rows[0]?.n,
      );

    /** Asserts the replay was answered 401 and changed nothing, and was recorded as a refused nonce. */
    const assertRefused = async (replay: () => Promise<Sent>) => {
      const before = await snapshot();
      const recorded = await rejectedReplays();
      const answer = await replay();
      assert.equal(answer.status, 401, answer.text);
      assert.deepEqual(answer.body, UNAUTHORIZED);
      assert.deepEqual(await snapshot(), before, 'a replay changes nothing');
      // The sandbox's record of refused requests is written after the answer.
      for (let i = 0; i < 50 && (await rejectedReplays()) === recorded; i++)
        await new Promise((r) => setTimeout(r, 10));
      assert.equal(await rejectedReplays(), recorded + 1, 'the refusal is recorded with its step');
    };

    const createPayment = async () => {
      const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.data?.orderNo as string;
    };

    it('a replayed create changes nothing and answers 401', async () => {
      const create = write('/payments', paymentInput());
      assert.equal((await create()).status, 200);
      await assertRefused(create);
    });

    it('a replayed cancel changes nothing and answers 401', async () => {
      const orderNo = await createPayment();
      const cancel = write('/payments/cancel', { orderNo });
      const first = await cancel();
      assert.equal(first.status, 200, first.text);
      assert.equal((first.body.data as { status: string }).status, 'CANCELED');
      await assertRefused(cancel);
    });

    it('a replayed payout create and confirm change nothing and answer 401', async () => {
      const funded = await createMerchant(platform);
      await fund(platform, funded, '500.00');
      const create = write('/payouts', payoutInput({ amount: '100.00' }), funded);
      const created = await create();
      assert.equal(created.status, 200, created.text);
      await assertRefused(create);
      const orderNo = (created.body.data as Payout).orderNo;
      const confirm = write('/payouts/confirm', { orderNo }, funded);
      const confirmed = await confirm();
      assert.equal(confirmed.status, 200, confirmed.text);
      assert.equal((confirmed.body.data as Payout).status, 'PROCESSING');
      await assertRefused(confirm);
    });

    it('two copies of one request at once: exactly one proceeds (create, cancel, payout create, confirm)', async () => {
      const funded = await createMerchant(platform);
      await fund(platform, funded, '500.00');
      const orderNo = await createPayment();
      const payoutCreate = write('/payouts', payoutInput({ amount: '10.00' }), funded);
      const cases = [write('/payments', paymentInput()), write('/payments/cancel', { orderNo }), payoutCreate];
      for (const request of cases) {
        const answers = await Promise.all([request(), request(), request()]);
        assert.deepEqual(
          answers.map((answer) => answer.status).sort(),
          [200, 401, 401],
          answers.map((a) => a.text).join('\n'),
        );
      }
      const payout = (await payoutCreate().catch(() => undefined)) ?? undefined;
      assert.equal(payout?.status, 401);
      const payouts = await platform.services.db.query<{ order_no: string }>(
        'SELECT order_no FROM payouts WHERE merchant_id = (SELECT id FROM merchants WHERE access_key = $1)',
        [funded.accessKey],
      );
      assert.equal(payouts.rows.length, 1, 'one payout, not two');
      const confirm = write('/payouts/confirm', { orderNo: payouts.rows[0]?.order_no }, funded);
      const answers = await Promise.all([confirm(), confirm()]);
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401]);
    });

    it('a request refused for its business still spends its nonce: its replay is 401', async () => {
      // DUPLICATE_ORDER: the merchantOrderNo is taken with other fields (the create's own statement).
      const input = paymentInput();
      assert.equal((await write('/payments', input)()).status, 200);
      const duplicate = write('/payments', { ...input, amount: '1.00' });
      const refused = await duplicate();
      assert.equal(refused.body.msg, 'DUPLICATE_ORDER', refused.text);
      await assertRefused(duplicate);

      // VALIDATION_FAILED before any statement: the nonce is recorded alone before the answer.
      const invalid = write('/payments', paymentInput({ amount: '-1' }));
      assert.equal((await invalid()).body.msg, 'VALIDATION_FAILED');
      await assertRefused(invalid);

      // INSUFFICIENT_BALANCE: refused by the database inside the payout's transaction.
      const poor = await createMerchant(platform);
      const payout = write('/payouts', payoutInput({ amount: '100.00' }), poor);
      const short = await payout();
      assert.equal(short.body.msg, 'INSUFFICIENT_BALANCE', short.text);
      await assertRefused(payout);

      // INVALID_STATE inside the cancel's transaction (a payment that succeeded cannot be canceled).
      const orderNo = await createPayment();
      assert.equal(
        (await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'SUCCEEDED' })).status,
        200,
      );
      const cancel = write('/payments/cancel', { orderNo });
      assert.equal((await cancel()).body.msg, 'INVALID_STATE');
      await assertRefused(cancel);

      // ORDER_NOT_FOUND on a confirm.
      const confirm = write('/payouts/confirm', { orderNo: 'W202601010000000000' });
      assert.equal((await confirm()).body.msg, 'ORDER_NOT_FOUND');
      await assertRefused(confirm);
    });

    it('a replayed read answers 401 and none of its rows', async () => {
      const orderNo = await createPayment();
      const lookup = read('/payments', `orderNo=${orderNo}`);
      const first = await lookup();
      assert.equal(first.status, 200);
      assert.equal((first.body.data as { orderNo: string }).orderNo, orderNo);
      const replay = await lookup();
      assert.equal(replay.status, 401);
      assert.equal(replay.text, JSON.stringify(UNAUTHORIZED), 'nothing of the row');
      for (const [path, query] of [
        ['/payments/list', 'pageSize=5'],
        ['/payouts', 'orderNo=W202601010000000000'],
        ['/balances', 'currency=BRL'],
      ] as const) {
        const request = read(path, query);
        assert.notEqual((await request()).status, 401);
        const again = await request();
        assert.equal(again.status, 401, `${path}: ${again.text}`);
        assert.equal(again.text, JSON.stringify(UNAUTHORIZED));
      }
      const copies = read('/payments', `orderNo=${orderNo}`);
      const answers = await Promise.all(Array.from({ length: 10 }, () => copies()));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, ...Array(9).fill(401)]);
      for (const answer of answers.filter((a) => a.status === 401)) assert.equal(answer.text, '{"msg":"UNAUTHORIZED"}');
    });

    describe('the transaction that records the nonce', () => {
      const pendingNonce = () =>
        platform.services.nonces.pending(1n, randomUUID(), Math.floor(platform.services.now() / 1000) + 300);
      const recorded = async (nonce: string) =>
        (await platform.services.db.query('SELECT 1 FROM request_nonces WHERE nonce = $1', [nonce])).rows.length;
      const marker = () => `replay-test-${randomUUID()}`;
      const markers = async (name: string) =>
        (await platform.services.db.query('SELECT 1 FROM rejected_requests WHERE reason = $1', [name])).rows.length;
      const insertMarker = (tx: { query: (sql: string, params: unknown[]) => Promise<unknown> }, name: string) =>
        tx.query(
          `INSERT INTO rejected_requests (method, path, step, reason, request_id, created_at)
           VALUES ('POST', '/test', 'test', $1, 'test', now())`,
          [name],
        );

      it('a database error mid-transaction leaves neither the nonce nor the business rows', async () => {
        const nonce = pendingNonce();
        const name = marker();
        await assert.rejects(
          platform.services.db.transaction(
            async (tx) => {
              await insertMarker(tx, name);
              await tx.query('SELECT 1 / 0');
            },
            { nonce },
          ),
          /division by zero/,
        );
        assert.equal(await recorded(nonce.nonce), 0);
        assert.equal(await markers(name), 0);
        assert.equal(nonce.pending, true, 'nothing of the request happened: its nonce is still unspent');
        // The same request may then go through once.
        await platform.services.db.transaction(async (tx) => insertMarker(tx, name), { nonce });
        assert.equal(await recorded(nonce.nonce), 1);
        assert.equal(await markers(name), 1);
      });

      it('a business refusal rolls the business back and commits the nonce', async () => {
        const nonce = pendingNonce();
        const name = marker();
        await assert.rejects(
          platform.services.db.transaction(
            async (tx) => {
              await insertMarker(tx, name);
              throw new DomainError('INVALID_STATE', 'refused');
            },
            { nonce },
          ),
          DomainError,
        );
        assert.equal(await recorded(nonce.nonce), 1);
        assert.equal(await markers(name), 0);
        assert.equal(nonce.pending, false);
      });

      it('a nonce used before ends the transaction before its first business statement', async () => {
        const first = pendingNonce();
        await platform.services.db.transaction(async () => undefined, { nonce: first });
        const again = platform.services.nonces.pending(
          1n,
          first.nonce,
          Math.floor(platform.services.now() / 1000) + 300,
        );
        let ran = false;
        await assert.rejects(
          platform.services.db.transaction(
            async () => {
              ran = true;
            },
            { nonce: again },
          ),
          NonceRefused,
        );
        assert.equal(ran, false);
        assert.equal(again.refused, true);
      });
    });
  });
}
