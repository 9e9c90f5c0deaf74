/**
 * Strict, helpful business input (issue 28): a member an operation does not define is refused
 * with 400 VALIDATION_FAILED naming each such member (a near miss gets its right spelling), every
 * field error is a sentence naming the field and what it takes, and nothing is written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  count,
  createMerchant,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { payoutInput } from './money-harness.js';

describe('strict, helpful business input', () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;

  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform);
  });
  after(() => platform.close());

  const refused = async (path: string, payload: unknown) => {
    const answer = await post(platform, merchant, path, payload);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.msg, 'VALIDATION_FAILED');
    return answer.body.errors ?? [];
  };

  it('refuses a misspelt member, naming it and the member meant, and creates nothing', async () => {
    const before = await count(platform, 'payments');
    const errors = await refused('/api/v1/payments', paymentInput({ returnURL: 'https://shop.example/thanks' }));
    assert.deepEqual(errors, [
      { field: 'returnURL', message: 'returnURL is not a member of this request; did you mean returnUrl?' },
    ]);
    assert.equal(await count(platform, 'payments'), before);
  });

  it('names each unknown member, nested ones by their path, with the members allowed', async () => {
    const errors = await refused(
      '/api/v1/payouts',
      payoutInput({ iban: 'DE00', payee: { name: 'Ana', accountNumber: '0001', swift: 'X' } }),
    );
    assert.deepEqual(errors, [
      {
        field: 'payee.swift',
        message:
          'payee.swift is not a member of this request; the members are name, accountNumber, bankCode, documentNumber',
      },
      {
        field: 'iban',
        message:
          'iban is not a member of this request; the members are merchantOrderNo, currency, amount, webhookUrl, attach, payee',
      },
    ]);
    const reference = await refused('/api/v1/payments/cancel', { orderNo: 'P000000000000000001', reason: 'x' });
    assert.deepEqual(
      reference.map((error) => error.field),
      ['reason'],
    );
  });

  it('says currency codes are upper case, and what a missing or mistyped field takes', async () => {
    assert.deepEqual(await refused('/api/v1/payments', paymentInput({ currency: 'brl' })), [
      { field: 'currency', message: 'currency codes are upper case: BRL' },
    ]);
    assert.deepEqual(await refused('/api/v1/payments', paymentInput({ currency: 'XYZ' })), [
      { field: 'currency', message: 'currency must be one of BRL, MXN, USD, EUR' },
    ]);
    const { merchantOrderNo: _omitted, ...withoutNumber } = paymentInput();
    assert.deepEqual(await refused('/api/v1/payments', { ...withoutNumber, amount: 10 }), [
      { field: 'merchantOrderNo', message: 'merchantOrderNo is required: a string' },
      { field: 'amount', message: 'amount must be a string, not a number' },
    ]);
  });

  it('words every field error as a sentence that starts with its field', async () => {
    const bad = [
      paymentInput({ amount: '-1' }),
      paymentInput({ attach: 'x'.repeat(2000) }),
      paymentInput({ webhookUrl: 'ftp://shop.example/hook' }),
      paymentInput({ paymentMethod: { code: 'pix' } }),
      paymentInput({ merchantOrderNo: '' }),
    ];
    for (const payload of bad) {
      const errors = await refused('/api/v1/payments', payload);
      assert.ok(errors.length > 0);
      for (const error of errors) {
        assert.ok(error.message.startsWith(`${error.field} `), JSON.stringify(error));
        assert.doesNotMatch(error.message, /Invalid input|expected .*, received/);
      }
    }
  });
});
