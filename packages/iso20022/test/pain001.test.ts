import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  type CreditTransfer,
  type Pain001,
  Pain001Error,
  readPain001,
  validateXml,
  writePain001,
} from '../src/index.js';

const IBANS = [
  'FR1420041010050500013M02606',
  'NL91ABNA0417164300',
  'BE68539007547034',
  'AT611904300234573201',
  'ES9121000418450200051332',
  'IT60X0542811101000000123456',
  'GB82WEST12345698765432',
];
const BICS = ['DEUTDEFF500', 'ABNANL2A', undefined];
const NAMES = ['Zoë Ångström & Søn <GmbH>', 'Müller-Lüdenscheidt', 'Łódź Þór', 'O’Brien', 'Ann', 'Straße 5 #2'];

function transfer(index: number, amount = '12.30'): CreditTransfer {
  return {
    endToEndId: `W${String(index).padStart(10, '0')}`,
    amount,
    creditor: {
      name: NAMES[index % NAMES.length] ?? 'x',
      iban: IBANS[index % IBANS.length] ?? '',
      bic: BICS[index % BICS.length],
    },
  };
}

function file(transactions: readonly CreditTransfer[], overrides: Partial<Pain001> = {}): Pain001 {
  return {
    msgId: 'PG-20261127-0001',
    createdAt: new Date('2026-11-27T21:30:15.250Z'),
    requestedExecutionDate: '2026-11-30',
    paymentInformationId: 'PG-20261127-0001-1',
    debtor: { name: 'Paygate Payouts GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' },
    transactions,
    ...overrides,
  };
}

async function assertValid(xml: string): Promise<void> {
  const result = await validateXml(xml, 'pain.001.001.09');
  assert.deepEqual(result, { valid: true });
}

