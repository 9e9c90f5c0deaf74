/**
 * An order's whole story in the back office (issue 45): a Pix payment through `paygate-pix` (the
 * pix-api connector over mTLS, as the pix suites run it) and a SEPA payout the bank returned
 * (sepa-sftp through Debian's OpenSSH, the bank's files written by the test), each read as the
 * timeline of `GET /backoffice/api/orders/:orderNo`; and the search finding each order by every
 * identifier it has, across merchants, with documents masked for the auditor.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Payout } from '@paygate/wire';
import { readInboxOnce } from '../src/modules/channels/sepa-sftp/inbox.js';
import type { FileLog } from '../src/modules/channels/sepa-sftp/outbox.js';
import type { SepaSftpConnector } from '../src/modules/channels/sepa-sftp/sepa-sftp.js';
import { createMerchant, databases, get, paymentInput, post, startTestPlatform, type TestPlatform } from './harness.js';
import { fund } from './money-harness.js';
import { control, type Simulator, startSimulator, stopSimulator, waitFor } from './pix-sim-harness.js';
import { payoutReturned, type SepaSshd, sendBankFile, sshdMissing, startSepaSshd } from './sshd-fixture.js';
import { BACKOFFICE, operator, type OperatorClient } from './backoffice-harness.js';

interface Entry {
  at: number;
  kind: string;
  [member: string]: unknown;
}
interface Story {
  orderNo: string;
  orderType: string;
  status: string;
  merchant: { accessKey: string; name: string };
  timeline: Entry[];
  [member: string]: unknown;
}
interface Found {
  items: { orderNo: string; merchant: { accessKey: string }; counterparty: { documentNumber: string | null } }[];
  nextCursor?: string;
}

const quietLog: FileLog = { info: () => {}, warn: () => {}, error: () => {} };

/** The timeline is oldest first, each entry `{at, kind, …}`. */
function assertOrdered(timeline: Entry[]) {
  for (let i = 1; i < timeline.length; i++) {
    assert.ok((timeline[i - 1]?.at ?? 0) <= (timeline[i]?.at ?? 0), `entry ${i} is older than the one before`);
  }
}

