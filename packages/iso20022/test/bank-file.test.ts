import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Camt054,
  Camt054Error,
  type Pain002,
  Pain002Error,
  readBankFile,
  validateXml,
  writeCamt054,
  writePain002,
} from '../src/index.js';

const ACCOUNT = { name: 'Paygate Payouts GmbH', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };

const REPORT: Omit<Pain002, 'kind'> = {
  msgId: 'BANK-STS-0001',
  createdAt: new Date('2026-11-27T22:00:00Z'),
  originalMsgId: 'PG-20261127-0001',
  groupStatus: 'PART',
  transactions: [
    { originalEndToEndId: 'W0000000001', status: 'ACSC' },
    { originalEndToEndId: 'W0000000002', status: 'RJCT', reason: 'AC01' },
    { originalEndToEndId: 'W0000000003', status: 'ACCP' },
  ],
  paymentInformation: [{ originalPaymentInformationId: 'PG-20261127-0001-1', status: 'PART' }],
};

const RETURN: Omit<Camt054, 'kind'> & { account: typeof ACCOUNT } = {
  msgId: 'BANK-NTF-0001',
  createdAt: new Date('2026-11-28T08:00:00Z'),
  account: ACCOUNT,
  entries: [
    {
      status: 'BOOK',
      creditDebit: 'DBIT',
      amount: '12.30',
      currency: 'EUR',
      bookingDate: '2026-11-27',
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
      transactions: [{ endToEndId: 'W0000000001', accountServicerRef: 'BK-1', amount: '12.30', currency: 'EUR' }],
    },
    {
      status: 'BOOK',
      creditDebit: 'CRDT',
      amount: '12.30',
      currency: 'EUR',
      bookingDate: '2026-11-28',
      accountServicerRef: 'NTRY-20261128-1',
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' },
      transactions: [
        {
          endToEndId: 'W0000000001',
          accountServicerRef: 'RTN-20261128-77',
          amount: '12.30',
          currency: 'EUR',
          returnReason: 'AC04',
        },
      ],
    },
  ],
};

function refused(xml: string | Uint8Array, reason: RegExp): void {
  const read = readBankFile(xml);
  assert.equal(read.ok, false, `expected a refusal matching ${reason}`);
  if (!read.ok) {
    assert.match(read.reason, reason);
    assert.doesNotMatch(read.reason, /\n/);
  }
}