describe('writePain001', () => {
  test('many payouts in one file, names with marks and symbols, 11- and 8-character BICs and none: valid', async () => {
    const transactions = Array.from({ length: 30 }, (_, index) => transfer(index, `${index + 1}.0${index % 10}`));
    const xml = writePain001(file(transactions));
    await assertValid(xml);
    assert.equal(xml.match(/<CdtTrfTxInf>/g)?.length, 30);
    assert.match(xml, /<Nm>Zoe Angstrom \+ Son GmbH<\/Nm>/);
    assert.match(xml, /<Nm>Muller-Ludenscheidt<\/Nm>/);
    assert.match(xml, /<BICFI>DEUTDEFF500<\/BICFI>/);
    assert.match(xml, /<BICFI>ABNANL2A<\/BICFI>/);
    // A creditor without a BIC has no CdtrAgt at all.
    const third = xml.split('<CdtTrfTxInf>')[3] ?? '';
    assert.doesNotMatch(third, /CdtrAgt/);
  });

  test('writes a small file byte for byte as the golden copy in test/fixtures', () => {
    const golden = readFileSync(new URL('./fixtures/pain.001.001.09-two-payouts.xml', import.meta.url), 'utf8');
    const xml = writePain001({
      msgId: 'PG-20261127-0001',
      createdAt: new Date('2026-11-27T21:30:15.250Z'),
      requestedExecutionDate: '2026-11-30',
      paymentInformationId: 'PG-20261127-0001',
      debtor: { name: 'Paygate Payouts GmbH', iban: 'DE89370400440532013000' },
      transactions: [
        {
          endToEndId: 'W0000000001',
          amount: '0.10',
          creditor: {
            name: 'Zoë Ångström & Søn <GmbH>',
            iban: 'FR14 2004 1010 0505 0001 3M02 606',
            bic: 'DEUTDEFF500',
          },
        },
        {
          endToEndId: 'W0000000002',
          amount: '1234.5',
          creditor: { name: 'Ann', iban: 'NL91ABNA0417164300' },
          remittanceInformation: 'Payout W0000000002',
        },
      ],
    });
    assert.equal(xml, golden);
  });

  test('the golden copy is valid against the EPC XSD', async () => {
    await assertValid(readFileSync(new URL('./fixtures/pain.001.001.09-two-payouts.xml', import.meta.url), 'utf8'));
  });

  test('writes the fixed members of EPC132-08', () => {
    const xml = writePain001(file([transfer(0)]));
    assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>/);
    assert.match(xml, /<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">/);
    assert.match(xml, /<PmtMtd>TRF<\/PmtMtd>/);
    assert.match(xml, /<SvcLvl>\s*<Cd>SEPA<\/Cd>\s*<\/SvcLvl>/);
    assert.match(xml, /<ChrgBr>SLEV<\/ChrgBr>/);
    assert.match(xml, /<InstdAmt Ccy="EUR">12.30<\/InstdAmt>/);
    assert.match(xml, /<EndToEndId>W0000000000<\/EndToEndId>/);
    assert.match(xml, /<CreDtTm>2026-11-27T21:30:15Z<\/CreDtTm>/);
    assert.match(xml, /<ReqdExctnDt>\s*<Dt>2026-11-30<\/Dt>\s*<\/ReqdExctnDt>/);
    assert.match(xml, /<DbtrAcct>\s*<Id>\s*<IBAN>DE89370400440532013000<\/IBAN>/);
    assert.match(xml, /<DbtrAgt>\s*<FinInstnId>\s*<BICFI>COBADEFFXXX<\/BICFI>/);
  });

  test('a debtor without a BIC gets DbtrAgt/FinInstnId/Othr/Id NOTPROVIDED, valid', async () => {
    const xml = writePain001(file([transfer(2)], { debtor: { name: 'Paygate', iban: 'DE89370400440532013000' } }));
    assert.match(xml, /<DbtrAgt>\s*<FinInstnId>\s*<Othr>\s*<Id>NOTPROVIDED<\/Id>/);
    await assertValid(xml);
  });

  test('NbOfTxs and CtrlSum are exact in GrpHdr and PmtInf: 0.10 + 0.20 is 0.30', async () => {
    const xml = writePain001(file([transfer(0, '0.10'), transfer(1, '0.20')]));
    assert.equal(xml.match(/<CtrlSum>0.30<\/CtrlSum>/g)?.length, 2);
    assert.equal(xml.match(/<NbOfTxs>2<\/NbOfTxs>/g)?.length, 2);
    await assertValid(xml);
  });

  test('BtchBookg is written only when asked for, and is valid', async () => {
    assert.doesNotMatch(writePain001(file([transfer(0)])), /BtchBookg/);
    const xml = writePain001(file([transfer(0)], { batchBooking: false }));
    assert.match(xml, /<PmtMtd>TRF<\/PmtMtd>\s*<BtchBookg>false<\/BtchBookg>/);
    await assertValid(xml);
    const read = readPain001(xml);
    assert.equal(read.ok && read.file.batchBooking, false);
  });

  test('amounts are written with two decimals', () => {
    const xml = writePain001(file([transfer(0, '5'), transfer(1, '0.5'), transfer(2, '999999999.99')]));
    assert.match(xml, />5.00</);
    assert.match(xml, />0.50</);
    assert.match(xml, /<CtrlSum>1000000005.49<\/CtrlSum>/);
  });

  test('10,000 transactions: CtrlSum exact, valid against the XSD; the time to write and validate is reported', async (t) => {
    // 10,000 × 0.10 and 10,000 × 0.01 cents: a float sum would drift; integer cents cannot.
    const transactions = Array.from({ length: 10_000 }, (_, index) =>
      transfer(index, index % 2 === 0 ? '0.10' : `${(index % 1000) + 1}.01`),
    );
    let expectedCents = 0;
    for (const tx of transactions) expectedCents += Math.round(Number(tx.amount) * 100);
    const started = performance.now();
    const xml = writePain001(file(transactions));
    const written = performance.now();
    const result = await validateXml(xml, 'pain.001.001.09');
    const validated = performance.now();
    assert.deepEqual(result, { valid: true });
    const expected = `${Math.floor(expectedCents / 100)}.${String(expectedCents % 100).padStart(2, '0')}`;
    assert.equal(xml.match(new RegExp(`<CtrlSum>${expected.replace('.', '\\.')}</CtrlSum>`, 'g'))?.length, 2);
    assert.equal(xml.match(/<NbOfTxs>10000<\/NbOfTxs>/g)?.length, 2);
    t.diagnostic(
      `10,000 transactions: ${(xml.length / 1e6).toFixed(1)} MB, written in ${Math.round(written - started)} ms, ` +
        `validated in ${Math.round(validated - written)} ms`,
    );
    const read = readPain001(xml);
    assert.equal(read.ok, true);
  });

  test('names longer than 70 are cut, and a remittance text is folded into the set', async () => {
    const long = { ...transfer(0), creditor: { name: 'Ø'.repeat(100), iban: 'NL91ABNA0417164300' } };
    const withText = { ...transfer(1), remittanceInformation: 'Auszahlung für Bestellung №42 – danke!' };
    const xml = writePain001(file([long, withText]));
    assert.match(xml, new RegExp(`<Nm>${'O'.repeat(70)}</Nm>`));
    assert.match(xml, /<Ustrd>Auszahlung fur Bestellung No42 - danke<\/Ustrd>/);
    await assertValid(xml);
  });

  test('refuses input that cannot make a valid file', () => {
    const refusals: [string, Pain001][] = [
      ['an empty batch', file([])],
      ['amount 0', file([transfer(0, '0')])],
      ['amount 0.00', file([transfer(0, '0.00')])],
      ['three decimals', file([transfer(0, '1.001')])],
      ['a negative amount', file([transfer(0, '-1.00')])],
      ['a float-looking amount', file([transfer(0, '1e2')])],
      ['an amount over the SCT maximum', file([transfer(0, '1000000000.00')])],
      [
        'a creditor IBAN with wrong check digits',
        file([{ ...transfer(0), creditor: { name: 'A', iban: 'DE88370400440532013000' } }]),
      ],
      [
        'a lower-case BIC',
        file([{ ...transfer(0), creditor: { name: 'A', iban: 'NL91ABNA0417164300', bic: 'abnanl2a' } }]),
      ],
      [
        'a name with no Latin character',
        file([{ ...transfer(0), creditor: { name: '東京', iban: 'NL91ABNA0417164300' } }]),
      ],
      ['a duplicate EndToEndId', file([transfer(0), transfer(0)])],
      ['an EndToEndId over 35', file([{ ...transfer(0), endToEndId: 'W'.repeat(36) }])],
      ['an EndToEndId with a mark', file([{ ...transfer(0), endToEndId: 'Wé1' }])],
      ['a MsgId with //', file([transfer(0)], { msgId: 'A//B' })],
      ['a bad execution date', file([transfer(0)], { requestedExecutionDate: '2026-02-30' })],
      ['an invalid createdAt', file([transfer(0)], { createdAt: new Date('nope') })],
      ['a bad debtor IBAN', file([transfer(0)], { debtor: { name: 'P', iban: 'DE8937040044053201300' } })],
      ['a remittance text over 140', file([{ ...transfer(0), remittanceInformation: 'x'.repeat(141) }])],
    ];
    for (const [what, input] of refusals) {
      assert.throws(() => writePain001(input), Pain001Error, what);
    }
  });
});

