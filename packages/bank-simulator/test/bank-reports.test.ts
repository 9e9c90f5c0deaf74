/**
 * `paygate-bank` sends what real banks send (issue 49, point 8), as its own process: statements
 * (camt.053, once a bank day, with opening and closing balances, the same entries as the
 * notifications), batch bookings, SEPA Instant files booked within a second with their own status
 * (ACCC) or rejected (AB05), intermediate pain.002 codes before the final one, and a control that
 * credits the customer's account as a payer's transfer would (the IBAN as people write it).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Camt053, Camt054, Pain002 } from '@paygate/iso20022';
import { stopSimulator } from '@paygate/simulator-kit/test-support';
import {
  clientKey,
  connect,
  control,
  newId,
  nextFiles,
  pain001,
  startBank,
  tempDir,
  transfer,
  type Running,
  type Session,
} from './helpers.js';

describe('paygate-bank: statements, batch bookings, instant files, intermediate codes, credits', () => {
  const temp = tempDir();
  const key = clientKey(temp.dir);
  let bank: Running;
  let session: Session;
  const seen = new Set<string>();

  before(async () => {
    bank = await startBank(join(temp.dir, 'bank'), key.publicFile, {
      BANK_REPORTS: 'both',
      BANK_STATUS_REPORTS: 'intermediate',
      BANK_OPENING_BALANCE: '1000.00',
      // A long day: the statements here are asked for by the control.
      BANK_DAY: '24h',
      // Regular files wait 3 s for their booking; instant ones are due within 500 ms.
      BANK_BOOK_AFTER: '3s',
    });
    session = await connect(bank.sftpPort, { privateKey: key.privateKey, fingerprint: bank.fingerprint });
  });
  after(async () => {
    session?.end();
    if (bank) assert.equal(await stopSimulator(bank), 0, 'SIGTERM stops gracefully');
    temp.remove();
  });

  test('intermediate codes before the final one, a notification, and the same entries in the statement with balances', async () => {
    const customer = await control(bank.controlUrl, '/control/customer');
    assert.equal(customer.body.reports, 'both');
    const msgId = newId('MSG');
    const [a, b] = [newId('W'), newId('W')];
    await session.upload(`${msgId}.xml`, pain001(msgId, [transfer(a, '12.30'), transfer(b, '0.70')]));
    const [taken, settling, final, notification] = (await nextFiles(session, seen, 4)) as [
      Pain002,
      Pain002,
      Pain002,
      Camt054,
    ];
    assert.deepEqual([taken.groupStatus, taken.paymentInformation?.[0]?.status], ['ACTC', 'ACTC']);
    assert.deepEqual([settling.groupStatus, settling.paymentInformation?.[0]?.status], [undefined, 'ACSP']);
    assert.equal(settling.paymentInformation?.[0]?.originalPaymentInformationId, msgId);
    assert.equal(final.groupStatus, 'ACSC');
    assert.deepEqual(
      final.transactions.map((t) => t.status),
      ['ACSC', 'ACSC'],
    );
    assert.equal(notification.kind, 'camt.054');
    // A payer pays the customer: the IBAN as people write it, the reference in groups of four.
    const credited = await control(bank.controlUrl, '/control/credits', {
      amount: '30.00',
      reference: 'rf18 5390 0754 7034',
      debtor: { name: 'Ana Souza', iban: 'nl91 abna 0417 1643 00' },
    });
    assert.equal(credited.status, 200, JSON.stringify(credited.body));
    const [creditNotice] = (await nextFiles(session, seen, 1)) as [Camt054];
    const creditEntry = creditNotice.entries[0];
    assert.equal(creditEntry?.creditDebit, 'CRDT');
    assert.deepEqual(creditEntry?.bankTransactionCode, { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT' });
    assert.deepEqual(creditEntry?.transactions[0]?.creditorReferences, ['RF18539007547034']);
    assert.deepEqual(creditEntry?.transactions[0]?.debtor, { name: 'Ana Souza', iban: 'NL91ABNA0417164300' });
    assert.equal(creditEntry?.accountServicerRef, credited.body.accountServicerRef);
    // The statement: the same entries, opening 1000.00, closing 1000.00 - 13.00 + 30.00.
    const sent = await control(bank.controlUrl, '/control/statements/send', {});
    assert.equal(sent.status, 200);
    const [statement] = (await nextFiles(session, seen, 1)) as [Camt053];
    assert.equal(statement.kind, 'camt.053');
    assert.deepEqual(
      statement.statements[0]?.balances.map((balance) => [balance.type, balance.amount, balance.creditDebit]),
      [
        ['OPBD', '1000.00', 'CRDT'],
        ['CLBD', '1017.00', 'CRDT'],
      ],
    );
    assert.equal(statement.statements[0]?.sequenceNumber, 1);
    assert.deepEqual(statement.entries, [...notification.entries, ...creditNotice.entries]);
    // The next statement opens where this one closed, and holds only what came after.
    await control(bank.controlUrl, '/control/statements/send', {});
    const [second] = (await nextFiles(session, seen, 1)) as [Camt053];
    assert.deepEqual(
      second.statements[0]?.balances.map((balance) => balance.amount),
      ['1017.00', '1017.00'],
    );
    assert.deepEqual(second.entries, []);
  });

  test('batch booking: one DBIT entry for the file with NtryDtls/Btch (MsgId, PmtInfId, count, total), no transactions', async () => {
    await control(bank.controlUrl, '/control/customer', { batchBooking: true, statusReports: 'rejections' });
    const msgId = newId('MSG');
    await session.upload(
      `${msgId}.xml`,
      pain001(msgId, [transfer(newId('W'), '1.10'), transfer(newId('W'), '2.20'), transfer(newId('W'), '3.30')]),
    );
    // No positive status report: the booking is told by the notification alone.
    const [notification] = (await nextFiles(session, seen, 1)) as [Camt054];
    assert.equal(notification.kind, 'camt.054');
    assert.equal(notification.entries.length, 1);
    const [entry] = notification.entries;
    assert.equal(entry?.amount, '6.60');
    assert.deepEqual(entry?.transactions, []);
    assert.deepEqual(entry?.batches, [
      {
        msgId,
        paymentInformationId: msgId,
        numberOfTransactions: 3,
        totalAmount: '6.60',
        currency: 'EUR',
        creditDebit: 'DBIT',
      },
    ]);
    // The file's own BtchBookg=false wins over the customer's setting.
    const single = newId('MSG');
    await session.upload(
      `${single}.xml`,
      pain001(single, [transfer(newId('W'), '1.00'), transfer(newId('W'), '2.00')], { batchBooking: false }),
    );
    const [separate] = (await nextFiles(session, seen, 1)) as [Camt054];
    assert.equal(separate.entries.length, 2);
    await control(bank.controlUrl, '/control/customer', { batchBooking: false, statusReports: 'final' });
  });

  test('instant files are booked within a second with their own status (ACCC); the instant control rejects them (AB05)', async () => {
    const msgId = newId('MSG');
    const id = newId('W');
    await session.upload(`${msgId}.xml`, pain001(msgId, [transfer(id, '4.00')], { instant: true }));
    const [report, notification] = (await nextFiles(session, seen, 2)) as [Pain002, Camt054];
    assert.deepEqual(
      report.transactions.map((t) => [t.originalEndToEndId, t.status]),
      [[id, 'ACCC']],
    );
    assert.equal(notification.entries[0]?.transactions[0]?.endToEndId, id);
    const transfers = await control(bank.controlUrl, '/control/transfers');
    const booked = transfers.body.transfers.find((t: { endToEndId: string }) => t.endToEndId === id);
    assert.equal(booked.instant, true);
    // Due within a second of being taken (an instant file within 500 ms whatever BANK_BOOK_AFTER
    // says), where a regular one waits BANK_BOOK_AFTER.
    assert.ok(booked.bookAt - booked.takenAt <= 500, `due ${booked.bookAt - booked.takenAt} ms after it was taken`);
    // The payee's bank does not answer in time: the transfer is rejected, AB05.
    assert.equal((await control(bank.controlUrl, '/control/instant', { mode: 'reject', reason: 'AB05' })).status, 200);
    const refused = newId('MSG');
    const late = newId('W');
    await session.upload(`${refused}.xml`, pain001(refused, [transfer(late, '5.00')], { instant: true }));
    const [rejection] = (await nextFiles(session, seen, 1)) as [Pain002];
    assert.deepEqual(
      rejection.transactions.map((t) => [t.originalEndToEndId, t.status, t.reason]),
      [[late, 'RJCT', 'AB05']],
    );
    await control(bank.controlUrl, '/control/instant', { mode: 'execute' });
    // Controls refuse what they cannot do.
    assert.equal(
      (await control(bank.controlUrl, '/control/instant', { mode: 'reject', reason: 'timeout' })).status,
      400,
    );
    assert.equal(
      (
        await control(bank.controlUrl, '/control/credits', {
          amount: '1.00',
          debtor: { name: 'x', iban: 'NL00 0000' },
          text: 'x',
        })
      ).status,
      400,
    );
    assert.equal((await control(bank.controlUrl, '/control/customer', { reports: 'daily' })).status, 400);
  });
});
