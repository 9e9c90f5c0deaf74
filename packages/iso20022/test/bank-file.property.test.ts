import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type BankFile, readBankFile, writeCamt053, writeCamt054, writePain002 } from '../src/index.js';

/** Valid documents to mutate: a status report, a notification with a return, a statement with a batch booking and a credit received. */
const SEEDS = [
  writePain002({
    msgId: 'STS-1',
    createdAt: new Date('2026-11-27T22:00:00Z'),
    originalMsgId: 'PG-1',
    groupStatus: 'PART',
    groupReason: 'NARR',
    transactions: [
      { originalEndToEndId: 'W1', status: 'ACSC' },
      { originalEndToEndId: 'W2', status: 'RJCT', reason: 'AC01' },
    ],
  }),
  writeCamt054({
    msgId: 'NTF-1',
    createdAt: new Date('2026-11-28T08:00:00Z'),
    account: { name: 'Paygate', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
    entries: [
      {
        status: 'BOOK',
        creditDebit: 'CRDT',
        amount: '12.30',
        currency: 'EUR',
        bookingDate: '2026-11-28',
        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' },
        transactions: [
          { endToEndId: 'W1', accountServicerRef: 'R1', amount: '12.30', currency: 'EUR', returnReason: 'AC04' },
        ],
      },
      { status: 'BOOK', creditDebit: 'DBIT', amount: '1.00', currency: 'EUR', transactions: [{ endToEndId: 'W2' }] },
    ],
  }),
  writeCamt053({
    msgId: 'STM-1',
    createdAt: new Date('2026-11-28T23:00:00Z'),
    account: { name: 'Paygate', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
    sequenceNumber: 7,
    from: new Date('2026-11-27T23:00:00Z'),
    to: new Date('2026-11-28T23:00:00Z'),
    balances: [
      { type: 'OPBD', amount: '100.00', currency: 'EUR', creditDebit: 'CRDT', date: '2026-11-28' },
      { type: 'CLBD', amount: '87.70', currency: 'EUR', creditDebit: 'CRDT', date: '2026-11-28' },
    ],
    entries: [
      {
        status: 'BOOK',
        creditDebit: 'DBIT',
        amount: '22.30',
        currency: 'EUR',
        bookingDate: '2026-11-28',
        accountServicerRef: 'B1',
        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
        batches: [
          {
            msgId: 'PG1',
            paymentInformationId: 'PG1',
            numberOfTransactions: 2,
            totalAmount: '22.30',
            creditDebit: 'DBIT',
          },
        ],
        transactions: [],
      },
      {
        status: 'BOOK',
        creditDebit: 'CRDT',
        amount: '10.00',
        currency: 'EUR',
        bookedAt: new Date('2026-11-28T10:00:00Z'),
        accountServicerRef: 'C1',
        bankTransactionCode: { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT' },
        transactions: [
          {
            accountServicerRef: 'C1',
            amount: '10.00',
            debtor: { name: 'Ana Souza', iban: 'FR1420041010050500013M02606' },
            creditorReferences: ['RF18539007547034'],
            unstructuredRemittance: ['order 12', 'thanks'],
          },
        ],
      },
    ],
  }),
];

/** Pieces of XML that make mutations likely to stay close to well-formed. */
const FRAGMENTS = [
  '<',
  '>',
  '</',
  '/>',
  '&',
  '&amp;',
  '&#0;',
  '&#x110000;',
  '&lt;',
  ']]>',
  '<![CDATA[x]]>',
  '<!-- c -->',
  '<!DOCTYPE x>',
  '<!ENTITY e "e">',
  '<?pi x?>',
  '"',
  "'",
  '<MsgId>X</MsgId>',
  '<TxSts>RJCT</TxSts>',
  '<Ntry></Ntry>',
  '<Amt Ccy="EUR">1e9</Amt>',
  '<CdtDbtInd>DBIT</CdtDbtInd>',
  '<Btch><NbOfTxs>x</NbOfTxs></Btch>',
  '<Bal></Bal>',
  '<Ustrd></Ustrd>',
  'camt.053.001.08',
  ' xmlns="urn:x"',
  'pain.002.001.03',
  'camt.054.001.08',
  '\u0000',
  '\uFEFF',
  '\uD800',
  '9'.repeat(40),
];

type Mutation =
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'duplicate'; at: number; length: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'swap'; at: number; other: number; length: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 12, unit: 'binary' })),
  }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('swap' as const),
    at: fc.nat(),
    other: fc.nat(),
    length: fc.integer({ min: 1, max: 30 }),
  }),
);

function apply(text: string, m: Mutation): string {
  const at = text.length === 0 ? 0 : m.at % text.length;
  switch (m.kind) {
    case 'delete':
      return text.slice(0, at) + text.slice(at + m.length);
    case 'insert':
      return text.slice(0, at) + m.text + text.slice(at);
    case 'duplicate':
      return text.slice(0, at + m.length) + text.slice(at, at + m.length) + text.slice(at + m.length);
    case 'truncate':
      return text.slice(0, at);
    case 'swap': {
      const other = text.length === 0 ? 0 : m.other % text.length;
      const [first, second] = at < other ? [at, other] : [other, at];
      if (first + m.length > second) return text;
      const a = text.slice(first, first + m.length);
      const b = text.slice(second, second + m.length);
      return text.slice(0, first) + b + text.slice(first + m.length, second) + a + text.slice(second + b.length);
    }
  }
}