describe('readPain001', () => {
  test('reads back what writePain001 wrote', () => {
    const input = file([
      transfer(0, '0.10'),
      { ...transfer(1, '0.2'), remittanceInformation: 'Payout 1' },
      transfer(2),
    ]);
    const read = readPain001(writePain001(input));
    assert.ok(read.ok, read.ok ? '' : read.reason);
    assert.deepEqual(read.file, {
      msgId: input.msgId,
      createdAt: new Date('2026-11-27T21:30:15Z'),
      requestedExecutionDate: '2026-11-30',
      paymentInformationId: input.paymentInformationId,
      debtor: { name: 'Paygate Payouts GmbH', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
      transactions: [
        {
          endToEndId: 'W0000000000',
          amount: '0.10',
          creditor: { name: 'Zoe Angstrom + Son GmbH', iban: 'FR1420041010050500013M02606', bic: 'DEUTDEFF500' },
          remittanceInformation: undefined,
        },
        {
          endToEndId: 'W0000000001',
          amount: '0.20',
          creditor: { name: 'Muller-Ludenscheidt', iban: 'NL91ABNA0417164300', bic: 'ABNANL2A' },
          remittanceInformation: 'Payout 1',
        },
        {
          endToEndId: 'W0000000002',
          amount: '12.30',
          creditor: { name: 'Lodz THor', iban: 'BE68539007547034', bic: undefined },
          remittanceInformation: undefined,
        },
      ],
      batchBooking: undefined,
      instant: undefined,
    });
  });

  test('refuses a wrong CtrlSum or NbOfTxs, another currency, another namespace and garbage', () => {
    const xml = writePain001(file([transfer(0, '0.10'), transfer(1, '0.20')]));
    const cases: [string, string, RegExp][] = [
      ['CtrlSum', xml.replace('<CtrlSum>0.30</CtrlSum>', '<CtrlSum>0.31</CtrlSum>'), /CtrlSum/],
      ['NbOfTxs', xml.replace('<NbOfTxs>2</NbOfTxs>', '<NbOfTxs>3</NbOfTxs>'), /NbOfTxs/],
      ['currency', xml.replace('Ccy="EUR"', 'Ccy="USD"'), /EUR/],
      ['namespace', xml.replace('pain.001.001.09', 'pain.001.001.03'), /namespace/],
      ['name', xml.replace('Zoe Angstrom', 'Zoë Angstrom'), /EPC Latin/],
      ['garbage', 'not xml at all', /./],
      ['truncated', xml.slice(0, xml.length / 2), /malformed/],
    ];
    for (const [what, text, reason] of cases) {
      const read = readPain001(text);
      assert.equal(read.ok, false, what);
      if (!read.ok) assert.match(read.reason, reason, what);
    }
  });

  test('reads bytes as well as text', () => {
    const xml = writePain001(file([transfer(0)]));
    const read = readPain001(new TextEncoder().encode(xml));
    assert.equal(read.ok, true);
  });
});

describe('validateXml', () => {
  test('reports what the EPC XSD refuses, with line numbers', async () => {
    const xml = writePain001(file([transfer(0)])).replace('<ChrgBr>SLEV</ChrgBr>', '<ChrgBr>SHAR</ChrgBr>');
    const result = await validateXml(xml, 'pain.001.001.09');
    assert.equal(result.valid, false);
    if (!result.valid) assert.match(result.errors.join('\n'), /^\d+: .*ChrgBr/m);
  });

  test('a malformed document is invalid, not an exception', async () => {
    const result = await validateXml('<Document', 'pain.001.001.09');
    assert.equal(result.valid, false);
  });

  test('garbage, empty input and a DOCTYPE are invalid, with located messages only', async () => {
    for (const input of ['', 'garbage', new Uint8Array([0xff, 0xfe, 0, 1])]) {
      const result = await validateXml(input, 'pain.001.001.09');
      assert.equal(result.valid, false);
      if (!result.valid) {
        assert.ok(result.errors.length > 0);
        for (const error of result.errors) assert.match(error, /^\d+: \S/);
      }
    }
    const xxe = '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>';
    assert.deepEqual(await validateXml(xxe, 'pain.001.001.09'), {
      valid: false,
      errors: ['a DOCTYPE or entity declaration is refused'],
    });
  });

  test('a document of another schema is invalid', async () => {
    const result = await validateXml(writePain001(file([transfer(0)])), 'camt.054.001.08');
    assert.equal(result.valid, false);
  });
});
