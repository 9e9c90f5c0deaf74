/**
 * Bank files as banks send them (issue 49; decisions.md, "Files as banks send them"), through
 * Debian's OpenSSH server on PGlite and PostgreSQL: the platform runs in this process with its
 * workers off and a clock under the test's control; the test calls the file steps itself and plays
 * the bank by writing its files (with @paygate/iso20022) into the download directory.
 *
 * - a camt.053 statement that repeats a camt.054 notification changes nothing the second time;
 * - a batch booking of a 1,000-payout file settles every payout (one webhook each); a batch whose
 *   count or total is not the file's changes nothing, is listed and counted;
 * - a payment information block rejected (PmtInfSts RJCT) and the intermediate codes kept;
 * - cut-offs close the batch at their time, with the execution date of their day;
 * - payments by bank transfer: created with their reference, settled by a credit, and every
 *   kind of unmatched credit kept for the operator;
 * - IBANs as people write them, at create.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type CamtEntry,
  isCreditorReference,
  readPain001,
  writeCamt053,
  writeCamt054,
  writePain002,
} from '@paygate/iso20022';
import type { Payment, Payout } from '@paygate/wire';
import { purgeReceivedFiles, RECEIVED_FILES_KEPT_MS } from '../src/modules/channels/bank-files.js';
import {
  listSepaCredits,
  listSepaFiles,
  type MismatchedBatch,
  type ReceivedCredit,
} from '../src/modules/channels/sepa-sftp/files.js';
import { OPERATOR_ROLES, type OperatorRole } from '../src/modules/backoffice/access.js';
import { operator, type OperatorClient } from './backoffice-harness.js';
import { sepaChannelHealth } from '../src/modules/channels/sepa-sftp/health.js';
import { readInboxOnce } from '../src/modules/channels/sepa-sftp/inbox.js';
import { batchOnce, type FileLog, uploadOnce } from '../src/modules/channels/sepa-sftp/outbox.js';
import { type SepaSftpConnector, transferReference } from '../src/modules/channels/sepa-sftp/sepa-sftp.js';
import { payoutDetail } from '../src/modules/portal/orders.js';
import { assertBooksHealthy, balanceOf, eventsOf } from './money-harness.js';
import {
  createMerchant,
  databases,
  get,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { confirmSepaPayout, DEBTOR, type SepaSshd, sshdMissing, startSepaSshd } from './sshd-fixture.js';

const PAYEE_IBAN = 'FR1420041010050500013M02606';
/** Tuesday 1 December 2026, 12:00 in Brussels: the clock the cases start from. */
const START = Date.parse('2026-12-01T11:00:00Z');
/** Long, so that only the cut-off (15:00 in Brussels) or the cases' clock close a batch. */
const BATCH_MS = 6 * 3_600_000;
const BOOK = { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' } as const;
const RECEIVED = { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT' } as const;

function memoryLog(): FileLog & { lines: { level: string; msg: string; object: object }[] } {
  const lines: { level: string; msg: string; object: object }[] = [];
  const at = (level: string) => (object: object, msg: string) => lines.push({ level, msg, object });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Counts what the file steps report to the metrics. */
function countingMetrics() {
  const counted: string[] = [];
  return {
    counted,
    sepaFile: (_channel: string, what: string) => void counted.push(`file:${what}`),
    sepaStatus: (_channel: string, level: string, status: string, times = 1) =>
      void counted.push(`status:${level}/${status}x${times}`),
    sepaBatchBooking: (_channel: string, outcome: string, times = 1) => void counted.push(`batch:${outcome}x${times}`),
    sepaCredit: (_channel: string, outcome: string, times = 1) => void counted.push(`credit:${outcome}x${times}`),
  };
}

for (const database of databases()) {
  describe(`bank files as banks send them, through OpenSSH (${database})`, { skip: sshdMissing }, () => {
    let sshd: SepaSshd;
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let merchantId: bigint;
    let connector: SepaSftpConnector;
    let clock = START;
    const log = memoryLog();
    const metrics = countingMetrics();
    const options = { log, metrics };
    let fileNo = 0;

    before(async () => {
      sshd = await startSepaSshd({
        name: 'bank',
        methods: [{ currency: 'EUR', code: 'SEPA' }],
        batchEvery: `${BATCH_MS}ms`,
        pollEvery: '1s',
        cutOffs: ['15:00'],
      });
      platform = await startTestPlatform({
        database,
        env: { ...sshd.env, PAYGATE_PAYMENT_EXPIRY: '3d', PAYGATE_RATE_LIMIT: '0' },
        now: () => clock,
        expectErrorLogs: true,
      });
      connector = sshd.connector(platform);
      merchant = await createMerchant(platform);
      merchantId = await platform.services.merchants.idOf(merchant.accessKey);
    });

    after(async () => {
      await platform?.close();
      await sshd?.close();
    });

    /** The bank puts a file into the download directory; the platform reads it. */
    async function bankSends(xml: string) {
      writeFileSync(join(sshd.downloadDir, `bank-${++fileNo}.xml`), xml);
      return readInboxOnce(platform.services, connector, options);
    }
    const camt054 = (entries: CamtEntry[]) =>
      writeCamt054({ msgId: `CN${++fileNo}`, createdAt: new Date(clock), account: DEBTOR, entries });
    const camt053 = (entries: CamtEntry[], closing = '0.00') =>
      writeCamt053({
        msgId: `ST${++fileNo}`,
        createdAt: new Date(clock),
        account: DEBTOR,
        balances: [
          { type: 'OPBD', amount: '0.00', currency: 'EUR', creditDebit: 'CRDT', date: '2026-12-01' },
          { type: 'CLBD', amount: closing, currency: 'EUR', creditDebit: 'CRDT', date: '2026-12-01' },
        ],
        entries,
      });
    const credit = (amount: string, ref: string, tx: Partial<CamtEntry['transactions'][number]> = {}): CamtEntry => ({
      status: 'BOOK',
      creditDebit: 'CRDT',
      amount,
      currency: 'EUR',
      bookingDate: '2026-12-01',
      bankTransactionCode: RECEIVED,
      transactions: [
        {
          accountServicerRef: ref,
          amount,
          debtor: { name: 'Ana Souza', iban: 'NL91ABNA0417164300' },
          ...tx,
        },
      ],
    });

    /** A payment by bank transfer, created through the API. */
    async function transferPayment(amount: string): Promise<Payment> {
      const created = await post<Payment>(platform, merchant, '/api/v1/payments', {
        merchantOrderNo: `T-${Math.random().toString(36).slice(2)}`,
        currency: 'EUR',
        amount,
        paymentMethod: { code: 'SEPA' },
        webhookUrl: 'https://shop.example/webhook',
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.data as Payment;
    }

    const paymentStatus = async (orderNo: string) =>
      (await platform.services.payments.get(merchantId, { orderNo })).status;
    const payoutStatus = async (orderNo: string) =>
      (await platform.services.payouts.get(merchantId, { orderNo })).status;

    const confirmedPayout = (amount: string, payee: Record<string, unknown> = {}) =>
      confirmSepaPayout(platform, merchant, amount, { accountNumber: PAYEE_IBAN, ...payee });

    /** Closes the open batch (the clock moved past its close) and uploads it; its MsgId. */
    async function batchAndUpload(advanceMs = BATCH_MS): Promise<string> {
      clock += advanceMs;
      const batch = await batchOnce(platform.services, connector, options);
      assert.equal(batch.kind, 'built', JSON.stringify(batch));
      const upload = await uploadOnce(platform.services, connector, options);
      assert.deepEqual(upload.failed, []);
      return batch.kind === 'built' ? batch.msgId : '';
    }

    it('a payment by bank transfer: its reference in the answer, settled by the credit booked, once, with its webhook', async () => {
      const payment = await transferPayment('20000.00');
      const transfer = payment.bankTransfer;
      assert.ok(transfer, JSON.stringify(payment));
      assert.equal(transfer.iban, DEBTOR.iban);
      assert.equal(transfer.bic, DEBTOR.bic);
      assert.equal(transfer.beneficiary, DEBTOR.name);
      assert.equal(transfer.reference, transferReference(payment.orderNo));
      assert.ok(isCreditorReference(transfer.reference) && transfer.reference.endsWith(payment.orderNo.slice(1)));
      assert.equal(payment.payerAction.kind, 'bank');
      assert.equal(payment.cashierUrl, `${platform.config.publicUrl}/cashier/${payment.orderNo}`);
      // The query answers the same.
      const queried = await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${payment.orderNo}`);
      assert.deepEqual(queried.body.data?.bankTransfer, transfer);
      // The bank books the credit (structured reference) in a notification: SUCCEEDED, one webhook.
      const entry = credit('20000.00', 'CRD-FUND-1', { creditorReferences: [transfer.reference] });
      const read = await bankSends(camt054([entry]));
      assert.equal(read.applied.length, 1);
      const settled = await platform.services.payments.get(merchantId, { orderNo: payment.orderNo });
      assert.equal(settled.status, 'SUCCEEDED');
      assert.equal(settled.paidAmount, '20000.00');
      assert.equal(settled.channelTradeNo, 'CRD-FUND-1');
      assert.deepEqual(settled.payer, { name: 'Ana Souza' });
      const events = await eventsOf(platform, payment.orderNo);
      assert.deepEqual(
        events.map((event) => event.json.status),
        ['SUCCEEDED'],
      );
      assert.equal(events[0]?.json.paidAmount, '20000.00');
      assert.notEqual((await balanceOf(platform, merchant, 'EUR')).available, '0.00');
      // The day's statement shows the same credit again: nothing changes, it is no unmatched credit.
      await bankSends(camt053([entry], '20000.00'));
      assert.equal((await eventsOf(platform, payment.orderNo)).length, 1);
      assert.deepEqual(await listSepaCredits(platform.services.db, 'bank'), []);
      const all = await listSepaCredits(platform.services.db, 'bank', { all: true });
      assert.equal(all.length, 1);
      assert.equal(all[0]?.state, 'matched');
      assert.equal(all[0]?.orderNo, payment.orderNo);
    });

    it('a reference within the text, without spaces and case, settles too', async () => {
      const payment = await transferPayment('12.30');
      const reference = payment.bankTransfer?.reference ?? '';
      const spaced = reference.toLowerCase().replace(/(.{4})/g, '$1 ');
      await bankSends(camt054([credit('12.30', 'CRD-TEXT-1', { unstructuredRemittance: [`Order ${spaced} thanks`] })]));
      assert.equal(await paymentStatus(payment.orderNo), 'SUCCEEDED');
    });

    it('every kind of unmatched credit is kept for the operator, counted, and changes no order', async () => {
      const open = await transferPayment('20.00');
      const done = await transferPayment('7.00');
      await bankSends(
        camt054([credit('7.00', 'CRD-DONE-1', { creditorReferences: [done.bankTransfer?.reference ?? ''] })]),
      );
      assert.equal(await paymentStatus(done.orderNo), 'SUCCEEDED');
      const before = metrics.counted.length;
      await bankSends(
        camt054([
          // another amount than the payment's
          credit('19.99', 'CRD-AMT-1', { creditorReferences: [open.bankTransfer?.reference ?? ''] }),
          // a valid RF reference this platform never issued
          credit('20.00', 'CRD-UNK-1', { creditorReferences: ['RF18539007547034'] }),
          // no reference at all
          credit('20.00', 'CRD-NONE-1', { unstructuredRemittance: ['for the invoice'] }),
          // a second transfer for a payment already SUCCEEDED
          credit('7.00', 'CRD-DONE-2', { creditorReferences: [done.bankTransfer?.reference ?? ''] }),
        ]),
      );
      assert.equal(await paymentStatus(open.orderNo), 'PENDING');
      assert.equal((await eventsOf(platform, done.orderNo)).length, 1);
      const unmatched = await listSepaCredits(platform.services.db, 'bank');
      const reasons = Object.fromEntries(unmatched.map((c) => [c.accountServicerRef, [c.reason, c.orderNo]]));
      assert.deepEqual(reasons, {
        'CRD-AMT-1': ['other_amount', open.orderNo],
        'CRD-UNK-1': ['unknown_reference', null],
        'CRD-NONE-1': ['no_reference', null],
        'CRD-DONE-2': ['payment_final', done.orderNo],
      });
      const none = unmatched.find((c) => c.accountServicerRef === 'CRD-NONE-1');
      assert.equal(none?.remittance, 'for the invoice');
      assert.equal(none?.debtorName, 'Ana Souza');
      assert.equal(none?.debtorIban, 'NL91ABNA0417164300');
      assert.deepEqual(
        metrics.counted.slice(before).filter((c) => c.startsWith('credit:')),
        ['credit:unmatchedx4'],
      );
      assert.ok(log.lines.some((line) => /matches no open payment/.test(line.msg)));
      const health = await sepaChannelHealth(platform.services, connector);
      assert.equal(health.unmatchedCredits, 4);
    });

    it('IBANs as people write them are taken at create and kept in their electronic form', async () => {
      const payout = await confirmedPayout('1.00', { accountNumber: 'fr14 2004 1010 0505 0001 3m02 606' });
      const receipt = await platform.services.payouts.receipt(merchantId, { orderNo: payout.orderNo });
      assert.equal(receipt.payee.accountNumber, PAYEE_IBAN);
      const refused = await post(platform, merchant, '/api/v1/payouts', {
        merchantOrderNo: 'S-BAD-SPACES',
        currency: 'EUR',
        amount: '1.00',
        webhookUrl: 'https://shop.example/webhook',
        payee: { name: 'Ana', accountNumber: 'FR14  2004' },
      });
      assert.equal(refused.status, 400);
      await batchAndUpload();
    });

    it('cut-offs close the batch at their time, for their day, with a clock the test moves', async () => {
      // Wednesday 2 December: 12:00 in Brussels; the cut-off is 15:00 (14:00 UTC).
      clock = Date.parse('2026-12-02T11:00:00Z');
      const first = await confirmedPayout('3.00');
      let health = await sepaChannelHealth(platform.services, connector);
      assert.deepEqual(health.nextCutOff, {
        at: Date.parse('2026-12-02T14:00:00Z'),
        bankTime: '2026-12-02 15:00 Europe/Brussels',
      });
      assert.equal(health.openBatch?.closedBy, 'cutOff');
      assert.equal(health.openBatch?.closesAt, Date.parse('2026-12-02T14:00:00Z'));
      clock = Date.parse('2026-12-02T13:59:59Z');
      const waiting = await batchOnce(platform.services, connector, options);
      assert.deepEqual(waiting, { kind: 'waiting', closesAt: Date.parse('2026-12-02T14:00:00Z'), closedBy: 'cutOff' });
      // A payout confirmed after the cut-off is for the next batch.
      clock = Date.parse('2026-12-02T14:00:02Z');
      const second = await confirmedPayout('4.00');
      const built = await batchOnce(platform.services, connector, options);
      assert.equal(built.kind, 'built');
      assert.ok(built.kind === 'built' && built.closedBy === 'cutOff' && built.transactions === 1);
      await uploadOnce(platform.services, connector, options);
      const files = await listSepaFiles(platform.services.db, 'bank');
      const sent = files.sent[0];
      const pain001 = readPain001(
        (
          await platform.services.db.query<{ bytes: Uint8Array }>('SELECT bytes FROM sepa_files WHERE msg_id = $1', [
            sent?.msgId,
          ])
        ).rows[0]?.bytes ?? new Uint8Array(),
      );
      assert.ok(pain001.ok);
      // Built a moment after 15:00, but for the 15:00 cut-off: that day.
      assert.equal(pain001.file.requestedExecutionDate, '2026-12-02');
      assert.deepEqual(
        pain001.file.transactions.map((t) => t.endToEndId),
        [first.orderNo],
      );
      // The second payout's batch closes batchEvery (6 h) after it, before Thursday's cut-off; built
      // after Wednesday's last cut-off, its file is for Thursday.
      health = await sepaChannelHealth(platform.services, connector);
      assert.deepEqual(
        [health.openBatch?.closesAt, health.openBatch?.closedBy],
        [Date.parse('2026-12-02T20:00:02Z'), 'batchEvery'],
      );
      assert.deepEqual(health.nextCutOff?.bankTime, '2026-12-03 15:00 Europe/Brussels');
      clock = Date.parse('2026-12-02T20:00:03Z');
      const next = await batchOnce(platform.services, connector, options);
      assert.ok(next.kind === 'built' && next.transactions === 1 && next.closedBy === 'batchEvery');
      const nextFile = readPain001(
        (
          await platform.services.db.query<{ bytes: Uint8Array }>('SELECT bytes FROM sepa_files WHERE msg_id = $1', [
            next.kind === 'built' ? next.msgId : '',
          ])
        ).rows[0]?.bytes ?? new Uint8Array(),
      );
      assert.ok(nextFile.ok && nextFile.file.requestedExecutionDate === '2026-12-03');
      assert.equal(nextFile.file.transactions[0]?.endToEndId, second.orderNo);
      await uploadOnce(platform.services, connector, options);
    });

    it('a statement repeating a notification changes nothing again: bookings and returns once', async () => {
      const payout = await confirmedPayout('11.00');
      const msgId = await batchAndUpload();
      const booked: CamtEntry = {
        status: 'BOOK',
        creditDebit: 'DBIT',
        amount: '11.00',
        currency: 'EUR',
        bookingDate: '2026-12-03',
        bankTransactionCode: BOOK,
        transactions: [{ endToEndId: payout.orderNo, accountServicerRef: 'BK-STM-1', amount: '11.00' }],
      };
      const returned: CamtEntry = {
        status: 'BOOK',
        creditDebit: 'CRDT',
        amount: '11.00',
        currency: 'EUR',
        bookingDate: '2026-12-03',
        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' },
        transactions: [
          { endToEndId: payout.orderNo, accountServicerRef: 'RTN-STM-1', amount: '11.00', returnReason: 'AC04' },
        ],
      };
      await bankSends(camt054([booked]));
      assert.equal(await payoutStatus(payout.orderNo), 'SUCCEEDED');
      await bankSends(camt054([returned]));
      assert.equal(await payoutStatus(payout.orderNo), 'REFUNDED');
      const balance = await balanceOf(platform, merchant, 'EUR');
      await bankSends(camt053([booked, returned]));
      assert.equal(await payoutStatus(payout.orderNo), 'REFUNDED');
      assert.deepEqual(
        (await eventsOf(platform, payout.orderNo)).map((e) => e.json.status),
        ['SUCCEEDED', 'REFUNDED'],
      );
      assert.deepEqual(await balanceOf(platform, merchant, 'EUR'), balance);
      // A statement alone books as the notification would.
      const other = await confirmedPayout('2.50');
      await batchAndUpload();
      await bankSends(
        camt053([
          { ...booked, amount: '2.50', transactions: [{ endToEndId: other.orderNo, accountServicerRef: 'BK-STM-2' }] },
        ]),
      );
      assert.equal(await payoutStatus(other.orderNo), 'SUCCEEDED');
      assert.ok(msgId);
    });

    it('a block rejected (PmtInfSts RJCT) fails its payouts without a status of their own; intermediate codes are kept and shown', async () => {
      const kept = await confirmedPayout('5.00');
      const failed = await confirmedPayout('6.00');
      const msgId = await batchAndUpload();
      const before = metrics.counted.length;
      // Intermediate words first: the file received and validated, the block accepted, one pending.
      await bankSends(
        writePain002({
          msgId: `ST${++fileNo}`,
          createdAt: new Date(clock),
          originalMsgId: msgId,
          groupStatus: 'ACTC',
          transactions: [{ originalEndToEndId: kept.orderNo, status: 'PDNG' }],
          paymentInformation: [{ originalPaymentInformationId: msgId, status: 'ACCP' }],
        }),
      );
      assert.equal(await payoutStatus(kept.orderNo), 'PROCESSING');
      assert.equal(await payoutStatus(failed.orderNo), 'PROCESSING');
      // Then the block is rejected; one payout has a status of its own in the same report.
      await bankSends(
        writePain002({
          msgId: `ST${++fileNo}`,
          createdAt: new Date(clock),
          originalMsgId: msgId,
          transactions: [{ originalEndToEndId: kept.orderNo, status: 'ACSC' }],
          paymentInformation: [{ originalPaymentInformationId: msgId, status: 'RJCT', reason: 'AM04' }],
        }),
      );
      assert.equal(await payoutStatus(kept.orderNo), 'SUCCEEDED');
      assert.equal(await payoutStatus(failed.orderNo), 'FAILED');
      const detail = await payoutDetail(platform.services, merchantId, failed.orderNo);
      assert.equal(detail.bankFile?.bankStatus, 'RJCT');
      assert.equal(detail.bankFile?.reasonCode, 'AM04');
      assert.deepEqual(
        detail.bankFile?.statuses.map((s) => `${s.level}:${s.status}${s.reason ? `/${s.reason}` : ''}`),
        ['block:ACCP', 'file:ACTC', 'block:RJCT/AM04'],
      );
      const keptDetail = await payoutDetail(platform.services, merchantId, kept.orderNo);
      assert.deepEqual(
        keptDetail.bankFile?.statuses.map((s) => `${s.level}:${s.status}`),
        ['transaction:PDNG', 'block:ACCP', 'file:ACTC', 'block:RJCT'],
      );
      const listed = (await listSepaFiles(platform.services.db, 'bank')).sent.find((f) => f.msgId === msgId);
      assert.deepEqual(
        listed?.statuses.map((s) => `${s.level}:${s.status}`),
        ['block:ACCP', 'file:ACTC', 'block:RJCT'],
      );
      assert.deepEqual(
        metrics.counted
          .slice(before)
          .filter((c) => c.startsWith('status:'))
          .sort(),
        [
          'status:block/ACCPx1',
          'status:block/RJCTx1',
          'status:file/ACTCx1',
          'status:transaction/ACSCx1',
          'status:transaction/PDNGx1',
        ],
      );
    });

    it('a batch booking of a 1,000-payout file settles them all, one webhook each; a mismatched one changes nothing', async () => {
      const orderNos: string[] = [];
      for (let i = 0; i < 1_000; i += 50) {
        const batch = await Promise.all(
          Array.from({ length: 50 }, (_, j) => confirmedPayout(`${1 + ((i + j) % 7)}.00`).then((p) => p.orderNo)),
        );
        orderNos.push(...batch);
      }
      const msgId = await batchAndUpload();
      const file = (await listSepaFiles(platform.services.db, 'bank')).sent.find((f) => f.msgId === msgId);
      assert.equal(file?.transactions, 1_000);
      const total = file?.controlSum ?? '';
      const batchEntry = (count: number, amount: string, ref: string): CamtEntry => ({
        status: 'BOOK',
        creditDebit: 'DBIT',
        amount,
        currency: 'EUR',
        bookingDate: '2026-12-03',
        accountServicerRef: ref,
        bankTransactionCode: BOOK,
        batches: [
          { msgId, paymentInformationId: msgId, numberOfTransactions: count, totalAmount: amount, creditDebit: 'DBIT' },
        ],
        transactions: [],
      });
      const before = metrics.counted.length;
      // A count that is not the file's: nothing applied, listed for the operator, counted.
      await bankSends(camt053([batchEntry(999, total, 'BTCH-BAD-1')]));
      assert.ok((await Promise.all(orderNos.slice(0, 5).map(payoutStatus))).every((s) => s === 'PROCESSING'));
      const bookings = (await listSepaFiles(platform.services.db, 'bank')).batchBookings;
      assert.equal(bookings[0]?.state, 'mismatch');
      assert.match(bookings[0]?.reason ?? '', /NbOfTxs 999 is not the 1000 payouts/);
      assert.ok(log.lines.some((line) => /batch booking does not match/.test(line.msg)));
      // A total that is not the file's neither.
      await bankSends(camt054([batchEntry(1_000, '1.00', 'BTCH-BAD-2')]));
      assert.equal(await payoutStatus(orderNos[0] as string), 'PROCESSING');
      // The right one: every payout SUCCEEDED, one webhook each.
      await bankSends(camt054([batchEntry(1_000, total, 'BTCH-OK-1')]));
      const statuses = await platform.services.db.query<{ status: string; count: bigint }>(
        'SELECT status, count(*) AS count FROM payouts WHERE order_no = ANY($1::text[]) GROUP BY status',
        [orderNos],
      );
      assert.deepEqual(
        statuses.rows.map((row) => [row.status, Number(row.count)]),
        [['SUCCEEDED', 1_000]],
      );
      const events = await platform.services.db.query<{ count: bigint }>(
        'SELECT count(*) AS count FROM events WHERE order_no = ANY($1::text[])',
        [orderNos],
      );
      assert.equal(Number(events.rows[0]?.count), 1_000);
      // The statement repeating it changes nothing.
      await bankSends(camt053([batchEntry(1_000, total, 'BTCH-OK-1')]));
      assert.equal(
        Number(
          (
            await platform.services.db.query<{ count: bigint }>(
              'SELECT count(*) AS count FROM events WHERE order_no = ANY($1::text[])',
              [orderNos],
            )
          ).rows[0]?.count,
        ),
        1_000,
      );
      assert.deepEqual(
        metrics.counted.slice(before).filter((c) => c.startsWith('batch:')),
        ['batch:mismatchx1', 'batch:mismatchx1', 'batch:appliedx1'],
      );
      const health = await sepaChannelHealth(platform.services, connector);
      assert.equal(health.mismatchedBatches, 2);
    });

    it('a statement full of credits settles every payment it names together, once each, with one webhook each', async () => {
      const payments = await Promise.all(Array.from({ length: 40 }, (_, i) => transferPayment(`${10 + i}.00`)));
      const before = BigInt((await balanceOf(platform, merchant, 'EUR')).available.replace('.', ''));
      const entries = payments.map((payment, i) =>
        credit(payment.amount, `CRD-MANY-${i}`, { creditorReferences: [payment.bankTransfer?.reference ?? ''] }),
      );
      // The first payment paid twice in the same file: the second credit finds it final.
      const twice = credit(payments[0]?.amount ?? '', 'CRD-MANY-TWICE', {
        creditorReferences: [payments[0]?.bankTransfer?.reference ?? ''],
      });
      const read = await bankSends(camt053([...entries, twice, entries[1] as CamtEntry]));
      assert.equal(read.applied.length, 1);
      for (const payment of payments) {
        assert.equal(await paymentStatus(payment.orderNo), 'SUCCEEDED');
        const events = await eventsOf(platform, payment.orderNo);
        assert.deepEqual(
          events.map((event) => [event.json.status, event.json.paidAmount]),
          [['SUCCEEDED', payment.amount]],
        );
      }
      const credited = (await balanceOf(platform, merchant, 'EUR')).available.replace('.', '');
      const fees = await platform.services.db.query<{ n: bigint }>(
        `SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'payment' AND order_no = ANY($1::text[])`,
        [payments.map((payment) => payment.orderNo)],
      );
      assert.equal(Number(fees.rows[0]?.n), 40);
      assert.ok(BigInt(credited) > before);
      const all = await listSepaCredits(platform.services.db, 'bank', { all: true });
      const mine = all.filter((c) => c.accountServicerRef?.startsWith('CRD-MANY-'));
      assert.equal(mine.length, 41);
      assert.equal(mine.filter((c) => c.state === 'matched').length, 40);
      const again = mine.find((c) => c.accountServicerRef === 'CRD-MANY-TWICE');
      assert.deepEqual(
        [again?.state, again?.reason, again?.orderNo],
        ['unmatched', 'payment_final', payments[0]?.orderNo],
      );
      // The same statement again changes nothing.
      await bankSends(camt053([...entries, twice]));
      assert.equal((await balanceOf(platform, merchant, 'EUR')).available.replace('.', ''), credited);
      assert.equal((await eventsOf(platform, payments[5]?.orderNo ?? '')).length, 1);
      await assertBooksHealthy(platform);
    });

    it('the back office lists unmatched credits and mismatched batch bookings by role, and serves the files received as read', async () => {
      const clients = new Map(
        await Promise.all(OPERATOR_ROLES.map(async (role) => [role, await operator(platform, role)] as const)),
      );
      const as = (role: OperatorRole) => clients.get(role) as OperatorClient;
      for (const role of OPERATOR_ROLES) {
        // Unmatched credits: reason, amount, reference, booking date and the account booked to.
        const credits = await as(role).bo<{ credits: ReceivedCredit[] }>('/channels/credits');
        assert.equal(credits.status, 200, credits.text);
        const listed = credits.body.data?.credits ?? [];
        assert.ok(listed.length >= 4 && listed.every((c) => c.state === 'unmatched'), credits.text);
        const other = listed.find((c) => c.accountServicerRef === 'CRD-AMT-1');
        assert.equal(other?.reason, 'other_amount');
        assert.equal(other?.amount, '19.99');
        assert.match(other?.reference ?? '', /^RF/);
        assert.equal(other?.bookingDate, '2026-12-01');
        assert.equal(other?.accountIban, DEBTOR.iban);
        assert.equal(other?.channel, 'bank');
        // The payer's account whole to the roles that see account numbers, masked to the auditor.
        assert.equal(other?.debtorIban, role === 'auditor' ? '•••••••••••••••300' : 'NL91ABNA0417164300');
        assert.deepEqual(
          (await as(role).bo<{ credits: unknown[] }>('/channels/credits?channel=bank')).body.data?.credits,
          listed,
        );
        // Mismatched batch bookings: the file named, what was booked against what was sent.
        const batches = await as(role).bo<{ batchBookings: MismatchedBatch[] }>('/channels/batch-bookings');
        assert.equal(batches.status, 200, batches.text);
        const [second, first] = batches.body.data?.batchBookings ?? [];
        assert.equal(batches.body.data?.batchBookings.length, 2);
        assert.deepEqual(first?.booked, { transactions: 999, total: first?.expected?.total });
        assert.equal(first?.expected?.transactions, 1_000);
        assert.equal(first?.msgId, first?.expected?.msgId);
        assert.equal(first?.pmtInfId, first?.expected?.pmtInfId);
        assert.deepEqual(second?.booked, { transactions: 1_000, total: '1.00' });
        assert.equal(second?.expected?.transactions, 1_000);
        assert.match(second?.reason ?? '', /total 1.00 is not/);
        const unknown = await as(role).bo('/channels/credits?channel=nosuchchannel');
        assert.equal(unknown.status, 404);
      }
      // A received file, byte for byte as read; to the roles that download bank files only.
      writeFileSync(join(sshd.downloadDir, 'received-as-is.xml'), camt053([credit('3.21', 'CRD-KEPT-1')]));
      await readInboxOnce(platform.services, connector, options);
      const sent = readFileSync(join(sshd.downloadDir, 'received-as-is.xml'));
      for (const role of OPERATOR_ROLES) {
        const xml = await as(role).bo('/channels/bank/received/received-as-is.xml/xml');
        if (role === 'admin' || role === 'finance') {
          assert.equal(xml.status, 200, xml.text);
          assert.equal(xml.text, sent.toString('utf8'));
          assert.match(xml.headers.get('content-disposition') ?? '', /received-as-is\.xml/);
        } else assert.equal(xml.status, 403, xml.text);
      }
      assert.equal((await as('admin').bo('/channels/bank/received/never-sent.xml/xml')).status, 404);
      // Kept 30 days, then the sweeper clears the bytes; the record of the file stays.
      await purgeReceivedFiles(platform.services.db, clock + RECEIVED_FILES_KEPT_MS - 60_000);
      const kept = await as('admin').bo('/channels/bank/received/received-as-is.xml/xml');
      assert.equal(kept.status, 200, kept.text);
      assert.ok((await purgeReceivedFiles(platform.services.db, clock + RECEIVED_FILES_KEPT_MS + 60_000)) >= 1);
      const gone = await as('admin').bo('/channels/bank/received/received-as-is.xml/xml');
      assert.equal(gone.status, 404);
      assert.match(gone.text, /no longer kept/);
      assert.ok(
        (await listSepaFiles(platform.services.db, 'bank')).received.some((file) => file.name === 'received-as-is.xml'),
      );
    });

    it("a transfer arriving after the payment's expiry is an unmatched credit; polling expires the payment", async () => {
      const late = await transferPayment('9.00');
      clock += 3 * 86_400_000 + 1_000; // PAYGATE_PAYMENT_EXPIRY 3d
      await bankSends(
        camt054([credit('9.00', 'CRD-LATE-1', { creditorReferences: [late.bankTransfer?.reference ?? ''] })]),
      );
      assert.equal(await paymentStatus(late.orderNo), 'PENDING');
      const kept = (await listSepaCredits(platform.services.db, 'bank')).find(
        (c) => c.accountServicerRef === 'CRD-LATE-1',
      );
      assert.deepEqual([kept?.reason, kept?.orderNo], ['expired', late.orderNo]);
      assert.equal((await eventsOf(platform, late.orderNo)).length, 0);
    });
  });

  describe(`SEPA Instant through OpenSSH (${database})`, { skip: sshdMissing }, () => {
    let sshd: SepaSshd;
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let connector: SepaSftpConnector;
    const clock = Date.parse('2026-12-05T10:00:00.300Z'); // a Saturday: instant transfers run every day

    before(async () => {
      sshd = await startSepaSshd({
        name: 'instant',
        methods: [{ currency: 'EUR', code: 'SEPA' }],
        batchEvery: '1h',
        instant: true,
      });
      platform = await startTestPlatform({ database, env: sshd.env, now: () => clock });
      connector = sshd.connector(platform);
      merchant = await createMerchant(platform);
    });

    after(async () => {
      await platform?.close();
      await sshd?.close();
    });

    it('payouts confirmed meanwhile leave together at the next step, whatever batchEvery says, as INST', async () => {
      // Funded by a payment by bank transfer.
      const funding = await post<Payment>(platform, merchant, '/api/v1/payments', {
        merchantOrderNo: 'FUND-1',
        currency: 'EUR',
        amount: '100.00',
        paymentMethod: { code: 'SEPA' },
        webhookUrl: 'https://shop.example/webhook',
      });
      writeFileSync(
        join(sshd.downloadDir, 'credit.xml'),
        writeCamt054({
          msgId: 'CN-FUND',
          createdAt: new Date(clock),
          account: DEBTOR,
          entries: [
            {
              status: 'BOOK',
              creditDebit: 'CRDT',
              amount: '100.00',
              currency: 'EUR',
              bankTransactionCode: RECEIVED,
              transactions: [
                { accountServicerRef: 'F1', creditorReferences: [funding.body.data?.bankTransfer?.reference ?? ''] },
              ],
            },
          ],
        }),
      );
      await readInboxOnce(platform.services, connector, { log: memoryLog() });
      const payouts: string[] = [];
      for (const amount of ['1.00', '2.00']) {
        const created = await post<Payout>(platform, merchant, '/api/v1/payouts', {
          merchantOrderNo: `I-${amount}`,
          currency: 'EUR',
          amount,
          webhookUrl: 'https://shop.example/webhook',
          payee: { name: 'Ana', accountNumber: PAYEE_IBAN },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const orderNo = created.body.data?.orderNo as string;
        assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
        payouts.push(orderNo);
      }
      const options = { log: memoryLog() };
      // Due at once: the next step (every 250 ms) takes both, whatever batchEvery (1 h) says.
      const built = await batchOnce(platform.services, connector, options);
      assert.ok(
        built.kind === 'built' && built.transactions === 2 && built.closedBy === 'instant',
        JSON.stringify(built),
      );
      await uploadOnce(platform.services, connector, options);
      const files = await listSepaFiles(platform.services.db, 'instant');
      assert.equal(files.sent[0]?.instant, true);
      const bytes = (
        await platform.services.db.query<{ bytes: Uint8Array }>('SELECT bytes FROM sepa_files WHERE msg_id = $1', [
          files.sent[0]?.msgId,
        ])
      ).rows[0]?.bytes;
      const read = readPain001(bytes ?? new Uint8Array());
      assert.ok(read.ok && read.file.instant === true);
      // A Saturday: instant transfers execute that day, not the next business day.
      assert.equal(read.file.requestedExecutionDate, '2026-12-05');
      assert.deepEqual(read.file.transactions.map((t) => t.endToEndId).sort(), [...payouts].sort());
    });
  });
}
