/**
 * SEPA payouts through Debian's OpenSSH server (issue 37; decisions.md, "SEPA payouts: ISO 20022
 * files with a bank"), on PGlite and PostgreSQL. The platform runs in this process with its
 * workers off; the test calls the file steps (batchOnce, uploadOnce, readInboxOnce) itself and
 * plays the bank by writing pain.002 and camt.054 files (written with @paygate/iso20022) into the
 * download directory of an `sshd` of its own (test/sshd-fixture.ts): the upload and listing go
 * over real OpenSSH SFTP, with its rename and permission rules.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readBankFile, readPain001, validateXml, writeCamt054, writePain002 } from '@paygate/iso20022';
import type { Payout } from '@paygate/wire';
import { isTargetDay } from '../src/modules/channels/sepa-sftp/execution-date.js';
import { applyFile, readInboxOnce } from '../src/modules/channels/sepa-sftp/inbox.js';
import { batchOnce, type FileLog, uploadOnce } from '../src/modules/channels/sepa-sftp/outbox.js';
import type { SepaSftpConnector } from '../src/modules/channels/sepa-sftp/sepa-sftp.js';
import { SftpSession } from '../src/modules/channels/sepa-sftp/sftp.js';
import { payoutDetail } from '../src/modules/portal/orders.js';
import { camt054Lines, reconcile } from '../src/modules/reconciliation/service.js';
import { balanceOf, fund } from './money-harness.js';
import { createMerchant, databases, post, startTestPlatform, type TestMerchant, type TestPlatform } from './harness.js';
import { BANK_BATCH_MS, confirmSepaPayout, DEBTOR, type SepaSshd, sshdMissing, startSepaSshd } from './sshd-fixture.js';
import { PASSWORD, portalUser } from './portal-harness.js';
import { ensurePortalBuilt, launchChromium } from '../../portal/test/chromium.js';

const IBANS = ['FR1420041010050500013M02606', 'DE02120300000000202051', 'NL91ABNA0417164300', 'BE68539007547034'];

/** A logger keeping what the steps say. */
function memoryLog(): FileLog & { lines: { level: string; msg: string; object: object }[] } {
  const lines: { level: string; msg: string; object: object }[] = [];
  const at = (level: string) => (object: object, msg: string) => lines.push({ level, msg, object });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

for (const database of databases()) {
  describe(`sepa-sftp through OpenSSH (${database})`, { skip: sshdMissing }, () => {
    let sshd: SepaSshd;
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let connector: SepaSftpConnector;
    const log = memoryLog();
    const options = { log };
    let fileNo = 0;

    before(async () => {
      sshd = await startSepaSshd();
      platform = await startTestPlatform({ database, env: sshd.env, expectErrorLogs: true });
      connector = sshd.connector(platform);
      merchant = await createMerchant(platform);
      await fund(platform, merchant, '100000.00', 'EUR');
    });

    after(async () => {
      await platform?.close();
      await sshd?.close();
    });

    /** A confirmed EUR payout to the sepa channel. */
    async function confirmedPayout(amount: string, payee: Record<string, unknown> = {}): Promise<Payout> {
      const payout = await confirmSepaPayout(platform, merchant, amount, { accountNumber: IBANS[0], ...payee });
      assert.equal(payout.status, 'PROCESSING');
      return payout;
    }

    const status = async (orderNo: string) =>
      (await platform.services.payouts.get(await platform.services.merchants.idOf(merchant.accessKey), { orderNo }))
        .status;

    /** Closes the batch now (the clock moved past batchEvery) and uploads it; its MsgId. */
    async function batchAndUpload(): Promise<string> {
      platform.advance(BANK_BATCH_MS);
      const batch = await batchOnce(platform.services, connector, options);
      assert.equal(batch.kind, 'built', JSON.stringify(batch));
      const upload = await uploadOnce(platform.services, connector, options);
      assert.deepEqual(upload.failed, []);
      return batch.kind === 'built' ? batch.msgId : '';
    }

    /** The bank puts a file into the download directory; the platform reads it. */
    async function bankSends(xml: string, name = `bank-${++fileNo}.xml`) {
      writeFileSync(join(sshd.downloadDir, name), xml);
      return readInboxOnce(platform.services, connector, options);
    }

    const pain002 = (originalMsgId: string, rest: Partial<Parameters<typeof writePain002>[0]> = {}) =>
      writePain002({
        msgId: `ST${++fileNo}`,
        createdAt: new Date(),
        originalMsgId,
        transactions: [],
        ...rest,
      });

    const camt054 = (entries: Parameters<typeof writeCamt054>[0]['entries']) =>
      writeCamt054({ msgId: `CN${++fileNo}`, createdAt: new Date(), account: DEBTOR, entries });

    it('payee rules at create: an IBAN, a BIC or nothing, a name of 1–70; 400 naming the field, nothing reserved', async () => {
      const before = await balanceOf(platform, merchant, 'EUR');
      const cases: [Record<string, unknown>, string][] = [
        [{ accountNumber: 'DE89370400440532013001' }, 'payee.accountNumber'],
        [{ accountNumber: '000123456789' }, 'payee.accountNumber'],
        [{ bankCode: '341' }, 'payee.bankCode'],
        [{ bankCode: 'COBADEFFXX' }, 'payee.bankCode'],
        [{ name: 'x'.repeat(71) }, 'payee.name'],
        [{ name: '张伟' }, 'payee.name'],
      ];
      for (const [payee, field] of cases) {
        const answer = await post<unknown>(platform, merchant, '/api/v1/payouts', {
          merchantOrderNo: `BAD-${Math.random().toString(36).slice(2)}`,
          currency: 'EUR',
          amount: '1.00',
          webhookUrl: 'https://shop.example/webhook',
          payee: { name: 'Ana', accountNumber: IBANS[0], ...payee },
        });
        assert.equal(answer.status, 400, JSON.stringify(payee));
        const body = answer.body as { msg: string; errors?: { field: string }[] };
        assert.equal(body.msg, 'VALIDATION_FAILED');
        assert.ok(
          body.errors?.some((error) => error.field === field),
          `${JSON.stringify(payee)}: ${JSON.stringify(body)}`,
        );
      }
      assert.deepEqual(await balanceOf(platform, merchant, 'EUR'), before);
      // An IBAN and a BIC in lower case are taken, kept in their electronic form.
      const payout = await confirmedPayout('1.00', {
        accountNumber: 'fr1420041010050500013m02606',
        bankCode: 'bnpafrpp',
      });
      const receipt = await platform.services.payouts.receipt(
        await platform.services.merchants.idOf(merchant.accessKey),
        {
          orderNo: payout.orderNo,
        },
      );
      assert.equal(receipt.payee.accountNumber, 'FR1420041010050500013M02606');
      assert.equal(receipt.payee.bankCode, 'BNPAFRPP');
      await batchAndUpload(); // out of the way of the next cases
    });

    it('a batch of many payouts is one file valid against the EPC XSD, names in the EPC set, uploaded by rename', async () => {
      const names = ['José Müller & Søn', 'Zoë Ærøskøbing–Straße', 'ŁUKASZ Żółć', "O'Brien (Ltd.) #42 @home", 'Ana'];
      const payouts: Payout[] = [];
      for (let i = 0; i < 40; i++) {
        payouts.push(
          await confirmedPayout(`${i + 1}.${String(i).padStart(2, '0')}`, {
            name: names[i % names.length],
            accountNumber: IBANS[i % IBANS.length],
            ...(i % 2 === 0 ? { bankCode: 'COBADEFFXXX' } : {}),
          }),
        );
      }
      // Not yet: the batch closes batchEvery after its first confirmation.
      assert.equal((await batchOnce(platform.services, connector, options)).kind, 'waiting');
      const msgId = await batchAndUpload();
      assert.equal((await batchOnce(platform.services, connector, options)).kind, 'none', 'every payout is in it');
      const uploaded = readdirSync(sshd.uploadDir);
      assert.ok(uploaded.includes(`${msgId}.xml`));
      assert.ok(!uploaded.some((name) => name.endsWith('.part')), uploaded.join());
      const bytes = readFileSync(join(sshd.uploadDir, `${msgId}.xml`));
      assert.deepEqual(await validateXml(bytes, 'pain.001.001.09'), { valid: true });
      const read = readPain001(bytes);
      assert.ok(read.ok, read.ok ? '' : read.reason);
      assert.equal(read.file.msgId, msgId);
      assert.equal(read.file.transactions.length, 40);
      // The cut-off (00:00 in Brussels) has passed: the first TARGET business day after the bank's
      // calendar day of the file (a UTC date would be that day or the one before).
      const builtOn = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Brussels' }).format(read.file.createdAt);
      assert.ok(read.file.requestedExecutionDate > builtOn, `${read.file.requestedExecutionDate} after ${builtOn}`);
      assert.ok(isTargetDay(new Date(`${read.file.requestedExecutionDate}T00:00:00Z`)));
      assert.deepEqual(
        read.file.transactions.map((t) => t.endToEndId),
        payouts.map((p) => p.orderNo),
      );
      const text = bytes.toString('utf8');
      assert.match(text, /<Nm>Jose Muller \+ Son<\/Nm>/);
      assert.match(text, /<Nm>Zoe AEroskobing-Strasse<\/Nm>/);
      assert.match(text, /<Nm>LUKASZ Zolc<\/Nm>/);
      assert.match(text, /<Nm>O'Brien \(Ltd\.\) 42 home<\/Nm>/);
      assert.match(text, /<CtrlSum>/);
      // The query answers from the files: in a file, no word from the bank yet.
      const state = await connector.queryPayout({ orderNo: payouts[0]?.orderNo as string, channelTradeNo: null });
      assert.deepEqual(state, { status: 'PROCESSING', channelTradeNo: msgId });
      assert.equal(
        await connector.releasePayout({ orderNo: payouts[0]?.orderNo as string, channelTradeNo: null }),
        false,
      );
    });

    it('a file that fails its checks is stored nowhere: its payouts stay PROCESSING, the log says why, a metric counts it', async () => {
      const payout = await confirmedPayout('3.00');
      // A payee that no longer passes the file's checks (as if created before the rules): an IBAN
      // whose check digits are wrong.
      await platform.services.db.query('UPDATE payouts SET payee_account_number = $2 WHERE order_no = $1', [
        payout.orderNo,
        'DE89370400440532013001',
      ]);
      const files = async () =>
        (await platform.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sepa_files')).rows[0]?.n;
      const before = await files();
      platform.advance(BANK_BATCH_MS);
      const metrics = {
        counted: [] as string[],
        sepaFile: (_c: string, what: string) => metrics.counted.push(what),
        sepaStatus: () => undefined,
        sepaBatchBooking: () => undefined,
        sepaCredit: () => undefined,
      };
      const batch = await batchOnce(platform.services, connector, { log, metrics });
      assert.equal(batch.kind, 'invalid');
      assert.match(batch.kind === 'invalid' ? (batch.reasons[0] ?? '') : '', /IBAN/);
      assert.deepEqual(metrics.counted, ['invalid']);
      assert.equal(await files(), before, 'nothing stored');
      assert.equal(await status(payout.orderNo), 'PROCESSING');
      assert.equal(await connector.queryPayout({ orderNo: payout.orderNo, channelTradeNo: null }), undefined);
      assert.ok(log.lines.some((line) => line.level === 'error' && /failed its checks/.test(line.msg)));
      // Once the cause is fixed, the next batch takes it.
      await platform.services.db.query('UPDATE payouts SET payee_account_number = $2 WHERE order_no = $1', [
        payout.orderNo,
        IBANS[1],
      ]);
      await batchAndUpload();
      assert.equal(
        (await connector.queryPayout({ orderNo: payout.orderNo, channelTradeNo: null }))?.status,
        'PROCESSING',
      );
    });

    it('pain.002: RJCT → FAILED with the reason kept and the money released, ACSC/ACCC → SUCCEEDED, others nothing; GrpSts ACSC settles the rest', async () => {
      const [rejected, acsc, accc, pending] = [
        await confirmedPayout('10.00'),
        await confirmedPayout('11.00'),
        await confirmedPayout('12.00'),
        await confirmedPayout('13.00'),
      ] as Payout[] as [Payout, Payout, Payout, Payout];
      const msgId = await batchAndUpload();
      const balance0 = await balanceOf(platform, merchant, 'EUR');
      await bankSends(
        pain002(msgId, {
          transactions: [
            { originalEndToEndId: rejected.orderNo, status: 'RJCT', reason: 'AC01' },
            { originalEndToEndId: acsc.orderNo, status: 'ACSC' },
            { originalEndToEndId: accc.orderNo, status: 'ACCC' },
            { originalEndToEndId: pending.orderNo, status: 'PDNG' },
          ],
        }),
      );
      assert.equal(await status(rejected.orderNo), 'FAILED');
      assert.equal(await status(acsc.orderNo), 'SUCCEEDED');
      assert.equal(await status(accc.orderNo), 'SUCCEEDED');
      assert.equal(await status(pending.orderNo), 'PROCESSING');
      const failed = await connector.queryPayout({ orderNo: rejected.orderNo, channelTradeNo: null });
      assert.equal(failed?.status, 'FAILED');
      const { bankWordOf } = await import('../src/modules/channels/sepa-sftp/sepa-sftp.js');
      assert.equal((await bankWordOf(platform.services.db, rejected.orderNo))?.bankReason, 'AC01');
      // The portal's payout page shows its file, the bank's status and the reason code.
      const detail = await payoutDetail(
        platform.services,
        await platform.services.merchants.idOf(merchant.accessKey),
        rejected.orderNo,
      );
      assert.deepEqual(detail.bankFile, {
        msgId,
        instant: false,
        bankStatus: 'RJCT',
        reasonCode: 'AC01',
        returnReference: null,
        statuses: [],
      });
      assert.equal(detail.payout.channelTradeNo, msgId);
      // And in a browser: the payout page's "Bank file" card names the file, the status and the reason.
      ensurePortalBuilt();
      const user = await portalUser(platform, merchant, PASSWORD, 'viewer');
      const browser = await launchChromium();
      try {
        const page = await (await browser.newContext()).newPage();
        page.setDefaultTimeout(15_000);
        await page.goto(`${platform.url}/portal/`);
        await page.getByLabel('Email').fill(user.email);
        await page.getByLabel('Password').fill(user.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
        await page.goto(`${platform.url}/portal/payouts/${rejected.orderNo}`);
        const card = page.locator('section[aria-labelledby="bank-file"]');
        await card.waitFor();
        const text = ((await card.textContent()) ?? '').replace(/\s+/g, ' ');
        for (const shown of [msgId, 'RJCT', 'AC01']) assert.ok(text.includes(shown), `${shown} in: ${text}`);
      } finally {
        await browser.close();
      }
      // The rejected payout's amount and fee are available again; the two paid left the reserve.
      const balance1 = await balanceOf(platform, merchant, 'EUR');
      const cents = (text: string) => Math.round(Number(text) * 100);
      const fee = cents(rejected.fee);
      assert.equal(cents(balance1.available) - cents(balance0.available), 1_000 + fee);
      assert.equal(
        cents(balance0.reserved) - cents(balance1.reserved),
        1_000 + 1_100 + 1_200 + fee + cents(acsc.fee) + cents(accc.fee),
      );
      await bankSends(pain002(msgId, { groupStatus: 'ACSC', transactions: [] }));
      assert.equal(await status(pending.orderNo), 'SUCCEEDED');
      assert.equal(await status(rejected.orderNo), 'FAILED', 'a final payout never moves again');
    });

    it('pain.002 GrpSts RJCT: every payout of the file FAILED', async () => {
      const payouts = [await confirmedPayout('5.00'), await confirmedPayout('6.00')];
      const msgId = await batchAndUpload();
      await bankSends(pain002(msgId, { groupStatus: 'RJCT', groupReason: 'FF01', transactions: [] }));
      for (const payout of payouts) assert.equal(await status(payout.orderNo), 'FAILED');
    });

    it('camt.054: DBIT → SUCCEEDED; a return before the success: SUCCEEDED then REFUNDED, once; another amount changes nothing', async () => {
      const [booked, returned, partly] = [
        await confirmedPayout('20.00'),
        await confirmedPayout('21.00'),
        await confirmedPayout('22.00'),
      ] as [Payout, Payout, Payout];
      await batchAndUpload();
      const returnEntry = (payout: Payout, amount: string, ref: string) => ({
        status: 'BOOK',
        creditDebit: 'CRDT' as const,
        amount,
        currency: 'EUR',
        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' },
        transactions: [{ endToEndId: payout.orderNo, accountServicerRef: ref, amount, returnReason: 'AC04' }],
      });
      const merchantId = await platform.services.merchants.idOf(merchant.accessKey);
      const balance0 = await balanceOf(platform, merchant, 'EUR');
      await bankSends(
        camt054([
          {
            status: 'BOOK',
            creditDebit: 'DBIT',
            amount: '20.00',
            currency: 'EUR',
            bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
            transactions: [{ endToEndId: booked.orderNo, amount: '20.00' }],
          },
          returnEntry(returned, '21.00', 'RET-0001'),
          returnEntry(partly, '2.00', 'RET-0002'),
        ]),
      );
      assert.equal(await status(booked.orderNo), 'SUCCEEDED');
      assert.equal(await status(returned.orderNo), 'REFUNDED');
      assert.equal(await status(partly.orderNo), 'PROCESSING', 'a return of another amount changes nothing');
      assert.ok(log.lines.some((line) => /another amount/.test(line.msg)));
      const events = await platform.services.webhooks.ofOrder(merchantId, 'PAYOUT', returned.orderNo);
      assert.deepEqual(
        events.map((event) => event.status),
        ['SUCCEEDED', 'REFUNDED'],
      );
      const refunded = JSON.parse(events[1]?.body ?? '{}') as Record<string, unknown>;
      assert.equal(refunded.refundNo, 'RET-0001');
      assert.equal(refunded.refundAmount, '21.00');
      const balance1 = await balanceOf(platform, merchant, 'EUR');
      // The return repeated (the same file again under another name) and a late success: nothing more.
      await bankSends(camt054([returnEntry(returned, '21.00', 'RET-0001')]));
      await bankSends(
        pain002(
          (await connector.queryPayout({ orderNo: returned.orderNo, channelTradeNo: null }))?.channelTradeNo as string,
          {
            transactions: [{ originalEndToEndId: returned.orderNo, status: 'ACSC' }],
          },
        ),
      );
      assert.equal(await status(returned.orderNo), 'REFUNDED');
      assert.deepEqual(await balanceOf(platform, merchant, 'EUR'), balance1);
      assert.notDeepEqual(balance1, balance0);
      assert.equal((await platform.services.webhooks.ofOrder(merchantId, 'PAYOUT', returned.orderNo)).length, 2);
      // The day's booked entries against the books (paygate reconcile --file with a camt.054): the
      // bookings and the return match; the return of another amount is missing in the books.
      const debit = (payout: Payout, amount: string) => ({
        status: 'BOOK',
        creditDebit: 'DBIT' as const,
        amount,
        currency: 'EUR',
        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
        transactions: [{ endToEndId: payout.orderNo, amount }],
      });
      const day = camt054([
        debit(booked, '20.00'),
        debit(returned, '21.00'),
        returnEntry(returned, '21.00', 'RET-0001'),
        returnEntry(partly, '2.00', 'RET-0002'),
      ]);
      const read = readBankFile(day);
      assert.ok(read.ok && read.file.kind === 'camt.054');
      const report = await reconcile(
        platform.services.db,
        'bank',
        new Date(platform.services.now()).toISOString().slice(0, 10),
        read.ok && read.file.kind === 'camt.054' ? camt054Lines(read.file) : [],
        true,
      );
      assert.deepEqual(
        report.mismatches.filter((m) => [booked, returned, partly].some((p) => p.orderNo === m.reference)),
        [{ kind: 'missing_in_books', type: 'return', reference: partly.orderNo, theirs: 'returned' }],
      );
      assert.ok(report.matched >= 2);
    });

    it('garbage and foreign files are set aside, nothing applied; later files still are; a file is read once', async () => {
      const payout = await confirmedPayout('30.00');
      const msgId = await batchAndUpload();
      const result = await bankSends('<not xml', 'garbage.xml');
      assert.deepEqual(
        result.setAside.map((s) => s.name),
        ['garbage.xml'],
      );
      const foreign = await bankSends(
        '<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt/></Document>',
        'statement.xml',
      );
      assert.equal(foreign.setAside.length, 1);
      const unknown = await bankSends(pain002('PGNOTOURS', { groupStatus: 'ACSC' }), 'unknown.xml');
      assert.match(unknown.setAside[0]?.reason ?? '', /not a file of this channel/);
      assert.equal(await status(payout.orderNo), 'PROCESSING');
      const good = await bankSends(
        pain002(msgId, { transactions: [{ originalEndToEndId: payout.orderNo, status: 'ACSC' }] }),
      );
      assert.deepEqual(good.applied.length, 1);
      assert.equal(await status(payout.orderNo), 'SUCCEEDED');
      // Listed again: nothing new. The files are all still there, none renamed.
      const again = await readInboxOnce(platform.services, connector, options);
      assert.deepEqual(again, { applied: [], setAside: [] });
      assert.ok(existsSync(join(sshd.downloadDir, 'garbage.xml')));
      // The same name applied twice (two instances at once): recorded once.
      const bytes = readFileSync(join(sshd.downloadDir, 'garbage.xml'));
      assert.equal(
        (await applyFile(platform.services, connector, 'garbage.xml', bytes, options)).kind,
        'recorded_elsewhere',
      );
    });

    it('two steps at once (as two instances would): one batch from the payouts, one upload of it', async () => {
      const payouts = [await confirmedPayout('7.00'), await confirmedPayout('8.00'), await confirmedPayout('9.00')];
      platform.advance(BANK_BATCH_MS);
      const batches = await Promise.all([
        batchOnce(platform.services, connector, options),
        batchOnce(platform.services, connector, options),
      ]);
      const built = batches.filter((batch) => batch.kind === 'built');
      assert.equal(built.length, 1, JSON.stringify(batches));
      assert.equal(built[0]?.kind === 'built' ? built[0].transactions : 0, 3);
      const uploads = await Promise.all([
        uploadOnce(platform.services, connector, options),
        uploadOnce(platform.services, connector, options),
      ]);
      assert.deepEqual(
        uploads.flatMap((upload) => upload.uploaded),
        [built[0]?.kind === 'built' ? built[0].msgId : ''],
      );
      for (const payout of payouts) {
        assert.equal(
          (await connector.queryPayout({ orderNo: payout.orderNo, channelTradeNo: null }))?.channelTradeNo,
          built[0]?.kind === 'built' ? built[0].msgId : '',
        );
      }
    });

    it('SFTP down, then back: the stored file is uploaded once; a file that had arrived is not sent twice', async () => {
      await confirmedPayout('40.00');
      platform.advance(BANK_BATCH_MS);
      const batch = await batchOnce(platform.services, connector, options);
      assert.equal(batch.kind, 'built');
      const msgId = batch.kind === 'built' ? batch.msgId : '';
      // The connection in use goes down with the server: the session forgets it.
      await connector.sftp.use((ops) => ops.list(sshd.uploadDir));
      await sshd.stop();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const down = await uploadOnce(platform.services, connector, options);
      assert.equal(down.uploaded.length, 0);
      assert.equal(down.failed.length, 1);
      assert.ok(!existsSync(join(sshd.uploadDir, `${msgId}.xml`)));
      await sshd.start();
      // Not before its backoff; then once.
      assert.equal((await uploadOnce(platform.services, connector, options)).uploaded.length, 0);
      platform.advance(2_000);
      assert.deepEqual((await uploadOnce(platform.services, connector, options)).uploaded, [msgId]);
      assert.deepEqual((await uploadOnce(platform.services, connector, options)).uploaded, []);
      assert.equal(readdirSync(sshd.uploadDir).filter((name) => name.startsWith(msgId)).length, 1);
      // A crash after the rename, before the mark: the next attempt finds it there and marks it.
      await platform.services.db.query(`UPDATE sepa_files SET state = 'built', lease_until = NULL WHERE msg_id = $1`, [
        msgId,
      ]);
      writeFileSync(join(sshd.uploadDir, `${msgId}.xml.part`), 'half a fi');
      assert.deepEqual((await uploadOnce(platform.services, connector, options)).uploaded, [msgId]);
      assert.ok(
        log.lines.some(
          (line) => line.msg === 'sepa file uploaded' && (line.object as { how?: string }).how === 'present',
        ),
      );
    });

    it('a file the bank answers before its upload was recorded (a crash after the rename) is marked uploaded, not sent again', async () => {
      const payout = await confirmedPayout('41.00');
      const msgId = await batchAndUpload();
      // The instance that renamed it died before its mark: the file is 'built', under its lease.
      await platform.services.db.query(
        `UPDATE sepa_files SET state = 'built', uploaded_at = NULL, lease_until = $2 WHERE msg_id = $1`,
        [msgId, new Date(platform.services.now() + 60_000)],
      );
      // The bank has taken the file in (out of the upload directory) and answers on it.
      rmSync(join(sshd.uploadDir, `${msgId}.xml`));
      await bankSends(pain002(msgId, { groupStatus: 'ACSC', transactions: [] }));
      assert.equal(await status(payout.orderNo), 'SUCCEEDED');
      const row = await platform.services.db.query<{
        state: string;
        uploaded_at: Date | null;
        lease_until: Date | null;
      }>('SELECT state, uploaded_at, lease_until FROM sepa_files WHERE msg_id = $1', [msgId]);
      assert.equal(row.rows[0]?.state, 'uploaded');
      assert.ok(row.rows[0]?.uploaded_at);
      assert.equal(row.rows[0]?.lease_until, null);
      assert.ok(log.lines.some((line) => /before its upload was recorded/.test(line.msg)));
      // Its lease long gone, the next upload steps send nothing.
      platform.advance(120_000);
      assert.deepEqual((await uploadOnce(platform.services, connector, options)).uploaded, []);
      assert.ok(!existsSync(join(sshd.uploadDir, `${msgId}.xml`)));
    });

    it('operators list the files sent and received (paygate channels files); metrics count them', async () => {
      const answer = await fetch(`${platform.url}/admin/v1/channels/bank/files`, {
        headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' },
      });
      assert.equal(answer.status, 200);
      const { data } = (await answer.json()) as {
        data: {
          sent: { msgId: string; state: string; transactions: number; groupStatus: string | null }[];
          received: { name: string; state: string; reason: string | null; message: string | null }[];
        };
      };
      assert.ok(data.sent.length >= 6);
      assert.ok(
        data.sent.every((file) => ['uploaded', 'acknowledged'].includes(file.state)),
        JSON.stringify(data.sent),
      );
      assert.ok(data.sent.some((file) => file.state === 'acknowledged' && file.groupStatus === 'RJCT'));
      assert.ok(data.sent.some((file) => file.transactions === 40));
      const garbage = data.received.find((file) => file.name === 'garbage.xml');
      assert.equal(garbage?.state, 'set_aside');
      assert.ok(garbage?.reason);
      assert.ok(data.received.some((file) => file.state === 'applied' && file.message === 'camt.054'));
      const unknown = await fetch(`${platform.url}/admin/v1/channels/nope/files`, {
        headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' },
      });
      assert.equal(unknown.status, 404);
      const metrics = await (await fetch(`${platform.url}/metrics`)).text();
      assert.match(metrics, /paygate_sepa_oldest_unacknowledged_file_age_seconds\{channel="bank"\} \d/);
    });

    it('a server with another host key is refused before the platform authenticates', async () => {
      const wrong = new SftpSession({
        host: '127.0.0.1',
        port: sshd.port,
        username: sshd.username,
        privateKey: readFileSync(sshd.clientKeyFile),
        hostKey: 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s',
        timeoutMs: 3_000,
        idleMs: 1_000,
      });
      const accepted = () => (sshd.output().match(/Accepted publickey/g) ?? []).length;
      const acceptedBefore = accepted();
      await assert.rejects(
        wrong.use((ops) => ops.list(sshd.downloadDir)),
        /host key SHA256:\S+ of 127\.0\.0\.1:\d+ is not the pinned SHA256:uNiV/,
      );
      await wrong.close();
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(accepted(), acceptedBefore, 'no authentication happened');
      assert.doesNotMatch(sshd.output(), /Failed publickey/);
    });
  });
}
