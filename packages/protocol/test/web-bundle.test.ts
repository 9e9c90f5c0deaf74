/**
 * The web entry builds for a browser with nothing from Node (esbuild, `platform: 'browser'`,
 * nothing external: a `node:` import or a Node built-in fails the build) and uses no `Buffer`;
 * then the bundle runs in Chromium, signing a request and verifying a webhook there, and the
 * Node entry checks what the page returned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import * as node from '@paygate/protocol';
import type * as Web from '@paygate/protocol/web';
import {
  ACCESS_KEY_ID,
  BODY_KEY_ID,
  bodyKey,
  EVENT_ID,
  freshUuid,
  merchantKey,
  NOW,
  PAYMENTS_PATH,
  PLAINTEXT,
  signedWebhook,
  verifierDeps,
  WEBHOOK_KEY_ID,
  webhookKey,
} from './support.js';

const ENTRY = new URL('../src/web/index.ts', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SKIP_BROWSER =
  process.env.PAYGATE_SKIP_BROWSER === '1' ? 'PAYGATE_SKIP_BROWSER=1: the browser (Chromium) tests are skipped' : false;

async function bundle(format: 'esm' | 'iife') {
  return build({
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'browser',
    format,
    ...(format === 'iife' ? { globalName: 'PaygateWeb' } : {}),
    external: [],
    // Comments and TSDoc dropped, so that what remains is code.
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

describe('the web entry as a browser bundle', () => {
  it('builds for the browser with no Node built-in, no node: specifier and no Buffer', async () => {
    const result = await bundle('esm');
    assert.deepEqual(result.errors, []);
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(inputs.some((path) => path.endsWith('src/web/index.ts')));
    assert.ok(inputs.some((path) => path.includes('@noble/curves')));
    for (const input of Object.values(result.metafile.inputs)) {
      for (const imported of input.imports) assert.doesNotMatch(imported.path, /^node:/);
    }
    const code = result.outputFiles[0]?.text ?? '';
    assert.ok(code.length > 10_000);
    // Matches shown in context rather than the whole bundle in the failure message.
    const around = (pattern: RegExp) => [...code.matchAll(pattern)].map((m) => code.slice(m.index - 40, m.index + 40));
    assert.deepEqual(around(/node:/g), []);
    assert.deepEqual(around(/(?<![\w$])Buffer(?![\w$])/g), []);
    assert.deepEqual(around(/(?<![\w$.])require\(/g), []);
  });

  it('fails to build a module of the Node entry the same way (the check can fail)', async () => {
    const result = await build({
      entryPoints: [new URL('../src/keys.ts', import.meta.url).pathname],
      bundle: true,
      platform: 'browser',
      external: [],
      write: false,
      logLevel: 'silent',
    }).catch((error: { errors: unknown[] }) => error);
    assert.ok('errors' in result && result.errors.length > 0);
  });
});

describe('the web entry in Chromium', { skip: SKIP_BROWSER }, () => {
  let browser: Browser;
  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM} (or set CHROMIUM_PATH)`);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox'] });
  });
  after(async () => browser?.close());

  it('signs a write and a read request and verifies a webhook in the page', async () => {
    const code = (await bundle('iife')).outputFiles[0]?.text ?? '';
    const page = await browser.newPage();
    // A secure context (WebCrypto's subtle exists only there): an http://localhost page, served
    // by the test itself.
    await page.route('http://localhost/**', (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>paygate web</title>' }),
    );
    await page.goto('http://localhost/');
    await page.addScriptTag({ content: code });

    const webhook = signedWebhook();
    const input = {
      privateKeyPem: node.signingKeyToPem(merchantKey).privateKeyPem,
      bodyKey: { keyId: BODY_KEY_ID, publicKey: bodyKey.publicKey.toString('base64') },
      accessKey: ACCESS_KEY_ID,
      now: NOW,
      writeNonce: freshUuid(),
      readNonce: freshUuid(),
      idempotencyKey: freshUuid(),
      plaintext: PLAINTEXT.toString('utf8'),
      path: PAYMENTS_PATH,
      webhookKey: { keyid: WEBHOOK_KEY_ID, publicKeyPem: node.signingKeyToPem(webhookKey).publicKeyPem },
      webhook: {
        path: webhook.path,
        query: webhook.query,
        headers: webhook.headers,
        body: Buffer.from(webhook.body).toString('utf8'),
      },
    };
    const output = await page.evaluate(async (input) => {
      const web = (globalThis as unknown as { PaygateWeb: typeof Web }).PaygateWeb;
      const key = await web.signingKeyFrom(input.privateKeyPem);
      const publicKey = web.publicKeyFrom(input.webhookKey.publicKeyPem);
      const bodyKey = web.boxPublicKeyFrom(input.bodyKey.publicKey);
      if (!key.ok || !publicKey.ok || !bodyKey.ok) throw new Error('a key did not load');
      const signer = { accessKey: input.accessKey, key: key.value, created: input.now };
      const write = await web.signWriteRequest(
        {
          path: input.path,
          plaintext: new TextEncoder().encode(input.plaintext),
          bodyKey: { keyId: input.bodyKey.keyId, publicKey: bodyKey.value },
          idempotencyKey: input.idempotencyKey,
        },
        { ...signer, nonce: input.writeNonce },
      );
      const read = await web.signReadRequest(
        { path: input.path, query: 'orderNo=P1' },
        { ...signer, nonce: input.readNonce },
      );
      const received = {
        method: 'POST',
        path: input.webhook.path,
        query: input.webhook.query,
        headers: input.webhook.headers,
        body: new TextEncoder().encode(input.webhook.body),
      };
      const deps = { now: input.now, publicKeys: new Map([[input.webhookKey.keyid, publicKey.value]]) };
      const verified = await web.verifyWebhook(received, deps);
      const altered = await web.verifyWebhook(
        { ...received, body: new TextEncoder().encode(`${input.webhook.body} `) },
        deps,
      );
      return {
        userAgent: navigator.userAgent,
        hasBuffer: 'Buffer' in globalThis,
        write: { headers: write.headers, body: web.encodeBase64(write.body) },
        read: { headers: read.headers, signatureBase: read.signatureBase },
        webhook: verified.ok ? { ok: true, eventId: verified.value.eventId, keyid: verified.value.keyid } : verified,
        altered: altered.ok ? { ok: true } : altered.error,
      };
    }, input);
    await page.close();

    assert.match(output.userAgent, /Chrome\//);
    assert.equal(output.hasBuffer, false);
    const write = await node.verifyRequest(
      {
        method: 'POST',
        path: PAYMENTS_PATH,
        query: undefined,
        headers: Object.entries(output.write.headers),
        body: Buffer.from(output.write.body, 'base64'),
      },
      verifierDeps(),
    );
    assert.ok(write.ok, JSON.stringify(!write.ok && write.error));
    assert.deepEqual(write.value.plaintext, PLAINTEXT);
    assert.equal(output.write.headers['idempotency-key'], input.idempotencyKey);

    const byNode = node.signReadRequest(
      { path: PAYMENTS_PATH, query: 'orderNo=P1' },
      { accessKey: ACCESS_KEY_ID, key: merchantKey, created: NOW, nonce: input.readNonce },
    );
    assert.deepEqual(output.read, { headers: byNode.headers, signatureBase: byNode.signatureBase });

    assert.deepEqual(output.webhook, { ok: true, eventId: EVENT_ID, keyid: WEBHOOK_KEY_ID });
    assert.deepEqual(output.altered, { check: 'digest', reason: 'Content-Digest does not match the body' });
  });
});
