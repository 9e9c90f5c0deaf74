/**
 * SEPA payouts end to end through the reference bank (issue 37, "Done when"), on PGlite and
 * PostgreSQL, every party its own process:
 *
 * - `paygate-bank` (packages/bank-simulator, its sources through tsx: what `npx paygate-bank`
 *   runs once built): an SFTP server with its own host key, the platform's public key the one
 *   authorized; its channel snippet (data dir `channel.json`) is the platform's channel file;
 * - `paygate-psp` taking the merchant's EUR/SEPA payment that funds it (a production deployment
 *   has no sandbox channel);
 * - the platform (`npm start`'s main.ts) in production mode, its webhooks to an https receiver
 *   verifying them with the SDK (`@paygate/merchant`), which also makes every call.
 *
 * Three EUR payouts are confirmed: one file arrives at the bank, valid against the EPC XSD; the
 * bank rejects one and books two, then returns one booked payout: the merchant gets SUCCEEDED,
 * FAILED and then REFUNDED webhooks with the refund fields, and the balance matches to the cent.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { validateXml } from '@paygate/iso20022';
import { nodeWebhookHandler, PaygateClient, type Payout, type WebhookEvent, WebhookVerifier } from '@paygate/merchant';
import { generateSigningKey } from '@paygate/protocol';
import { databases } from './harness.js';
import {
  BANK_SIMULATOR,
  productionStorage,
  PSP_SIMULATOR,
  runCliAsync,
  lastLines,
  type Spawned,
  spawnNode,
  spawnPlatform,
  stopSpawned,
  waitFor,
  waitForLine,
} from './spawned.js';
import { freePort, sshKeyPair } from './sshd-fixture.js';
import { RECEIVER_CERT, RECEIVER_KEY } from './tls-fixture.js';

const SECRET = 'e2e-psp-secret-0123456789abcdef';
/** Preload that SIGKILLs the platform right after an SFTP rename onto a name ending in KILL_AFTER_RENAME_TO. */
const KILL_AFTER_RENAME = join(import.meta.dirname, 'fixtures/kill-after-rename.mjs');
const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';
const MASTER_KEY = Buffer.alloc(32, 11).toString('base64');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

