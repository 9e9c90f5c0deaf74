import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Camt053Input,
  CamtError,
  readBankFile,
  readPain001,
  validateXml,
  writeCamt053,
  writeCamt054,
  writePain001,
} from '../src/index.js';

const ACCOUNT = { name: 'Paygate Payouts GmbH', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };

/** A day's statement: a batch booking of a whole file, a single booking, a return and two credits received. */
const STATEMENT: Camt053Input = {
  msgId: 'BANK-STM-0001',
  createdAt: new Date('2026-11-28T22:00:00Z'),
  account: ACCOUNT,
  statementId: 'STM-2026-11-28',
  sequenceNumber: 332,
  from: new Date('2026-11-27T23:00:00Z'),
  to: new Date('2026-11-28T23:00:00Z'),
  balances: [
    { type: 'OPBD', amount: '1000.00', currency: 'EUR', creditDebit: 'CRDT', date: '2026-11-28' },
    { type: 'CLBD', amount: '1018.00', currency: 'EUR', creditDebit: 'CRDT', date: '2026-11-28' },
  ],
  entries: [
    {
      status: 'BOOK',
      creditDebit: 'DBIT',
      amount: '24.60',
      currency: 'EUR',
      bookingDate: '2026-11-28',
      accountServicerRef: 'BOOK-1',
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
      batches: [
        {
          msgId: 'PG01JF0000000000000000000000',
          paymentInformationId: 'PG01JF0000000000000000000000',
          numberOfTransactions: 2,
          totalAmount: '24.60',
          creditDebit: 'DBIT',
        },
      ],
      transactions: [],
    },
    {
      status: 'BOOK',
      creditDebit: 'CRDT',
      amount: '12.30',
      currency: 'EUR',
      bookingDate: '2026-11-28',
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' },
      transactions: [
        { endToEndId: 'W1', accountServicerRef: 'RTN-1', amount: '12.30', currency: 'EUR', returnReason: 'AC04' },
      ],
    },
    {
      status: 'BOOK',
      creditDebit: 'CRDT',
      amount: '30.30',
      currency: 'EUR',
      bookedAt: new Date('2026-11-28T09:15:00Z'),
      accountServicerRef: 'CRD-1',
      bankTransactionCode: { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT' },
      transactions: [
        {
          accountServicerRef: 'CRD-1',
          amount: '30.30',
          debtor: { name: 'Zoë Müller', iban: 'fr14 2004 1010 0505 0001 3m02 606' },
          creditorReferences: ['RF18539007547034'],
        },
      ],
    },
    {
      status: 'BOOK',
      creditDebit: 'CRDT',
      amount: '5.00',
      currency: 'EUR',
      bookingDate: '2026-11-28',
      bankTransactionCode: { domain: 'PMNT', family: 'RCDT', subFamily: 'SALA' },
      transactions: [
        { accountServicerRef: 'CRD-2', unstructuredRemittance: ['Order rf18 5390 0754 7034', 'thank you'] },
      ],
    },
  ],
};

describe('camt.053', () => {
  test('written valid against ISO XSD and read back into the same records as camt.054', async () => {
    const xml = writeCamt053(STATEMENT);
    assert.match(xml, /<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">/);
    assert.deepEqual(await validateXml(xml, 'camt.053.001.08'), { valid: true });
    // The same entries as a notification: the same records once read.
    const notification = writeCamt054({
      msgId: 'N-1',
      createdAt: STATEMENT.createdAt,
      account: ACCOUNT,
      entries: STATEMENT.entries,
    });
    assert.deepEqual(await validateXml(notification, 'camt.054.001.08'), { valid: true });
    const read = readBankFile(xml);
    const readNotification = readBankFile(notification);
    assert.ok(read.ok && read.file.kind === 'camt.053', JSON.stringify(read));
    assert.ok(readNotification.ok && readNotification.file.kind === 'camt.054');
    assert.deepEqual(read.file.entries, readNotification.file.entries);
    assert.equal(read.file.msgId, 'BANK-STM-0001');
    assert.deepEqual(read.file.statements, [
      {
        id: 'STM-2026-11-28',
        sequenceNumber: 332,
        accountIban: ACCOUNT.iban,
        from: STATEMENT.from,
        to: STATEMENT.to,
        balances: STATEMENT.balances,
      },
    ]);
    const [batch, , credit, text] = read.file.entries;
    assert.deepEqual(batch?.batches, [{ ...STATEMENT.entries[0]?.batches?.[0], currency: 'EUR' }]);
    assert.deepEqual(batch?.transactions, []);
    assert.equal(credit?.bookingDate, '2026-11-28');
    assert.deepEqual(credit?.bookedAt, new Date('2026-11-28T09:15:00Z'));
    assert.deepEqual(credit?.transactions[0]?.debtor, { name: 'Zoë Müller', iban: 'FR1420041010050500013M02606' });
    assert.deepEqual(credit?.transactions[0]?.creditorReferences, ['RF18539007547034']);
    assert.deepEqual(text?.transactions[0]?.unstructuredRemittance, ['Order rf18 5390 0754 7034', 'thank you']);
    assert.deepEqual(text?.bankTransactionCode, { domain: 'PMNT', family: 'RCDT', subFamily: 'SALA' });
    assert.match(xml, /<CdtrRefInf>\s*<Tp>\s*<CdOrPrtry>\s*<Cd>SCOR<\/Cd>\s*<\/CdOrPrtry>\s*<Issr>ISO<\/Issr>/);
  });

  test('a statement of 10,000 entries is written and read back', async () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => ({
      status: 'BOOK',
      creditDebit: 'DBIT' as const,
      amount: '10.00',
      currency: 'EUR',
      bookingDate: '2026-11-28',
      accountServicerRef: `B${i}`,
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
      transactions: [{ endToEndId: `W${i}`, accountServicerRef: `B${i}`, amount: '10.00', currency: 'EUR' }],
    }));
    const xml = writeCamt053({ ...STATEMENT, entries });
    assert.deepEqual(await validateXml(xml, 'camt.053.001.08'), { valid: true });
    const read = readBankFile(xml);
    assert.ok(read.ok && read.file.kind === 'camt.053');
    assert.equal(read.file.entries.length, 10_000);
    assert.equal(read.file.entries[9_999]?.transactions[0]?.endToEndId, 'W9999');
  });

  test('writeCamt053 refuses what it cannot write; readBankFile refuses a statement without a balance', () => {
    assert.throws(() => writeCamt053({ ...STATEMENT, balances: [] }), CamtError);
    assert.throws(
      () =>
        writeCamt053({
          ...STATEMENT,
          balances: [{ type: 'OPBD', amount: '-1.00', currency: 'EUR', creditDebit: 'CRDT', date: '2026-11-28' }],
        }),
      /the sign is creditDebit/,
    );
    assert.throws(() => writeCamt053({ ...STATEMENT, from: undefined }), /both from and to/);
    const bad = { ...STATEMENT.entries[0]!, batches: [{ numberOfTransactions: -1 }] };
    assert.throws(() => writeCamt053({ ...STATEMENT, entries: [bad] }), /numberOfTransactions/);
    const noBalance = writeCamt053(STATEMENT).replace(/<Bal>[\s\S]*<\/Bal>\n/, '');
    const refused = readBankFile(noBalance);
    assert.ok(!refused.ok && /Bal is missing/.test(refused.reason), JSON.stringify(refused));
    const badCount = writeCamt053(STATEMENT).replace('<NbOfTxs>2</NbOfTxs>', '<NbOfTxs>two</NbOfTxs>');
    const refusedCount = readBankFile(badCount);
    assert.ok(!refusedCount.ok && /NbOfTxs/.test(refusedCount.reason));
  });
});