const optionalString = (value: unknown): boolean => value === undefined || (typeof value === 'string' && value !== '');

/** A read file is well-formed: the members the platform relies on are there, typed as declared. */
function assertWellFormed(file: BankFile): void {
  assert.ok(typeof file.msgId === 'string' && file.msgId.length > 0 && file.msgId.length <= 35);
  assert.ok(file.createdAt instanceof Date && !Number.isNaN(file.createdAt.getTime()));
  if (file.kind === 'pain.002') {
    assert.ok(typeof file.originalMsgId === 'string' && file.originalMsgId.length > 0);
    assert.ok(optionalString(file.groupStatus) && optionalString(file.groupReason));
    assert.ok(Array.isArray(file.transactions));
    for (const tx of file.transactions) {
      assert.ok(typeof tx.originalEndToEndId === 'string' && tx.originalEndToEndId.length > 0);
      assert.ok(typeof tx.status === 'string' && tx.status.length > 0 && tx.status.length <= 4);
      assert.ok(optionalString(tx.reason));
    }
  } else {
    assert.ok(file.kind === 'camt.054' || file.kind === 'camt.053');
    if (file.kind === 'camt.053') {
      assert.ok(file.statements.length > 0);
      for (const statement of file.statements) {
        assert.ok(statement.balances.length > 0);
        for (const balance of statement.balances) {
          assert.match(balance.amount, /^\d+(\.\d+)?$/);
          assert.ok(balance.creditDebit === 'CRDT' || balance.creditDebit === 'DBIT');
          assert.match(balance.date, /^\d{4}-\d{2}-\d{2}$/);
        }
      }
    }
    for (const entry of file.entries) {
      for (const batch of entry.batches ?? []) {
        assert.ok(batch.numberOfTransactions === undefined || Number.isSafeInteger(batch.numberOfTransactions));
        assert.ok(batch.totalAmount === undefined || /^\d+(\.\d+)?$/.test(batch.totalAmount));
        assert.ok(optionalString(batch.msgId) && optionalString(batch.paymentInformationId));
      }
      assert.ok(entry.creditDebit === 'CRDT' || entry.creditDebit === 'DBIT');
      assert.match(entry.amount, /^\d+(\.\d+)?$/);
      assert.match(entry.currency, /^[A-Z]{3}$/);
      assert.ok(typeof entry.status === 'string' && entry.status.length > 0);
      assert.ok(entry.bookingDate === undefined || /^\d{4}-\d{2}-\d{2}$/.test(entry.bookingDate));
      for (const tx of entry.transactions) {
        assert.ok(optionalString(tx.endToEndId) && optionalString(tx.accountServicerRef));
        assert.ok(tx.amount === undefined || /^\d+(\.\d+)?$/.test(tx.amount));
        assert.ok(optionalString(tx.returnReason));
        for (const text of [...(tx.unstructuredRemittance ?? []), ...(tx.creditorReferences ?? [])]) {
          assert.ok(typeof text === 'string' && text.length > 0);
        }
        assert.ok(optionalString(tx.debtor?.name) && optionalString(tx.debtor?.iban));
      }
    }
  }
}

/** readBankFile never throws; it refuses with one non-empty line or returns a well-formed file. */
function check(input: string | Uint8Array): void {
  const read = readBankFile(input);
  if (read.ok) assertWellFormed(read.file);
  else {
    assert.ok(typeof read.reason === 'string' && read.reason.length > 0);
    assert.doesNotMatch(read.reason, /[\r\n]/);
  }
}

describe('readBankFile, property', () => {
  test('random strings and bytes: never throws, refuses with one line', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-ascii' })), check), {
      numRuns: 1500,
    });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), check), { numRuns: 500 });
  });

  test('random XML-ish strings: never throws', () => {
    const xmlish = fc
      .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 6 })), { maxLength: 40 })
      .map((parts) => parts.join(''));
    fc.assert(fc.property(xmlish, check), { numRuns: 1500 });
  });

  test('mutated valid documents: never throws, and reads whole or refuses whole', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEEDS), fc.array(mutation, { minLength: 1, maxLength: 4 }), (seed, mutations) => {
        check(mutations.reduce(apply, seed));
      }),
      { numRuns: 3000 },
    );
  });

  test('mutated valid documents as bytes, one byte flipped: never throws', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEEDS), fc.nat(), fc.integer({ min: 1, max: 255 }), (seed, at, flip) => {
        const bytes = new TextEncoder().encode(seed);
        const index = at % bytes.length;
        bytes[index] = (bytes[index] ?? 0) ^ flip;
        check(bytes);
      }),
      { numRuns: 1500 },
    );
  });
});