describe('pain.002', () => {
  test('writePain002 writes a pain.002.001.10 valid against the XSD, and readBankFile reads it back whole', async () => {
    const xml = writePain002(REPORT);
    assert.match(xml, /<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">/);
    assert.deepEqual(await validateXml(xml, 'pain.002.001.10'), { valid: true });
    const read = readBankFile(xml);
    assert.ok(read.ok, read.ok ? '' : read.reason);
    assert.deepEqual(read.file, {
      kind: 'pain.002',
      ...REPORT,
      originalMessageNameId: 'pain.001.001.09',
      groupReason: undefined,
      transactions: REPORT.transactions.map((tx) => ({ reason: undefined, ...tx })),
      paymentInformation: [{ originalPaymentInformationId: 'PG-20261127-0001-1', status: 'PART', reason: undefined }],
    });
  });

  test('a whole file rejected: GrpSts RJCT with its reason and no transaction', async () => {
    const xml = writePain002({
      msgId: 'BANK-STS-0002',
      createdAt: new Date('2026-11-27T22:00:00Z'),
      originalMsgId: 'PG-20261127-0002',
      groupStatus: 'RJCT',
      groupReason: 'FF01',
      transactions: [],
    });
    assert.deepEqual(await validateXml(xml, 'pain.002.001.10'), { valid: true });
    const read = readBankFile(xml);
    assert.ok(read.ok);
    assert.equal(read.file.kind, 'pain.002');
    if (read.file.kind === 'pain.002') {
      assert.equal(read.file.groupStatus, 'RJCT');
      assert.equal(read.file.groupReason, 'FF01');
      assert.deepEqual(read.file.transactions, []);
    }
  });

  test('without paymentInformation, the transactions go into one block named after the original MsgId', async () => {
    const xml = writePain002({ ...REPORT, paymentInformation: undefined });
    assert.match(xml, /<OrgnlPmtInfId>PG-20261127-0001<\/OrgnlPmtInfId>/);
    assert.deepEqual(await validateXml(xml, 'pain.002.001.10'), { valid: true });
  });

  test('reads .001.03 and .001.11 too, with a namespace prefix, several blocks and entities', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<p:Document xmlns:p="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03">
  <p:CstmrPmtStsRpt>
    <p:GrpHdr><p:MsgId>STS&amp;1</p:MsgId><p:CreDtTm>2026-11-27T23:00:00.123+01:00</p:CreDtTm></p:GrpHdr>
    <p:OrgnlGrpInfAndSts><p:OrgnlMsgId>M&#49;</p:OrgnlMsgId><p:OrgnlMsgNmId>pain.001.001.03</p:OrgnlMsgNmId></p:OrgnlGrpInfAndSts>
    <p:OrgnlPmtInfAndSts><p:OrgnlPmtInfId>P1</p:OrgnlPmtInfId>
      <p:TxInfAndSts><p:OrgnlEndToEndId>W1</p:OrgnlEndToEndId><p:TxSts>RJCT</p:TxSts>
        <p:StsRsnInf><p:Rsn><p:Cd>AC04</p:Cd></p:Rsn></p:StsRsnInf><p:StsRsnInf><p:Rsn><p:Cd>MS03</p:Cd></p:Rsn></p:StsRsnInf>
      </p:TxInfAndSts>
    </p:OrgnlPmtInfAndSts>
    <p:OrgnlPmtInfAndSts><p:OrgnlPmtInfId>P2</p:OrgnlPmtInfId><p:PmtInfSts>RJCT</p:PmtInfSts>
      <p:StsRsnInf><p:Rsn><p:Prtry>BANKSPECIFIC</p:Prtry></p:Rsn></p:StsRsnInf><p:StsRsnInf><p:Rsn><p:Cd>AM05</p:Cd></p:Rsn></p:StsRsnInf>
      <p:TxInfAndSts><p:OrgnlEndToEndId>W2</p:OrgnlEndToEndId><p:TxSts>ACSC</p:TxSts></p:TxInfAndSts>
    </p:OrgnlPmtInfAndSts>
  </p:CstmrPmtStsRpt>
</p:Document>`;
    const read = readBankFile(xml);
    assert.ok(read.ok, read.ok ? '' : read.reason);
    assert.deepEqual(read.file, {
      kind: 'pain.002',
      msgId: 'STS&1',
      createdAt: new Date('2026-11-27T22:00:00.123Z'),
      originalMsgId: 'M1',
      originalMessageNameId: 'pain.001.001.03',
      groupStatus: undefined,
      groupReason: undefined,
      transactions: [
        { originalEndToEndId: 'W1', status: 'RJCT', reason: 'AC04' },
        { originalEndToEndId: 'W2', status: 'ACSC', reason: undefined },
      ],
      paymentInformation: [
        { originalPaymentInformationId: 'P1', status: undefined, reason: undefined },
        { originalPaymentInformationId: 'P2', status: 'RJCT', reason: 'AM05' },
      ],
    });
    const v11 = readBankFile(writePain002(REPORT).replace('pain.002.001.10', 'pain.002.001.11'));
    assert.equal(v11.ok, true);
  });

  test('refuses a missing OrgnlMsgId, TxSts or OrgnlEndToEndId, and a repeated MsgId, whole', () => {
    const xml = writePain002(REPORT);
    refused(xml.replace(/<OrgnlMsgId>.*<\/OrgnlMsgId>/, ''), /OrgnlMsgId is missing/);
    refused(xml.replace('<TxSts>ACCP</TxSts>', ''), /TxSts is missing/);
    refused(xml.replace('<OrgnlEndToEndId>W0000000002</OrgnlEndToEndId>', ''), /OrgnlEndToEndId is missing/);
    refused(xml.replace('<MsgId>BANK-STS-0001</MsgId>', '<MsgId>A</MsgId><MsgId>B</MsgId>'), /MsgId appears 2 times/);
    refused(xml.replace('<MsgId>BANK-STS-0001</MsgId>', '<MsgId></MsgId>'), /MsgId is empty/);
    refused(xml.replace('2026-11-27T22:00:00Z', 'yesterday'), /CreDtTm/);
    refused(xml.replace('<TxSts>ACCP</TxSts>', '<TxSts>ACCEPTED</TxSts>'), /TxSts is longer than 4/);
  });

  test('writePain002 refuses codes and identifiers it cannot write', () => {
    assert.throws(() => writePain002({ ...REPORT, groupStatus: 'accepted' }), Pain002Error);
    assert.throws(() => writePain002({ ...REPORT, msgId: 'x'.repeat(36) }), Pain002Error);
    assert.throws(() => writePain002({ ...REPORT, originalMsgId: 'a\u0000b' }), Pain002Error);
  });
});

describe('camt.054', () => {
  test('a return (CRDT, PMNT/ICDT/RRTN, AC04, AcctSvcrRef): valid against the XSD, read back whole', async () => {
    const xml = writeCamt054(RETURN);
    assert.match(xml, /<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">/);
    assert.deepEqual(await validateXml(xml, 'camt.054.001.08'), { valid: true });
    const read = readBankFile(xml);
    assert.ok(read.ok, read.ok ? '' : read.reason);
    const { account: _account, ...notification } = RETURN;
    assert.deepEqual(read.file, {
      kind: 'camt.054',
      ...notification,
      entries: notification.entries.map((entry) => ({
        accountServicerRef: undefined,
        bookedAt: undefined,
        batches: [],
        ...entry,
        accountIban: 'DE89370400440532013000',
        transactions: entry.transactions.map((tx) => ({
          returnReason: undefined,
          msgId: undefined,
          paymentInformationId: undefined,
          bankTransactionCode: undefined,
          debtor: undefined,
          unstructuredRemittance: undefined,
          creditorReferences: undefined,
          ...tx,
        })),
      })),
    });
  });

  test('entries without a code, a date or transactions, and a transaction amount without a currency: valid', async () => {
    const xml = writeCamt054({
      msgId: 'N2',
      createdAt: new Date('2026-11-28T08:00:00Z'),
      account: { name: 'Zoë & Søn', iban: 'DE89 3704 0044 0532 0130 00' },
      entries: [
        { status: 'PDNG', creditDebit: 'DBIT', amount: '1', currency: 'EUR', transactions: [] },
        {
          status: 'BOOK',
          creditDebit: 'DBIT',
          amount: '0.30',
          currency: 'EUR',
          transactions: [{ endToEndId: 'W1', amount: '0.10' }, { endToEndId: 'W2', amount: '0.20' }, {}],
        },
      ],
    });
    assert.deepEqual(await validateXml(xml, 'camt.054.001.08'), { valid: true });
    const read = readBankFile(xml);
    assert.ok(read.ok, read.ok ? '' : read.reason);
    if (read.file.kind !== 'camt.054') throw new Error('not a camt.054');
    assert.equal(read.file.entries.length, 2);
    assert.equal(read.file.entries[0]?.bankTransactionCode, undefined);
    assert.equal(read.file.entries[1]?.transactions[1]?.currency, 'EUR');
    assert.equal(read.file.entries[1]?.transactions.length, 3);
  });

  test('reads every Ntfctn, BookgDt/DtTm as its date, and several NtryDtls', () => {
    const entry = (ref: string) =>
      `<Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Prtry>x</Prtry><Cd>BOOK</Cd></Sts>` +
      `<BookgDt><DtTm>2026-11-28T23:30:00-02:00</DtTm></BookgDt><BkTxCd/>` +
      `<NtryDtls><TxDtls><Refs><EndToEndId>${ref}</EndToEndId></Refs></TxDtls></NtryDtls>` +
      `<NtryDtls><TxDtls><Refs><EndToEndId>${ref}b</EndToEndId></Refs></TxDtls></NtryDtls></Ntry>`;
    const ntfctn = (id: string) =>
      `<Ntfctn><Id>${id}</Id><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>${entry(id)}</Ntfctn>`;
    const xml =
      `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn>` +
      `<GrpHdr><MsgId>N</MsgId><CreDtTm>2026-11-28T08:00:00</CreDtTm></GrpHdr>${ntfctn('A')}${ntfctn('B')}` +
      `</BkToCstmrDbtCdtNtfctn></Document>`;
    const read = readBankFile(xml);
    assert.ok(read.ok, read.ok ? '' : read.reason);
    if (read.file.kind !== 'camt.054') throw new Error('not a camt.054');
    assert.deepEqual(
      read.file.entries.map((e) => [e.bookingDate, e.transactions.map((tx) => tx.endToEndId)]),
      [
        ['2026-11-29', ['A', 'Ab']],
        ['2026-11-29', ['B', 'Bb']],
      ],
    );
  });

  test('refuses bad amounts, indicators and codes, whole', () => {
    const xml = writeCamt054(RETURN);
    refused(
      xml.replace(
        '<Amt Ccy="EUR">12.30</Amt>\n        <CdtDbtInd>CRDT',
        '<Amt Ccy="EUR">12,30</Amt>\n        <CdtDbtInd>CRDT',
      ),
      /not an amount/,
    );
    refused(xml.replace(/<Amt Ccy="EUR">12.30<\/Amt>/, '<Amt Ccy="EUR">-12.30</Amt>'), /not an amount/);
    refused(xml.replace(/<Amt Ccy="EUR">12.30<\/Amt>/, '<Amt>12.30</Amt>'), /Ccy/);
    refused(xml.replace(/<Amt Ccy="EUR">12.30<\/Amt>/, '<Amt Ccy="euro">12.30</Amt>'), /Ccy/);
    refused(xml.replace('<CdtDbtInd>CRDT</CdtDbtInd>', '<CdtDbtInd>CREDIT</CdtDbtInd>'), /CdtDbtInd/);
    refused(xml.replace('<SubFmlyCd>RRTN</SubFmlyCd>', ''), /SubFmlyCd is missing/);
    refused(xml.replace('<Cd>BOOK</Cd>', ''), /Sts\/Cd is missing/);
    refused(xml.replace('<Dt>2026-11-28</Dt>', '<Dt>2026-13-01</Dt>'), /not a date/);
    refused(xml.replace(/<Ntfctn>[\s\S]*<\/Ntfctn>/, ''), /Ntfctn is missing/);
  });

  test('writeCamt054 refuses what it cannot write', () => {
    assert.throws(() => writeCamt054({ ...RETURN, account: { name: 'x', iban: 'DE00' } }), Camt054Error);
    const bad = { ...RETURN.entries[0]!, amount: '1.234567' };
    assert.throws(() => writeCamt054({ ...RETURN, entries: [bad] }), Camt054Error);
  });
});

describe('readBankFile refuses', () => {
  const valid = writePain002(REPORT);

  test('garbage, empty input and truncated XML', () => {
    refused('', /./);
    refused('hello', /./);
    refused('{"json": true}', /./);
    refused(valid.slice(0, Math.floor(valid.length / 2)), /malformed/);
    refused(valid.slice(0, -3), /malformed/);
    refused('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">', /malformed/);
  });

  test('other namespaces and roots', () => {
    refused(valid.replace('pain.002.001.10', 'pain.002.001.02'), /namespace/);
    refused(valid.replace('pain.002.001.10', 'camt.052.001.08'), /namespace/);
    refused(valid.replace(' xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"', ''), /no namespace/);
    refused(valid.replaceAll('Document', 'Doc'), /not <Document>/);
    refused(writeCamt054(RETURN).replace('camt.054.001.08', 'camt.054.001.02'), /namespace/);
  });

  test('a DOCTYPE and entity declarations (XXE, billion laughs)', () => {
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt><GrpHdr><MsgId>&xxe;</MsgId></GrpHdr></CstmrPmtStsRpt></Document>`;
    refused(xxe, /DOCTYPE/);
    const laughs = valid.replace(
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>',
    );
    refused(laughs, /DOCTYPE/);
    refused(valid.replace('<Document', '<!ENTITY a "b"><Document'), /entity|malformed/);
    refused(valid.replace('BANK-STS-0001', '&undefined;'), /not defined/);
    refused(valid.replace('BANK-STS-0001', 'A & B'), /'&'|malformed/);
  });

  test('characters XML does not allow, and a child that rebinds the namespace', () => {
    refused(valid.replace('BANK-STS-0001', 'BANK\u0001'), /U\+0001 .* not an XML character/);
    refused(valid.replace('BANK-STS-0001', 'BANK\uD800'), /U\+D800/);
    refused(valid.replace('BANK-STS-0001', 'BANK&#1;'), /not an XML character/);
    refused(valid.replace('<CstmrPmtStsRpt>', '<CstmrPmtStsRpt xmlns="urn:other">'), /another namespace/);
    refused(valid.replace('<TxSts>ACSC</TxSts>', '<TxSts xmlns="urn:other">ACSC</TxSts>'), /another namespace/);
    assert.equal(readBankFile(valid.replace('BANK-STS-0001', 'BANK&#x1F4B6;')).ok, true);
  });

  test('CDATA: taken literally when alone, refused when mixed with text', () => {
    const read = readBankFile(valid.replace('BANK-STS-0001', '<![CDATA[A&amp;B<C>]]>'));
    assert.ok(read.ok);
    assert.equal(read.file.msgId, 'A&amp;B<C>');
    refused(valid.replace('BANK-STS-0001', 'A<![CDATA[B]]>C'), /mixes text and CDATA/);
    refused(valid.replace('BANK-STS-0001', '<![CDATA[B]]><![CDATA[C]]>'), /mixes text and CDATA/);
  });

  test('bytes that are not UTF-8 and other declared encodings', () => {
    const bytes = new TextEncoder().encode(valid.replace('BANK-STS-0001', 'BANK-STS-é'));
    const latin1 = Uint8Array.from(bytes.filter((byte) => byte !== 0xc3));
    refused(latin1, /UTF-8/);
    refused(valid.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'), /UTF-8 only/);
    assert.equal(readBankFile(new TextEncoder().encode(`\uFEFF${valid}`)).ok, true);
  });

  test('a status report of 10,000 transactions is read in one piece', (t) => {
    const big = writePain002({
      ...REPORT,
      transactions: Array.from({ length: 10_000 }, (_, index) => ({
        originalEndToEndId: `W${String(index).padStart(10, '0')}`,
        status: index % 3 === 0 ? 'RJCT' : 'ACSC',
        reason: index % 3 === 0 ? 'AC01' : undefined,
      })),
    });
    const started = performance.now();
    const read = readBankFile(big);
    t.diagnostic(
      `10,000-transaction pain.002 (${(big.length / 1e6).toFixed(1)} MB) read in ${Math.round(performance.now() - started)} ms`,
    );
    assert.ok(read.ok);
    if (read.file.kind === 'pain.002') assert.equal(read.file.transactions.length, 10_000);
  });
});