describe('pain.001 for SEPA Instant', () => {
  const file = {
    msgId: 'PG-INST-1',
    createdAt: new Date('2026-11-28T10:00:00Z'),
    requestedExecutionDate: '2026-11-28',
    paymentInformationId: 'PG-INST-1',
    debtor: ACCOUNT,
    transactions: [
      { endToEndId: 'W1', amount: '12.30', creditor: { name: 'Ana', iban: 'FR1420041010050500013M02606' } },
    ],
  };

  test('"instant" writes LclInstrm/Cd INST beside SvcLvl/Cd SEPA, valid against the same EPC XSD, and is read back', async () => {
    const xml = writePain001({ ...file, instant: true });
    assert.match(
      xml,
      /<PmtTpInf>\s*<SvcLvl>\s*<Cd>SEPA<\/Cd>\s*<\/SvcLvl>\s*<LclInstrm>\s*<Cd>INST<\/Cd>\s*<\/LclInstrm>\s*<\/PmtTpInf>/,
    );
    assert.deepEqual(await validateXml(xml, 'pain.001.001.09'), { valid: true });
    const read = readPain001(xml);
    assert.ok(read.ok && read.file.instant === true);
    const plain = writePain001(file);
    assert.doesNotMatch(plain, /LclInstrm/);
    const readPlain = readPain001(plain);
    assert.ok(readPlain.ok && readPlain.file.instant === undefined);
  });
});
