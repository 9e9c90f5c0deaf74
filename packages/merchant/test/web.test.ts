/**
 * `@paygate/merchant/web`: the SDK's WebhookVerifier over the protocol's web entry gives the Node
 * entry's answers (events, failures, hints) on the shared vectors, verifies a Fetch API Request,
 * follows published keys, and bundles for the browser with no Node built-in and no Buffer.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import * as node from '@paygate/merchant';
import * as web from '@paygate/merchant/web';
import { headerPairs, signingKeyFrom, signWebhook } from '@paygate/protocol';
import { build } from 'esbuild';
import { vectors } from './helpers.js';

const keys = vectors.keys;
const webhookKeys = [{ keyid: keys.platform_webhook.keyid, publicKey: keys.platform_webhook.public_key_base64 }];
const clock = () => vectors.now * 1000;

type Webhook = (typeof vectors)['webhooks'][number];

function incoming(v: Webhook, alter: { target?: string; body?: string; signature?: string } = {}) {
  return {
    method: v.method,
    target: alter.target ?? v.webhook_url,
    headers: headerPairs({
      ...v.headers,
      'signature-input': v.signature_input,
      signature: alter.signature ?? v.signature,
    }),
    body: new TextEncoder().encode(alter.body ?? v.body_utf8),
  };
}

/** What a verification came to: the event and body, or the error's check, reason and hint. */
async function outcome(promise: Promise<{ event: unknown; body: Uint8Array; keyid: string }>) {
  try {
    const verified = await promise;
    return { event: verified.event, body: Buffer.from(verified.body).toString('utf8'), keyid: verified.keyid };
  } catch (error) {
    assert.ok(error instanceof Error);
    const { check, reason, hint, signatureBase } = error as node.WebhookVerificationError;
    return { name: error.name, check, reason, hint, signatureBase };
  }
}

describe('@paygate/merchant/web WebhookVerifier', () => {
  it('gives the Node verifier’s answers: events, and each refusal’s check, reason and hint', async () => {
    const options = [
      { webhookKeys, clock },
      { webhookKeys: [{ keyid: 'wk_other', publicKey: keys.platform_webhook.public_key_base64 }], clock },
      { webhookKeys: [{ keyid: keys.platform_webhook.keyid, publicKey: keys.merchant.public_key_pem }], clock },
      { webhookKeys, clock: () => (vectors.now + 3600) * 1000 },
    ];
    let verified = 0;
    for (const option of options) {
      const byNode = new node.WebhookVerifier(option);
      const byWeb = new web.WebhookVerifier(option);
      for (const v of vectors.webhooks) {
        const cases = [
          incoming(v),
          incoming(v, { body: `${v.body_utf8} ` }),
          incoming(v, { target: `${v.webhook_url}x` }),
          incoming(v, { signature: v.signature.replace(/[A-Za-z]/, (c) => (c === 'A' ? 'B' : 'A')) }),
        ];
        for (const webhook of cases) {
          const expected = await outcome(byNode.verify(webhook));
          assert.deepEqual(await outcome(byWeb.verify(webhook)), expected);
          if ('event' in expected) verified++;
        }
      }
    }
    assert.equal(verified, vectors.webhooks.length);
  });

  it('verifies a Fetch API Request and returns the body as a Uint8Array', async () => {
    const verifier = new web.WebhookVerifier({ webhookKeys, clock });
    for (const v of vectors.webhooks) {
      const request = new Request(v.webhook_url, {
        method: 'POST',
        headers: { ...v.headers, 'signature-input': v.signature_input, signature: v.signature },
        body: v.body_utf8,
      });
      const verified = await verifier.verifyRequest(request);
      assert.ok(!Buffer.isBuffer(verified.body));
      assert.equal(new TextDecoder().decode(verified.body), v.body_utf8);
      assert.deepEqual(verified.event, web.parseWebhookEvent(new TextEncoder().encode(v.body_utf8)));
    }
  });

  it('fetches published keys with the injected fetch', async () => {
    const urls: string[] = [];
    const published = new web.PublishedWebhookKeys({
      baseUrl: 'https://api.paygate.example',
      clock,
      fetch: async (input) => {
        urls.push(String(input));
        return Response.json({ keys: webhookKeys });
      },
    });
    const verifier = new web.WebhookVerifier({ publishedKeys: published, clock });
    const v = vectors.webhooks[0] as Webhook;
    const verified = await verifier.verify(incoming(v));
    assert.equal(verified.keyid, keys.platform_webhook.keyid);
    assert.deepEqual(urls, [`https://api.paygate.example${web.WEBHOOK_KEYS_PATH}`]);
  });

  it('refuses a bad configured key at construction, as the Node verifier does', () => {
    const bad = { webhookKeys: [{ keyid: 'wk_1', publicKey: 'AAAA' }] };
    assert.throws(() => new web.WebhookVerifier(bad), web.PaygateConfigError);
    assert.throws(() => new node.WebhookVerifier(bad), node.PaygateConfigError);
  });

  it('bundles for the browser with no Node built-in, no node: specifier and no Buffer', async () => {
    const result = await build({
      entryPoints: [new URL('../src/web.ts', import.meta.url).pathname],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      external: [],
      conditions: ['source'],
      minify: true,
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    assert.deepEqual(result.errors, []);
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(inputs.some((path) => path.includes('protocol/src/web/')));
    assert.ok(!inputs.some((path) => /protocol\/src\/(keys|sodium|digest|base64)\.ts$/.test(path)), inputs.join('\n'));
    const code = result.outputFiles[0]?.text ?? '';
    const around = (pattern: RegExp) => [...code.matchAll(pattern)].map((m) => code.slice(m.index - 40, m.index + 40));
    assert.deepEqual(around(/node:/g), []);
    assert.deepEqual(around(/(?<![\w$])Buffer(?![\w$])/g), []);
    assert.deepEqual(around(/(?<![\w$.])require\(/g), []);
  });
});

describe('the README’s edge-runtime example', () => {
  const example = new URL('./readme-web-example.generated.ts', import.meta.url);
  after(() => rmSync(example, { force: true }));

  it('verifies a webhook signed now, and answers 401 naming the check for an altered one', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('### On edge runtimes')))?.[1];
    assert.ok(code);
    writeFileSync(example, code);
    const realFetch = globalThis.fetch;
    const fetched: string[] = [];
    globalThis.fetch = async (input) => {
      fetched.push(String(input));
      return Response.json({ keys: webhookKeys });
    };
    try {
      const worker = ((await import(example.href)) as { default: { fetch(request: Request): Promise<Response> } })
        .default;
      const v = vectors.webhooks[0] as Webhook;
      const key = signingKeyFrom(keys.platform_webhook.seed_base64);
      assert.ok(key.ok);
      const signed = signWebhook(
        { url: v.webhook_url, body: Buffer.from(v.body_utf8), eventId: v.headers['webhook-event-id'] as string },
        {
          keyid: keys.platform_webhook.keyid,
          key: key.value,
          created: Math.floor(Date.now() / 1000),
          nonce: crypto.randomUUID(),
        },
      );
      const delivery = (body: string) => new Request(v.webhook_url, { method: 'POST', headers: signed.headers, body });
      assert.equal((await worker.fetch(delivery(v.body_utf8))).status, 204);
      const altered = await worker.fetch(delivery(`${v.body_utf8} `));
      assert.equal(altered.status, 401);
      assert.deepEqual(await altered.json(), { check: 'digest' });
      assert.deepEqual(fetched, [`https://api.paygate.example${web.WEBHOOK_KEYS_PATH}`]);
    } finally {
      globalThis.fetch = realFetch;
    }
  });
});
