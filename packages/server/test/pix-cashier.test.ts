/**
 * The sandbox cashier page for PIX (issue 26, item 2): the built-in sandbox channel's Pix payment
 * shows a valid EMV BR Code (parsed back, CRC16 checked, by `@paygate/pix`) as text with a copy
 * button and as a QR code, its one script allowed by its hash, the sandbox form still there; other
 * methods show none.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parseBrCode } from '@paygate/pix';
import { COPY_SCRIPT } from '../src/modules/cashier/page.js';
import {
  createMerchant,
  paymentInput,
  post,
  startTestPlatform,
  type TestPlatform,
  type TestMerchant,
} from './harness.js';

const unescape = (html: string) =>
  html
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');

describe('sandbox cashier page for PIX', () => {
  let platform: TestPlatform;
  let merchant: TestMerchant;
  before(async () => {
    platform = await startTestPlatform();
    merchant = await createMerchant(platform, 'Loja São João & Filhos Comércio');
  });
  after(() => platform.close());

  const open = async (overrides: Record<string, unknown>) => {
    const created = await post<{ orderNo: string; cashierUrl: string }>(
      platform,
      merchant,
      '/api/v1/payments',
      paymentInput(overrides),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const page = await fetch(created.body.data?.cashierUrl as string);
    assert.equal(page.status, 200);
    return { orderNo: created.body.data?.orderNo as string, page, html: await page.text() };
  };

  it('shows a valid BR Code with CRC16, a copy button and a QR code; the sandbox form stays', async () => {
    const { orderNo, page, html } = await open({ amount: '99.90' });
    const text = /<textarea id="pix-code"[^>]*>([^<]+)<\/textarea>/.exec(html)?.[1];
    assert.ok(text, 'the code as text');
    const code = parseBrCode(unescape(text));
    assert.equal(code.amount, '99.90');
    assert.equal(code.currency, '986');
    assert.equal(code.countryCode, 'BR');
    assert.equal(code.merchantName, 'Loja Sao Joao Filhos Come');
    assert.equal(code.txid, orderNo);
    assert.match(html, /data-testid="pix-qr"[^>]*><svg [^>]*viewBox/);
    assert.match(
      html,
      /<button class="copy" type="button" data-copy="pix-code" data-copied="Copied">Copy the code<\/button>/,
    );
    const hash = createHash('sha256').update(COPY_SCRIPT).digest('base64');
    assert.ok((page.headers.get('content-security-policy') ?? '').includes(`script-src 'sha256-${hash}'`));
    assert.ok(html.includes(`<script>${COPY_SCRIPT}</script>`));
    assert.match(html, /name="action" value="pay"/);
  });

  it('other methods show no Pix code', async () => {
    const { html } = await open({ paymentMethod: { code: 'BOLETO' } });
    assert.doesNotMatch(html, /pix-code/);
    assert.doesNotMatch(html, /<script>/);
  });
});
