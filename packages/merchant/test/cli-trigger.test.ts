/**
 * `paygate-merchant trigger` and `check-receiver`, run from the sources as child processes
 * against a real platform on loopback: each event type `trigger` causes arrives at a receiver
 * built with the SDK and verifies; `check-receiver` passes every case against a receiver that
 * verifies properly (WebhookVerifier trusting the check key, with a replay guard) and reports
 * FAILs with a non-zero exit against one that accepts everything.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nodeWebhookHandler, type WebhookEvent, WebhookVerifier } from '@paygate/merchant';
import { createMerchant, startTestPlatform, type TestMerchant, type TestPlatform } from '../../server/test/harness.js';
import { deliverAll } from './helpers.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const MERCHANT = join(ROOT, 'packages/merchant/src/cli/main.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', MERCHANT, ...args],
      { cwd: ROOT, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('paygate-merchant trigger and check-receiver', () => {
  let dir: string;
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let env: Record<string, string>;
  const servers: Server[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paygate-merchant-trigger-'));
    platform = await startTestPlatform();
    merchant = await createMerchant(platform);
    writeFileSync(join(dir, 'private.key'), merchant.key.secretKey.toString('base64'), { mode: 0o600 });
    writeFileSync(
      join(dir, 'merchant.json'),
      JSON.stringify({
        accessKey: merchant.accessKey,
        bodyKey: { keyId: merchant.bodyKey.keyId, publicKey: merchant.bodyKey.publicKey.toString('base64') },
        webhookKeys: merchant.webhookKeys,
      }),
    );
    env = {
      PAYGATE_URL: platform.url,
      PAYGATE_PRIVATE_KEY: join(dir, 'private.key'),
      PAYGATE_ONBOARDING: join(dir, 'merchant.json'),
    };
  });
  after(async () => {
    for (const server of servers) await close(server);
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('trigger: every event type arrives at a receiver and verifies', async () => {
    const events: WebhookEvent[] = [];
    const errors: unknown[] = [];
    const receiver = createServer(
      nodeWebhookHandler({
        verifier: new WebhookVerifier({ webhookKeys: merchant.webhookKeys }),
        onEvent: (event) => void events.push(event),
        onError: (error) => void errors.push(error),
      }),
    );
    servers.push(receiver);
    const url = `${await listen(receiver)}/webhook/paygate?from=trigger`;

    const expected = {
      'payment.succeeded': ['PAYMENT', 'SUCCEEDED'],
      'payment.failed': ['PAYMENT', 'FAILED'],
      'payment.expired': ['PAYMENT', 'EXPIRED'],
      'payment.canceled': ['PAYMENT', 'CANCELED'],
      'payout.succeeded': ['PAYOUT', 'SUCCEEDED'],
      'payout.failed': ['PAYOUT', 'FAILED'],
      'payout.refunded': ['PAYOUT', 'REFUNDED'],
    } as const;
    let funded = 0;
    for (const [event, [orderType, status]] of Object.entries(expected)) {
      const result = await run(['trigger', event, '--webhook-url', url, '--json'], env);
      assert.equal(result.code, 0, `${event}: ${result.stderr}`);
      const printed = JSON.parse(result.stdout) as { orderNo: string; status: string; fundingOrderNo?: string };
      assert.equal(printed.status, status, event);
      if (printed.fundingOrderNo) funded++;
      const before = events.length;
      await deliverAll(platform);
      const arrived = events.slice(before).filter((e) => e.orderNo === printed.orderNo);
      assert.ok(
        arrived.some((e) => e.orderType === orderType && e.status === status),
        `${event}: ${JSON.stringify(events.slice(before))}`,
      );
    }
    assert.equal(funded, 1, 'the first payout was funded by a payment; the balance covered the others');
    assert.deepEqual(errors, []);

    const human = await run(['trigger', 'payment.succeeded', '--webhook-url', url], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^created payment: P\d{18} \(trigger-[\w-]+\) PENDING$/m);
    assert.match(human.stdout, /^payment\.succeeded: P\d{18} is SUCCEEDED; the platform delivers its webhook to /m);
    await deliverAll(platform);

    const bad = await run(['trigger', 'payment.refunded'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /EVENT is one of payment\.succeeded/);
  });

  it('check-receiver: all PASS against a receiver that verifies; FAILs and exit 1 against one that accepts all', async () => {
    const keyFile = join(dir, 'check.pem');
    // The first run creates the key and stops, saying how to configure the receiver.
    const first = await run(['check-receiver', 'http://127.0.0.1:9/webhook', '--key-file', keyFile, '--json']);
    assert.equal(first.code, 3, first.stderr);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const key = JSON.parse(first.stdout) as { keyid: string; publicKey: string };
    assert.equal(key.keyid, 'wk_test_check_receiver');
    assert.match(first.stderr, /configure your receiver's verifier with this extra key while testing/i);
    assert.match(first.stderr, new RegExp(key.publicKey.replace(/[+/]/g, '\\$&')));

    const nonces = new Set<string>();
    const sound = createServer(
      nodeWebhookHandler({
        verifier: new WebhookVerifier({
          webhookKeys: [...merchant.webhookKeys, { keyid: key.keyid, publicKey: key.publicKey }],
          consumeNonce: (nonce) => !nonces.has(nonce) && Boolean(nonces.add(nonce)),
        }),
        onEvent: () => undefined,
        // Refusals are what this test expects; they need not be logged.
        onError: () => undefined,
      }),
    );
    const naive = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    servers.push(sound, naive);
    const soundUrl = `${await listen(sound)}/webhook/payment?shop=1`;
    const naiveUrl = `${await listen(naive)}/webhook/payment`;

    const good = await run(['check-receiver', soundUrl, '--key-file', keyFile, '--json']);
    const report = JSON.parse(good.stdout) as {
      passed: boolean;
      cases: { name: string; pass: boolean; got: string[] }[];
    };
    assert.equal(good.code, 0, JSON.stringify(report.cases.filter((c) => !c.pass)));
    assert.equal(report.passed, true);
    assert.deepEqual(
      report.cases.map((c) => c.name),
      [
        'valid',
        'bad-content-digest',
        'body-changed',
        'wrong-key',
        'unknown-keyid',
        'expired',
        'created-in-future',
        'lifetime-over-300s',
        'replayed-nonce',
        'event-id-mismatch',
        're-serialized-body',
        'missing-signature',
        'missing-signature-input',
        'missing-signature-headers',
      ],
    );
    assert.deepEqual(report.cases.find((c) => c.name === 'replayed-nonce')?.got, ['200', '401']);

    const table = await run(['check-receiver', soundUrl, '--key-file', keyFile]);
    assert.equal(table.code, 0, table.stdout + table.stderr);
    assert.match(table.stdout, /^case +expected +got +result$/m);
    assert.match(table.stdout, /^body-changed +refuse \(non-2xx\) +401 +PASS$/m);
    assert.match(table.stdout, /all 14 cases pass/);

    const naiveRun = await run(['check-receiver', naiveUrl, '--key-file', keyFile]);
    assert.equal(naiveRun.code, 1);
    assert.match(naiveRun.stdout, /^valid +accept \(2xx\) +200 +PASS$/m);
    assert.match(naiveRun.stdout, /^wrong-key +refuse \(non-2xx\) +200 +FAIL$/m);
    assert.match(naiveRun.stdout, /^replayed-nonce +refuse \(non-2xx\) +200 then 200 +FAIL$/m);
    assert.match(naiveRun.stdout, /13 of 14 cases FAIL/);

    // A receiver that does not trust the key refuses even the valid webhook, and is told why.
    const untrusting = await run(['check-receiver', soundUrl, '--key-file', keyFile, '--keyid', 'wk_test_other']);
    assert.equal(untrusting.code, 1);
    assert.match(untrusting.stdout, /^valid +accept \(2xx\) +401 +FAIL$/m);
    assert.match(untrusting.stdout, /is the receiver configured with the key above/);
    assert.ok(readFileSync(keyFile, 'utf8').includes('PRIVATE KEY'));
  });
});
