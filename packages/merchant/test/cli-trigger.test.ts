/**
 * `paygate-merchant trigger` and `check-receiver`, run from the sources as child processes
 * against a real platform on loopback: each event type `trigger` causes arrives at a receiver
 * built with the SDK and verifies; `check-receiver` (the platform fires the cases, signed with
 * its own webhook key) passes every case against the SDK's receiver configured from onboarding
 * as the README shows, and reports FAILs with a non-zero exit against one that accepts everything.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { nodeWebhookHandler, parseOnboarding, type WebhookEvent, WebhookVerifier } from '@paygate/merchant';
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

/** Base64 of a fresh Ed25519 public key's raw 32 bytes: a key the platform never signs with. */
const otherPublicKey = () =>
  generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');

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

  const CASES = [
    'valid',
    'bad-content-digest',
    'body-changed',
    'bad-signature',
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
  ];
  interface Report {
    passed: boolean;
    keyid: string;
    cases: { name: string; pass: boolean; expected: string; observed: string[]; answer: string | null }[];
  }

  it('check-receiver: the SDK receiver configured from onboarding as the README shows passes every case, no extra key', async () => {
    // The README's receiver: the webhook keys onboarding printed, nothing else.
    const onboarding = parseOnboarding(JSON.parse(readFileSync(join(dir, 'merchant.json'), 'utf8')));
    const received: WebhookEvent[] = [];
    const sound = createServer(
      nodeWebhookHandler({
        verifier: new WebhookVerifier({ webhookKeys: onboarding.webhookKeys }),
        onEvent: (event) => void received.push(event),
        // Refusals are what this test expects; they need not be logged.
        onError: () => undefined,
      }),
    );
    servers.push(sound);
    const soundUrl = `${await listen(sound)}/webhook/payment?shop=1`;

    const good = await run(['check-receiver', soundUrl, '--json'], env);
    assert.equal(good.code, 0, good.stdout + good.stderr);
    const report = JSON.parse(good.stdout) as Report;
    assert.equal(report.passed, true, JSON.stringify(report.cases.filter((c) => !c.pass)));
    assert.deepEqual(
      report.cases.map((c) => c.name),
      CASES,
    );
    assert.equal(report.keyid, merchant.webhookKeys[0]?.keyid, 'signed with the platform key onboarding printed');
    const valid = report.cases[0];
    assert.deepEqual([valid?.expected, valid?.observed, valid?.pass], ['accept', ['200'], true]);
    assert.deepEqual(report.cases.find((c) => c.name === 'replayed-nonce')?.observed, ['200', '401']);
    assert.match(report.cases.find((c) => c.name === 'bad-signature')?.answer ?? '', /"check":"signature"/);
    // Only the valid case and the first of the replay reached onEvent: both parse as events.
    assert.equal(received.length, 2);
    assert.equal(received[0]?.status, 'SUCCEEDED');

    const table = await run(['check-receiver', soundUrl], env);
    assert.equal(table.code, 0, table.stdout + table.stderr);
    assert.match(table.stdout, /^case +expected +observed +result$/m);
    assert.match(table.stdout, /^body-changed +refuse \(non-2xx\) +401 +PASS$/m);
    assert.match(table.stdout, /all 14 cases pass/);
  });

  it('check-receiver: `paygate-merchant listen` as the README starts it passes every case', async () => {
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', MERCHANT, 'listen', '--port', '0'],
      { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1] as string);
        });
        child.once('exit', (code) => reject(new Error(`listen exited ${code}: ${out}`)));
      });
      const result = await run(['check-receiver', `${base}/webhook`, '--json'], env);
      const report = JSON.parse(result.stdout) as Report;
      assert.equal(result.code, 0, JSON.stringify(report.cases.filter((c) => !c.pass)));
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('check-receiver: a receiver that accepts anything FAILs every tampered case, exit 1', async () => {
    const naive = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    servers.push(naive);
    const naiveUrl = `${await listen(naive)}/webhook/payment`;
    const naiveRun = await run(['check-receiver', naiveUrl], env);
    assert.equal(naiveRun.code, 1);
    assert.match(naiveRun.stdout, /^valid +accept \(2xx\) +200 +PASS$/m);
    assert.match(naiveRun.stdout, /^bad-signature +refuse \(non-2xx\) +200 +FAIL$/m);
    assert.match(naiveRun.stdout, /^replayed-nonce +refuse \(non-2xx\) +200 then 200 +FAIL$/m);
    assert.match(naiveRun.stdout, /13 of 14 cases FAIL/);
  });

  it('check-receiver: a receiver that does not trust the platform key is told why; no receiver there is one line each', async () => {
    const untrusting = createServer(
      nodeWebhookHandler({
        verifier: new WebhookVerifier({
          webhookKeys: [{ keyid: 'wk_test_other', publicKey: otherPublicKey() }],
        }),
        onEvent: () => undefined,
        onError: () => undefined,
      }),
    );
    servers.push(untrusting);
    const result = await run(['check-receiver', `${await listen(untrusting)}/webhook`], env);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^valid +accept \(2xx\) +401 +FAIL$/m);
    assert.match(result.stdout, /does the receiver trust the webhook keys onboarding printed/);

    // Nothing listens: the valid case gets no answer and the rest are not sent.
    const closed = createServer();
    const url = `${await listen(closed)}/webhook`;
    await close(closed);
    const nobody = await run(['check-receiver', url, '--json'], env);
    assert.equal(nobody.code, 1);
    const report = JSON.parse(nobody.stdout) as Report;
    assert.match(report.cases[0]?.observed[0] ?? '', /^no answer: /);
    assert.deepEqual(report.cases[1]?.observed, ['not sent']);

    const usage = await run(['check-receiver', 'ftp://x'], env);
    assert.equal(usage.code, 2);
  });
});
