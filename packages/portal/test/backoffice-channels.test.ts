/**
 * The back office's Channels page and a SEPA payout's story in Chromium (issue 45): a sepa-sftp
 * channel through Debian's OpenSSH (as the server's story suite runs it), a payout sent in a bank
 * file and returned by the bank, a file the bank wrote that does not parse set aside with its
 * reason; the page shows the channel's health, its files with their state, the file set aside,
 * and each sent file's XML to download, the credit transfer that matched no payment (and no
 * mismatched batch booking, in words); the order's story shows the bank file and the bank's
 * status. Screenshots at 1280 and 375 px, axe on both.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { readInboxOnce } from '../../server/src/modules/channels/sepa-sftp/inbox.js';
import type { FileLog } from '../../server/src/modules/channels/sepa-sftp/outbox.js';
import type { SepaSftpConnector } from '../../server/src/modules/channels/sepa-sftp/sepa-sftp.js';
import { operator } from '../../server/test/backoffice-harness.js';
import { createMerchant, post, startTestPlatform, type TestPlatform } from '../../server/test/harness.js';
import { fund } from '../../server/test/money-harness.js';
import { PASSWORD } from '../../server/test/portal-harness.js';
import {
  payoutReturned,
  type SepaSshd,
  sendBankFile,
  sshdMissing,
  startSepaSshd,
} from '../../server/test/sshd-fixture.js';
import { axeViolations, ensureBackofficeBuilt, launchChromium, screenshot, SKIP_BROWSER } from './browser.js';

const quietLog: FileLog = { info: () => {}, warn: () => {}, error: () => {} };

describe(
  'a SEPA file channel on the Channels page of the back office in Chromium',
  { skip: SKIP_BROWSER || sshdMissing },
  () => {
    let sshd: SepaSshd;
    let platform: TestPlatform;
    let connector: SepaSftpConnector;
    let browser: Browser;
    let page: Page;
    let orderNo = '';
    let msgId = '';

    const capture = async (name: string) => {
      assert.deepEqual(await axeViolations(page), [], `${name}: axe at 1280 px`);
      await screenshot(page, `backoffice-${name}-desktop`);
      await page.setViewportSize({ width: 375, height: 800 });
      assert.deepEqual(await axeViolations(page), [], `${name}: axe at 375 px`);
      await screenshot(page, `backoffice-${name}-phone`);
      await page.setViewportSize({ width: 1280, height: 900 });
    };

    before(async () => {
      ensureBackofficeBuilt();
      sshd = await startSepaSshd();
      platform = await startTestPlatform({ env: sshd.env, expectErrorLogs: true });
      connector = sshd.connector(platform);

      // A payout sent in a file, returned by the bank; and a file that does not parse.
      const merchant = await createMerchant(platform, 'Banco Paginas');
      await fund(platform, merchant, '1000.00', 'EUR');
      const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', {
        merchantOrderNo: 'SEPA-PAGE-1',
        currency: 'EUR',
        amount: '45.00',
        webhookUrl: 'https://shop.example/webhook',
        payee: { name: 'Ana Souza', accountNumber: 'FR1420041010050500013M02606' },
      });
      orderNo = created.body.data?.orderNo as string;
      assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
      msgId = await sendBankFile(platform, connector, quietLog);
      sshd.notifies('camt-return.xml', 'CN-PAGE-1', [
        payoutReturned(orderNo, '45.00', 'RET-PAGE-1'),
        {
          // A credit transfer whose creditor reference names no payment: kept as unmatched.
          status: 'BOOK',
          creditDebit: 'CRDT',
          amount: '20.00',
          currency: 'EUR',
          bookingDate: '2026-12-01',
          bankTransactionCode: { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT' },
          transactions: [
            {
              accountServicerRef: 'CRD-PAGE-1',
              amount: '20.00',
              creditorReferences: ['RF18539007547034'],
              debtor: { name: 'Ana Souza', iban: 'NL91ABNA0417164300' },
            },
          ],
        },
      ]);
      writeFileSync(join(sshd.downloadDir, 'garbled.xml'), '<Document><not-iso/></Document>');
      await readInboxOnce(platform.services, connector, { log: quietLog });

      const finance = await operator(platform, 'finance');
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${platform.url}/backoffice/channels`);
      await page.getByLabel('Email').fill(finance.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      platform.advance(30_000);
      await page.getByLabel('Code from your authenticator app').fill(finance.code(platform));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Channels' }).waitFor();
    });
    after(async () => {
      await browser?.close();
      await platform?.close();
      await sshd?.close();
    });

    it('shows the channel, its files with their state, the file set aside with its reason, and the XML', async () => {
      const card = page.getByRole('region', { name: 'bank (sepa-sftp)' });
      await card.waitFor();
      const sent = page.getByRole('region', { name: 'Files sent to bank' });
      await sent.getByText(msgId).first().waitFor();
      assert.match((await sent.textContent()) ?? '', /acknowledged/);
      const aside = page.getByRole('region', { name: 'Files from bank set aside' });
      await aside.getByText('garbled.xml').waitFor();
      const reason = (await aside.textContent()) ?? '';
      assert.match(reason, /garbled\.xml.+\S/);
      const download = page.waitForEvent('download');
      await sent
        .getByRole('link', { name: /^Download the XML of / })
        .first()
        .click();
      const file = await download;
      const xml = readFileSync((await file.path()) as string, 'utf8');
      assert.match(xml, new RegExp(`<MsgId>${msgId}</MsgId>`));
      await capture('15-channels-sepa');
    });

    it('shows the unmatched credit (reason, amount, reference, booking date, account), no batch booking, and the XML of a file received', async () => {
      const credits = page.getByRole('region', { name: 'Unmatched credits' });
      const row = credits.getByRole('region', { name: 'Unmatched credit transfers' }).getByRole('row', {
        name: /RF18539007547034/,
      });
      await row.waitFor();
      const text = (await row.textContent()) ?? '';
      assert.match(text, /unknown reference/);
      assert.match(text, /20\.00/);
      assert.match(text, /2026-12-01/);
      assert.match(text, /DE89370400440532013000/, "the channel's account it was booked to");
      const batches = page.getByRole('region', { name: 'Batch bookings that did not match' });
      await batches.getByText('None: every batch booking matched the file it named.').waitFor();
      assert.deepEqual(await axeViolations(page), [], 'the bank exceptions: axe at 1280 px');
      const received = page.getByRole('region', { name: 'Files received from bank' });
      const download = page.waitForEvent('download');
      await received.getByRole('link', { name: 'Download the XML received as camt-return.xml' }).click();
      const xml = readFileSync((await (await download).path()) as string, 'utf8');
      assert.match(xml, /<MsgId>CN-PAGE-1<\/MsgId>/, 'the file as the bank wrote it');
    });

    it("the payout's story: the bank file, the bank's return, every move with its cause", async () => {
      await page.goto(`${platform.url}/backoffice/search?q=${msgId}`);
      await page.getByRole('region', { name: 'Orders found' }).getByRole('link', { name: orderNo }).click();
      await page.getByRole('heading', { level: 1, name: `Order ${orderNo}` }).waitFor();
      const timeline = page.getByRole('list', { name: 'Timeline of the order' });
      await timeline.getByText('Bank file', { exact: true }).waitFor();
      const text = (await timeline.textContent()) ?? '';
      assert.match(text, new RegExp(`MsgId ${msgId}`));
      assert.match(text, /returned \(RET-PAGE-1\)/);
      assert.match(text, /by a bank file/);
      assert.match(text, /createPayout/);
      await capture('16-payout-story');
    });
  },
);
