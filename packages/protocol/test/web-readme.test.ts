/**
 * The README's edge-runtime example, run as written: its Worker creates a payment (the request it
 * sends passes the platform's verifier) and accepts a webhook the platform signed (and refuses
 * it altered).
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import * as node from '@paygate/protocol';
import {
  ACCESS_KEY_ID,
  BODY_KEY_ID,
  bodyKey,
  merchantKey,
  signedWebhook,
  verifierDeps,
  WEBHOOK_KEY_ID,
  WEBHOOK_URL,
  webhookKey,
} from './support.js';

const README = new URL('../README.md', import.meta.url);
// Beside the tests, so that it resolves @paygate/protocol/web as they do.
const EXAMPLE = new URL('./readme-edge-example.generated.ts', import.meta.url);

function exampleCode(): string {
  const readme = readFileSync(README, 'utf8');
  const section = readme.slice(readme.indexOf('## On edge runtimes'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(code, 'the section has a ts example');
  return code;
}

type Worker = { fetch(request: Request, env: Record<string, string>): Promise<Response> };

describe('the README’s edge-runtime example', () => {
  after(() => rmSync(EXAMPLE, { force: true }));

  it('creates a payment the platform accepts and verifies a webhook', async () => {
    writeFileSync(EXAMPLE, exampleCode());
    const worker = ((await import(EXAMPLE.href)) as { default: Worker }).default;
    const env = {
      PAYGATE_URL: 'https://api.paygate.example',
      PAYGATE_ACCESS_KEY: ACCESS_KEY_ID,
      PAYGATE_PRIVATE_KEY: node.signingKeyToPem(merchantKey).privateKeyPem,
      PAYGATE_BODY_KEY_ID: BODY_KEY_ID,
      PAYGATE_BODY_KEY: bodyKey.publicKey.toString('base64'),
      PAYGATE_WEBHOOK_KEYS: JSON.stringify([
        { keyid: WEBHOOK_KEY_ID, publicKey: webhookKey.publicKey.toString('base64') },
      ]),
    };

    const sent: Request[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      sent.push(new Request(input, init));
      return new Response('{}', { status: 201 });
    };
    try {
      const order = { merchantOrderNo: 'M-1', currency: 'BRL', amount: '10.00', paymentMethod: { code: 'PIX' } };
      const created = await worker.fetch(
        new Request('https://shop.example/checkout', { method: 'POST', body: JSON.stringify(order) }),
        env,
      );
      assert.equal(created.status, 201);
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.equal(sent.length, 1);
    const request = sent[0] as Request;
    assert.equal(request.url, 'https://api.paygate.example/api/v1/payments');
    const headers: node.HeaderPair[] = [];
    request.headers.forEach((value, name) => headers.push([name, value]));
    const verified = await node.verifyRequest(
      {
        method: 'POST',
        path: '/api/v1/payments',
        query: undefined,
        headers,
        body: new Uint8Array(await request.arrayBuffer()),
      },
      verifierDeps({ now: Math.floor(Date.now() / 1000) }),
    );
    assert.ok(verified.ok, JSON.stringify(!verified.ok && verified.error));
    assert.equal(JSON.parse(verified.value.plaintext?.toString('utf8') ?? '').merchantOrderNo, 'M-1');

    const webhook = signedWebhook({ created: Math.floor(Date.now() / 1000) });
    const delivery = (body: Uint8Array) =>
      new Request(WEBHOOK_URL, { method: 'POST', headers: webhook.headers as [string, string][], body });
    assert.equal((await worker.fetch(delivery(webhook.body), env)).status, 204);
    const altered = await worker.fetch(delivery(Buffer.concat([webhook.body, Buffer.from(' ')])), env);
    assert.equal(altered.status, 401);
    assert.equal(await altered.text(), 'digest');
  });
});