for (const database of databases()) {
  describe(`SEPA payouts through paygate-bank (${database})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'paygate-sepa-e2e-'));
    let bank: Spawned | undefined;
    let psp: Spawned | undefined;
    let platform: Spawned | undefined;
    let dropDb: (() => Promise<void>) | undefined;
    let bankControl = '';
    let bankDataDir = '';
    let pspUrl = '';
    let platformUrl = '';
    let platformEnv: Record<string, string> = {};
    let shop: PaygateClient;
    const events: WebhookEvent[] = [];
    let closeReceiver: () => Promise<void> = async () => {};
    let receiverUrl = '';

    before(async () => {
      // The platform's SSH key pair: the public half is the bank's one authorized key.
      const keys = sshKeyPair();
      const privateKeyFile = join(dir, 'bank_ed25519');
      writeFileSync(privateKeyFile, keys.privateKey, { mode: 0o600 });
      writeFileSync(`${privateKeyFile}.pub`, `${keys.publicKey}\n`);
      bankDataDir = join(dir, 'bank');
      const bankPort = await freePort();
      bank = spawnNode(BANK_SIMULATOR, {
        HOST: '127.0.0.1',
        BANK_SFTP_PORT: String(await freePort()),
        BANK_PORT: String(bankPort),
        BANK_DATA_DIR: bankDataDir,
        BANK_AUTHORIZED_KEY: `${privateKeyFile}.pub`,
        BANK_BATCH_EVERY: '2s',
        BANK_POLL_EVERY: '1s',
        BANK_BOOK_AFTER: '5s',
        LOG_LEVEL: 'info',
      });
      await waitForLine(bank, /paygate-bank listening/);
      bankControl = `http://127.0.0.1:${bankPort}/control`;
      const snippet = JSON.parse(readFileSync(join(bankDataDir, 'channel.json'), 'utf8')) as Record<string, unknown>;
      assert.equal(snippet.privateKeyFile, privateKeyFile, 'the snippet names the platform key beside its .pub');

      const pspPort = await freePort();
      pspUrl = `http://127.0.0.1:${pspPort}`;
      psp = spawnNode(PSP_SIMULATOR, {
        HOST: '127.0.0.1',
        PSP_PORT: String(pspPort),
        PSP_SECRET: SECRET,
        PSP_DATA_DIR: join(dir, 'psp'),
        PSP_TICK_MS: '25',
        LOG_LEVEL: 'info',
      });
      await waitForLine(psp, /paygate-psp listening/);

      const channels = join(dir, 'channels.json');
      writeFileSync(
        channels,
        JSON.stringify({
          channels: [
            { ...snippet, timeoutMs: 2_000 },
            {
              name: 'sim',
              kind: 'psp-sim',
              methods: [{ currency: 'EUR', code: 'SEPA' }],
              payouts: [],
              baseUrl: pspUrl,
              secret: SECRET,
            },
          ],
        }),
      );
      const certFile = join(dir, 'receiver-cert.pem');
      writeFileSync(certFile, RECEIVER_CERT);
      const storage = await productionStorage(database, dir);
      dropDb = storage.drop;
      const port = await freePort();
      platformUrl = `http://127.0.0.1:${port}`;
      platformEnv = {
        HOST: '127.0.0.1',
        PORT: String(port),
        PAYGATE_ENV: 'production',
        PAYGATE_MASTER_KEY: MASTER_KEY,
        PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
        PAYGATE_CHANNELS: channels,
        PAYGATE_PUBLIC_URL: platformUrl,
        PAYGATE_SHUTDOWN_DRAIN: '0',
        PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s',
        NODE_EXTRA_CA_CERTS: certFile,
        LOG_LEVEL: 'info',
        ...storage.env,
      };
      platform = await spawnPlatform(platformEnv);

      const key = generateSigningKey();
      const onboarded = await fetch(`${platformUrl}/admin/v1/merchants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'SEPA shop', publicKey: Buffer.from(key.publicKey).toString('base64') }),
      });
      const onboarding = (
        (await onboarded.json()) as {
          data: {
            accessKey: string;
            bodyKey: { keyId: string; publicKey: string };
            webhookKeys: { keyid: string; publicKey: string }[];
          };
        }
      ).data;
      shop = new PaygateClient({
        baseUrl: platformUrl,
        accessKey: onboarding.accessKey,
        privateKey: key.secretKey,
        bodyKey: onboarding.bodyKey,
        retryDelayMs: 50,
      });
      const handler = nodeWebhookHandler({
        verifier: new WebhookVerifier({ webhookKeys: onboarding.webhookKeys }),
        onEvent: (event) => void events.push(event),
      });
      const https = createHttpsServer({ key: RECEIVER_KEY, cert: RECEIVER_CERT }, (req, res) => void handler(req, res));
      await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
      receiverUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}/webhooks`;
      closeReceiver = async () => {
        https.closeAllConnections();
        await new Promise<void>((resolve) => https.close(() => resolve()));
      };
    });

    after(async () => {
      await stopSpawned(platform);
      await stopSpawned(bank);
      await stopSpawned(psp);
      await closeReceiver();
      await dropDb?.();
      rmSync(dir, { recursive: true, force: true });
    });

    /** What the bank has taken in, file by file. */
    const bankUploads = async () => {
      const answer = (await (await fetch(`${bankControl}/files`)).json()) as {
        data?: { uploads: { name: string; msgId: string; outcome: string; keptAs: string }[] };
        uploads?: { name: string; msgId: string; outcome: string; keptAs: string }[];
      };
      return answer.data?.uploads ?? answer.uploads ?? [];
    };

    /** The channel's files as the platform's operator API lists them: sent to the bank, received from it. */
    const platformFiles = async () => {
      const answer = await fetch(`${platformUrl}/admin/v1/channels/bank/files`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return ((await answer.json()) as { data: { sent: { state: string }[]; received: unknown[] } }).data;
    };

    /** `count` EUR payouts of `amount` to one payee, each created and confirmed (PROCESSING). */
    const confirmedPayouts = async (prefix: string, count: number, amount: string): Promise<Payout[]> => {
      const confirmed: Payout[] = [];
      for (let i = 0; i < count; i++) {
        const payout = await shop.payouts.create({
          merchantOrderNo: `${prefix}-${i}-${randomUUID().slice(0, 8)}`,
          currency: 'EUR',
          amount,
          webhookUrl: receiverUrl,
          payee: { name: 'Ana Souza', accountNumber: 'DE02120300000000202051' },
        });
        confirmed.push(await shop.payouts.confirm({ orderNo: payout.orderNo }));
      }
      return confirmed;
    };

    /** No file waits in the customer's upload directory (sftp/<user>/upload) for the bank to take it in. */
    const uploadDirectoryEmpty = () =>
      readdirSync(join(bankDataDir, 'sftp')).every((user) =>
        readdirSync(join(bankDataDir, 'sftp', user, 'upload')).every((name) => !name.endsWith('.xml')),
      );

    /**
     * Every payout in exactly one file the bank took; any other upload is one the bank refused as
     * a repeat (the same MsgId again, sent after a crash).
     */
    const assertPaidOnce = (uploads: Awaited<ReturnType<typeof bankUploads>>, payouts: readonly Payout[]) => {
      assert.ok(
        uploads.every((upload) => upload.outcome === 'accepted' || upload.outcome === 'repeated'),
        JSON.stringify(uploads),
      );
      const taken = uploads.filter((upload) => upload.outcome === 'accepted');
      for (const payout of payouts) {
        const holding = taken.filter((upload) =>
          readFileSync(join(bankDataDir, upload.keptAs), 'utf8').includes(`<EndToEndId>${payout.orderNo}</EndToEndId>`),
        );
        assert.equal(holding.length, 1, `${payout.orderNo} in ${holding.length} files`);
      }
    };

    const final = (orderNo: string, status: string) =>
      waitFor(
        () => events.find((event) => event.orderNo === orderNo && event.status === status),
        `${orderNo} ${status} webhook`,
      );

    it('funded, three payouts confirmed: one file at the bank, valid; two booked, one rejected, one returned', async () => {
      // Funding: an EUR payment through the provider, paid there.
      const payment = await shop.payments.create({
        merchantOrderNo: `FUND-${randomUUID().slice(0, 8)}`,
        currency: 'EUR',
        amount: '500.00',
        paymentMethod: { code: 'SEPA' },
        webhookUrl: receiverUrl,
      });
      const paid = await post(`${pspUrl}/control/payments/complete`, {
        reference: payment.orderNo,
        status: 'SUCCEEDED',
      });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      await final(payment.orderNo, 'SUCCEEDED');
      const start = (await shop.balances()).find((b) => b.currency === 'EUR');
      assert.ok(start && Number(start.available) > 0, JSON.stringify(start));

      // Invalid payee details are refused before anything is reserved.
      await assert.rejects(
        shop.payouts.create({
          merchantOrderNo: 'BAD-IBAN',
          currency: 'EUR',
          amount: '1.00',
          webhookUrl: receiverUrl,
          payee: { name: 'Ana', accountNumber: 'DE89370400440532013001' },
        }),
        (error: Error & { code?: string }) => /VALIDATION_FAILED/.test(`${error.code} ${error.message}`),
      );

      const payees = [
        { name: 'José Müller & Søn', accountNumber: 'FR1420041010050500013M02606', bankCode: 'BNPAFRPP' },
        { name: 'Zoë Ærøskøbing', accountNumber: 'NL91ABNA0417164300' },
        { name: "O'Brien (Ltd.)", accountNumber: 'BE68539007547034' },
      ];
      const payouts: Payout[] = [];
      for (const [i, payee] of payees.entries()) {
        const created = await shop.payouts.create({
          merchantOrderNo: `EU-${i}-${randomUUID().slice(0, 8)}`,
          currency: 'EUR',
          amount: `${10 + i}.25`,
          webhookUrl: receiverUrl,
          payee,
        });
        payouts.push(await shop.payouts.confirm({ orderNo: created.orderNo }));
      }
      const [booked, rejected, returned] = payouts as [Payout, Payout, Payout];
      assert.ok(payouts.every((p) => p.status === 'PROCESSING'));

      // One file arrives (batchEvery after the first confirm), the bank takes it as valid.
      const files = await waitFor(async () => {
        const uploads = await bankUploads();
        // The bank journals a file before it moves it into received/ (so that a crash between the
        // two finishes the move at start): wait for the move too.
        return uploads.length > 0 && uploads.every((upload) => existsSync(join(bankDataDir, upload.keptAs)))
          ? uploads
          : undefined;
      }, 'the file at the bank');
      assert.equal(files.length, 1);
      assert.equal(files[0]?.outcome, 'accepted', JSON.stringify(files));
      const xml = readFileSync(join(bankDataDir, files[0]?.keptAs as string));
      assert.deepEqual(await validateXml(xml, 'pain.001.001.09'), { valid: true });
      assert.match(xml.toString('utf8'), /<Nm>Jose Muller \+ Son<\/Nm>/);

      // The bank rejects one before booking; books the others.
      const reject = await post(`${bankControl}/transfers/reject`, { endToEndId: rejected.orderNo, reason: 'AC04' });
      assert.equal(reject.status, 200, JSON.stringify(reject.body));
      await final(rejected.orderNo, 'FAILED');
      await final(booked.orderNo, 'SUCCEEDED');
      await final(returned.orderNo, 'SUCCEEDED');

      // Then returns one booked payout.
      const back = await post(`${bankControl}/transfers/return`, { endToEndId: returned.orderNo, reason: 'AC04' });
      assert.equal(back.status, 200, JSON.stringify(back.body));
      const refunded = await final(returned.orderNo, 'REFUNDED');
      if (refunded.orderType !== 'PAYOUT' || refunded.status !== 'REFUNDED') assert.fail('a payout REFUNDED event');
      assert.equal(refunded.refundAmount, '12.25');
      assert.ok(refunded.refundNo);
      assert.ok(refunded.refundTime);
      assert.deepEqual(
        events.filter((e) => e.orderNo === returned.orderNo).map((e) => e.status),
        ['SUCCEEDED', 'REFUNDED'],
      );

      // The bank sends every status file again under a new name: nothing changes (no webhook, no money).
      const bankFiles = async () => {
        const answer = (await (await fetch(`${bankControl}/files`)).json()) as {
          data?: { statusFiles: { name: string }[] };
          statusFiles?: { name: string }[];
        };
        return answer.data?.statusFiles ?? answer.statusFiles ?? [];
      };
      const sent = await bankFiles();
      const eventsBefore = events.length;
      for (const file of sent) {
        const again = await post(`${bankControl}/files/duplicate`, { name: file.name });
        assert.equal(again.status, 200, JSON.stringify(again.body));
      }
      await waitFor(
        async () => (await platformFiles()).received.length >= sent.length * 2 || undefined,
        'the repeated files read',
      );
      await sleep(500);
      assert.equal(events.length, eventsBefore, 'no webhook for a repeated file');

      // The balance to the cent: funded − (10.25 + fee) − (12.25 + fee) + 12.25 returned; the rejected one released.
      const cents = (text: string) => Math.round(Number(text) * 100);
      const fees = cents(booked.fee) + cents(returned.fee);
      const balance = (await shop.balances()).find((b) => b.currency === 'EUR');
      assert.equal(cents(balance?.available ?? '0'), cents(start.available) - 1_025 - fees);
      assert.equal(cents(balance?.reserved ?? '1'), 0);

      // The operator sees the file sent and the bank's files read.
      const cli = await runCliAsync(['channels', 'files', '--channel', 'bank', '--json'], {
        PAYGATE_URL: platformUrl,
        PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      });
      assert.equal(cli.status, 0, cli.stderr);
      const listed = JSON.parse(cli.stdout) as {
        sent: { msgId: string; state: string }[];
        received: { state: string }[];
      };
      assert.equal(listed.sent.length, 1);
      assert.equal(listed.sent[0]?.msgId, files[0]?.msgId);
      assert.equal(listed.sent[0]?.state, 'acknowledged');
      assert.ok(listed.received.length >= 2 && listed.received.every((f) => f.state === 'applied'));
      const errors = (platform?.output() ?? '').split('\n').filter((line) => /"level":(5|6)\d/.test(line));
      assert.deepEqual(errors, []);
    });

    it('the platform killed right after building a file (its upload in flight or not begun): restarted, every payout is in exactly one file', async () => {
      const created = await confirmedPayouts('KILL', 4, '1.50');
      const built = (platform?.output().match(/"msg":"sepa batch built"/g) ?? []).length;
      await waitFor(
        () => (platform?.output().match(/"msg":"sepa batch built"/g) ?? []).length > built,
        'the next batch built',
      );
      platform?.child.kill('SIGKILL');
      await platform?.exited;
      platform = await spawnPlatform(platformEnv);
      for (const payout of created) await final(payout.orderNo, 'SUCCEEDED');
      const uploads = await bankUploads();
      assertPaidOnce(uploads, created);
    });

    it('the platform killed the moment the bank has the file, before it records the upload: restarted, the file is not paid twice', async () => {
      // The bank has the renamed <MsgId>.xml; the platform dies before marking the file uploaded.
      // First every earlier file is recorded as uploaded, so that the rename the preload watches
      // for is this test's file: the previous kill can land between a rename and its mark too, and
      // that file is recorded once the bank's answer on it is read (or it is sent again after its
      // lease).
      await waitFor(
        async () => (await platformFiles()).sent.every((file) => file.state !== 'built') || undefined,
        'every earlier file recorded as uploaded',
      );
      await stopSpawned(platform);
      platform = await spawnPlatform({ ...platformEnv, KILL_AFTER_RENAME_TO: '.xml' }, undefined, [
        '--import',
        KILL_AFTER_RENAME,
      ]);
      const killed = platform;
      const before = new Set((await bankUploads()).map((upload) => upload.name));
      const created = await confirmedPayouts('RENAMED', 2, '2.75');
      assert.equal(await killed.exited, null);
      assert.equal(killed.child.signalCode, 'SIGKILL');
      assert.doesNotMatch(killed.output(), /"msg":"sepa file uploaded"/, 'killed before the upload was recorded');
      const arrived = await waitFor(
        async () => {
          const fresh = (await bankUploads()).filter((upload) => !before.has(upload.name));
          return fresh.length > 0 ? fresh : undefined;
        },
        'the file at the bank',
        undefined,
        async () =>
          [
            `the bank's uploads: ${JSON.stringify(await bankUploads())}`,
            lastLines('the bank', bank),
            lastLines('the killed platform', killed),
          ].join('\n'),
      );
      assert.equal(arrived.length, 1, JSON.stringify(arrived));
      const msgId = arrived[0]?.msgId as string;

      platform = await spawnPlatform(platformEnv);
      for (const payout of created) await final(payout.orderNo, 'SUCCEEDED');
      // The restarted platform reads the bank's answer on the file and records it as uploaded from
      // that, or (its lease run out first) finds it already there or sends the same bytes, which
      // the bank takes as a repeat: either way it is recorded and nothing is booked twice.
      const recorded = new RegExp(
        `"msgId":"${msgId}".*"msg":"(sepa file uploaded|sepa file answered by the bank before its upload was recorded)`,
      );
      await waitFor(() => recorded.test(platform?.output() ?? ''), `${msgId} recorded as uploaded`);
      // Whatever it put into the upload directory the bank has taken in (a file sent again included).
      await waitFor(() => uploadDirectoryEmpty() || undefined, 'the bank to take in every file');
      const uploads = await bankUploads();
      assertPaidOnce(uploads, created);
      assert.equal(
        uploads.filter((upload) => upload.msgId === msgId && upload.outcome === 'accepted').length,
        1,
        JSON.stringify(uploads),
      );
      for (const payout of created) {
        const statuses = events.filter((event) => event.orderNo === payout.orderNo).map((event) => event.status);
        assert.deepEqual(statuses, ['SUCCEEDED'], payout.orderNo);
      }
    });
  });
}
