import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EpcQrError, epcQrPayload } from '../src/index.js';

describe('the EPC QR code payload (EPC069-12)', () => {
  test("the guidelines' example: the Belgian Red Cross, 1 euro, purpose CHAR, a text and information", () => {
    assert.equal(
      epcQrPayload({
        version: '001',
        beneficiary: { name: 'Red Cross', iban: 'BE72000000001616', bic: 'BPOTBEB1' },
        amount: '1',
        purpose: 'CHAR',
        text: 'Urgency fund',
        information: 'Sample EPC QR code',
      }),
      [
        'BCD',
        '001',
        '1',
        'SCT',
        'BPOTBEB1',
        'Red Cross',
        'BE72000000001616',
        'EUR1',
        'CHAR',
        '',
        'Urgency fund',
        'Sample EPC QR code',
      ].join('\n'),
    );
  });

  test('version 002 with a structured reference: no BIC needed, trailing empty elements left out, no final line feed', () => {
    const payload = epcQrPayload({
      beneficiary: { name: 'Paygate Payouts', iban: 'de75 5121 0800 1245 1261 99' },
      amount: '10.00',
      reference: 'RF18 5390 0754 7034',
    });
    assert.equal(
      payload,
      [
        'BCD',
        '002',
        '1',
        'SCT',
        '',
        'Paygate Payouts',
        'DE75512108001245126199',
        'EUR10.00',
        '',
        'RF18539007547034',
      ].join('\n'),
    );
    assert.ok(!payload.endsWith('\n'));
  });

  test('refuses what a banking app would refuse', () => {
    const base = { beneficiary: { name: 'Paygate', iban: 'DE75512108001245126199' } };
    assert.throws(() => epcQrPayload({ ...base, version: '001' }), /needs the BIC/);
    assert.throws(() => epcQrPayload({ ...base, amount: '0.00' }), EpcQrError);
    assert.throws(() => epcQrPayload({ ...base, amount: '1000000000.00' }), EpcQrError);
    assert.throws(() => epcQrPayload({ ...base, amount: '1.234' }), EpcQrError);
    assert.throws(() => epcQrPayload({ ...base, reference: 'RF19539007547034' }), /creditor reference/);
    assert.throws(() => epcQrPayload({ ...base, reference: 'RF18539007547034', text: 'x' }), /not both/);
    assert.throws(() => epcQrPayload({ beneficiary: { name: 'x'.repeat(71), iban: base.beneficiary.iban } }), /70/);
    assert.throws(() => epcQrPayload({ beneficiary: { name: 'Paygate', iban: 'DE00512108001245126199' } }), /IBAN/);
    assert.throws(() => epcQrPayload({ ...base, text: 'a\nb' }), /one line/);
  });
});