for (const database of databases()) {
  describe(`an order's story in the back office: Pix (${database})`, () => {
    let sim: Simulator;
    let platform: TestPlatform;
    let support: OperatorClient;
    let auditor: OperatorClient;

    before(async () => {
      sim = await startSimulator();
      const channels = join(sim.dir, 'channels.json');
      writeFileSync(channels, JSON.stringify({ channels: [{ ...sim.channel, name: 'pix', timeoutMs: 1_500 }] }));
      platform = await startTestPlatform({
        database,
        env: { PAYGATE_CHANNELS: channels, PAYGATE_WORKERS: 'true', PAYGATE_CHANNEL_POLL_AFTER: '1s' },
        expectErrorLogs: true,
      });
      support = await operator(platform, 'support');
      auditor = await operator(platform, 'auditor');
    });
    after(async () => {
      await platform?.close();
      if (sim) {
        await stopSimulator(sim);
        rmSync(sim.dir, { recursive: true, force: true });
      }
    });

    it('a Pix payment: created by the API, charged at the provider, paid, settled from GET /cob, booked, announced', async () => {
      const shop = await createMerchant(platform, 'Loja Historia');
      const created = await post<{ orderNo: string; merchantOrderNo: string }>(
        platform,
        shop,
        '/api/v1/payments',
        paymentInput({ amount: '87.65', webhookUrl: 'http://127.0.0.1:9/nowhere' }),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const { orderNo, merchantOrderNo } = created.body.data as { orderNo: string; merchantOrderNo: string };
      const txid = (
        await platform.services.db.query<{ channel_trade_no: string }>(
          'SELECT channel_trade_no FROM payments WHERE order_no = $1',
          [orderNo],
        )
      ).rows[0]?.channel_trade_no as string;
      await control(sim, 'pay', { txid, payer: { name: 'Maria Silva', cpf: '01234567890' } });
      const paid = await waitFor(async () => {
        const answer = await get<{ status: string; channelTradeNo: string }>(
          platform,
          shop,
          '/api/v1/payments',
          `orderNo=${orderNo}`,
        );
        return answer.body.data?.status === 'SUCCEEDED' ? answer.body.data : undefined;
      }, 'SUCCEEDED');
      const endToEndId = paid.channelTradeNo;

      const story = await waitFor(async () => {
        const answer = await support.get<Story>(`${BACKOFFICE}/orders/${orderNo}`);
        return answer.body.data?.timeline.some((e) => e.kind === 'webhook') ? answer.body.data : undefined;
      }, 'a delivery attempt on the timeline');
      // Every field the merchant's query has, the merchant, and the timeline.
      assert.equal(story.orderNo, orderNo);
      assert.equal(story.orderType, 'PAYMENT');
      assert.equal(story.merchantOrderNo, merchantOrderNo);
      assert.equal(story.channelTradeNo, endToEndId);
      assert.deepEqual(story.payer, { name: 'Maria Silva', documentNumber: '01234567890' });
      assert.deepEqual(story.merchant, { accessKey: shop.accessKey, name: 'Loja Historia', disabled: false });
      const timeline = story.timeline;
      assertOrdered(timeline);
      const statuses = timeline.filter((e) => e.kind === 'status').map((e) => [e.from, e.to, e.cause]);
      assert.deepEqual(statuses, [
        [null, 'PENDING', 'merchant_api'],
        ['PENDING', 'SUCCEEDED', 'channel'],
      ]);
      const sent = timeline.filter((e) => e.kind === 'channel' && e.direction === 'sent');
      const charge = sent.find((e) => e.operation === 'createPayment');
      assert.equal((charge?.sent as { orderNo: string; amount: string }).amount, '87.65');
      assert.equal((charge?.answered as { channelTradeNo: string }).channelTradeNo, txid);
      const asked = sent.filter((e) => e.operation === 'queryPayment');
      assert.ok(
        asked.some((e) => (e.answered as { status?: string } | null)?.status === 'SUCCEEDED'),
        'GET /cob answered the payment concluded',
      );
      // Credentials are never in what was sent or answered.
      const text = JSON.stringify(timeline);
      for (const secret of [sim.channel.clientSecret, sim.channel.clientId]) {
        assert.ok(!text.includes(String(secret)), 'no credential on the timeline');
      }
      assert.ok(
        timeline.some((e) => e.kind === 'channel' && e.direction === 'received'),
        'the provider callback (a hint)',
      );
      const ledger = timeline.filter((e) => e.kind === 'ledger');
      assert.deepEqual(
        ledger.map((e) => e.transactionKind),
        ['payment'],
      );
      const event = timeline.find((e) => e.kind === 'event');
      assert.equal(event?.status, 'SUCCEEDED');
      const attempt = timeline.find((e) => e.kind === 'webhook');
      assert.equal(attempt?.eventId, event?.eventId);
      assert.equal(attempt?.httpStatus, null, 'nothing listens there');
      assert.equal(typeof attempt?.error, 'string');
      assert.equal(typeof attempt?.latencyMs, 'number');

      // Found by every identifier it has, across merchants.
      const another = await createMerchant(platform, 'Outra Loja');
      await post(platform, another, '/api/v1/payments', paymentInput({ amount: '87.65' }));
      for (const q of [orderNo, merchantOrderNo, txid, endToEndId, '012.345.678-90']) {
        const found = await support.get<Found>(`${BACKOFFICE}/orders?q=${encodeURIComponent(q)}`);
        assert.equal(found.status, 200, found.text);
        assert.deepEqual(
          found.body.data?.items.map((i) => i.orderNo),
          [orderNo],
          `q=${q}`,
        );
        assert.equal(found.body.data?.items[0]?.merchant.accessKey, shop.accessKey);
      }
      const byAmount = await support.get<Found>(`${BACKOFFICE}/orders?q=87.65`);
      assert.ok((byAmount.body.data?.items.length ?? 0) >= 2, 'an amount finds both merchants');
      const onlyShop = await support.get<Found>(`${BACKOFFICE}/orders?q=87.65&merchant=${shop.accessKey}`);
      assert.deepEqual(
        onlyShop.body.data?.items.map((i) => i.orderNo),
        [orderNo],
      );
      // The auditor reads the order with the payer's document masked.
      const audited = await auditor.get<Story>(`${BACKOFFICE}/orders/${orderNo}`);
      assert.equal((audited.body.data?.payer as { documentNumber: string }).documentNumber, '••••••••890');
      assert.ok(!audited.text.includes('01234567890'), "the document whole is nowhere in the auditor's answer");
      const listed = await auditor.get<Found>(`${BACKOFFICE}/orders?q=${orderNo}`);
      assert.equal(listed.body.data?.items[0]?.counterparty.documentNumber, '••••••••890');

      // Asking the channel again (what `paygate channels sync` does): answered, audited with the email.
      const synced = await support.post<{ before: string; after: string; applied: boolean }>(
        `${BACKOFFICE}/orders/${orderNo}/sync`,
        {},
      );
      assert.equal(synced.status, 200, synced.text);
      assert.deepEqual(
        { before: synced.body.data?.before, after: synced.body.data?.after, applied: synced.body.data?.applied },
        { before: 'SUCCEEDED', after: 'SUCCEEDED', applied: false },
      );
      const entry = (await platform.services.audit.list({ action: 'order.synced' })).at(-1);
      assert.equal(entry?.actor.email, support.email);
      assert.equal(entry?.object, orderNo);
    });
  });

  describe(
    `an order's story in the back office: a SEPA payout returned by the bank (${database})`,
    {
      skip: sshdMissing,
    },
    () => {
      let sshd: SepaSshd;
      let platform: TestPlatform;
      let connector: SepaSftpConnector;
      let finance: OperatorClient;

      before(async () => {
        sshd = await startSepaSshd();
        platform = await startTestPlatform({ database, env: sshd.env, expectErrorLogs: true });
        connector = sshd.connector(platform);
        finance = await operator(platform, 'finance');
      });
      after(async () => {
        await platform?.close();
        await sshd?.close();
      });

      it('its file and the bank status, the return booked, every move with its cause; found by MsgId, EndToEndId, IBAN', async () => {
        const merchant = await createMerchant(platform, 'Banco Historia');
        await fund(platform, merchant, '1000.00', 'EUR');
        const iban = 'FR1420041010050500013M02606';
        const created = await post<Payout>(platform, merchant, '/api/v1/payouts', {
          merchantOrderNo: 'SEPA-STORY-1',
          currency: 'EUR',
          amount: '45.00',
          webhookUrl: 'https://shop.example/webhook',
          payee: { name: 'Ana Souza', accountNumber: iban },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const orderNo = created.body.data?.orderNo as string;
        assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
        const msgId = await sendBankFile(platform, connector, quietLog);
        sshd.notifies('camt-return.xml', 'CN-STORY-1', [payoutReturned(orderNo, '45.00', 'RET-STORY-1')]);
        await readInboxOnce(platform.services, connector, { log: quietLog });

        const story = (await finance.get<Story>(`${BACKOFFICE}/orders/${orderNo}`)).body.data as Story;
        assert.equal(story.status, 'REFUNDED');
        assert.equal(story.refundNo, 'RET-STORY-1');
        const timeline = story.timeline;
        assertOrdered(timeline);
        assert.deepEqual(
          timeline.filter((e) => e.kind === 'status').map((e) => [e.from, e.to, e.cause]),
          [
            [null, 'PENDING', 'merchant_api'],
            ['PENDING', 'PROCESSING', 'merchant_api'],
            ['PROCESSING', 'SUCCEEDED', 'bank_file'],
            ['SUCCEEDED', 'REFUNDED', 'bank_file'],
          ],
        );
        const file = timeline.find((e) => e.kind === 'bank_file');
        assert.equal(file?.msgId, msgId);
        assert.equal(file?.state, 'acknowledged');
        const bankStatus = timeline.find((e) => e.kind === 'bank_status');
        assert.equal(bankStatus?.returnReference, 'RET-STORY-1');
        assert.deepEqual(
          timeline.filter((e) => e.kind === 'ledger').map((e) => e.transactionKind),
          ['payout_reserve', 'payout_settle', 'refund'],
        );
        assert.deepEqual(
          timeline.filter((e) => e.kind === 'event').map((e) => e.status),
          ['SUCCEEDED', 'REFUNDED'],
        );
        assert.ok(
          timeline.some((e) => e.kind === 'channel' && e.operation === 'createPayout'),
          'the payout handed to the channel',
        );
        assert.equal((story.bankFile as { msgId: string }).msgId, msgId);

        for (const q of [msgId, orderNo, 'SEPA-STORY-1', iban, 'FR14 2004 1010 0505 0001 3M02 606']) {
          const found = await finance.get<Found>(`${BACKOFFICE}/orders?q=${encodeURIComponent(q)}`);
          assert.deepEqual(
            found.body.data?.items.map((i) => i.orderNo),
            [orderNo],
            `q=${q}`,
          );
        }
        // The file's XML, as uploaded.
        const xml = await finance.get(`${BACKOFFICE}/channels/bank/files/${msgId}/xml`);
        assert.equal(xml.status, 200);
        assert.match(xml.headers.get('content-type') ?? '', /^application\/xml/);
        assert.ok(xml.text.includes(`<MsgId>${msgId}</MsgId>`));
        const files = await finance.get<{ sent: { msgId: string; state: string }[] }>(
          `${BACKOFFICE}/channels/bank/files`,
        );
        assert.equal(files.body.data?.sent.find((f) => f.msgId === msgId)?.state, 'acknowledged');
        const channels = await finance.get<{
          channels: { name: string; polling: unknown; exchanges: { calls: number } }[];
        }>(`${BACKOFFICE}/channels`);
        assert.equal(channels.status, 200, channels.text);
        assert.ok((channels.body.data?.channels.find((c) => c.name === 'bank')?.exchanges.calls ?? 0) >= 1);
      });
    },
  );
}
