/**
 * The payer page of a payment by bank transfer (issue 49, point 7; decisions.md, "Payments by bank
 * transfer"), in production on a sepa-sftp channel, in Chromium: the account, the beneficiary,
 * the amount and the reference in the payer's language, and the EPC QR code (EPC069-12), read back
 * from a screenshot with a QR reader library (jsQR) into exactly the guidelines' lines.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import jsQRModule from 'jsqr';
import type { Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import type { Payment } from '@paygate/wire';
import { launchChromium, RESULTS_DIR, SKIP_BROWSER } from '../../portal/test/chromium.js';
import { createMerchant, post, startTestPlatform, type TestMerchant, type TestPlatform } from './harness.js';
import { sshKeyPair } from './sshd-fixture.js';

/** jsQR's function: a CommonJS module whose types declare it as the default export. */
type Decode = typeof jsQRModule.default;
const jsQR: Decode = (jsQRModule as unknown as { default?: Decode }).default ?? (jsQRModule as unknown as Decode);

const DEBTOR = { name: 'Paygate Payouts SA', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };

/** The QR code in a PNG screenshot, read by jsQR: its text. */
function readQr(png: Buffer): string | undefined {
  const image = PNG.sync.read(png);
  return jsQR(
    new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length),
    image.width,
    image.height,
  )?.data;
}

describe('the payer page of a payment by bank transfer, in Chromium', { skip: SKIP_BROWSER }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-transfer-page-'));
  let platform: TestPlatform;
  let merchant: TestMerchant;
  let browser: Browser;

  before(async () => {
    const key = sshKeyPair();
    const keyFile = join(dir, 'bank_ed25519');
    writeFileSync(keyFile, key.privateKey, { mode: 0o600 });
    const channels = join(dir, 'channels.json');
    writeFileSync(
      channels,
      JSON.stringify({
        channels: [
          {
            name: 'bank',
            kind: 'sepa-sftp',
            methods: [{ currency: 'EUR', code: 'SEPA' }],
            payouts: ['EUR'],
            host: '127.0.0.1',
            port: 2222,
            username: 'paygate',
            privateKeyFile: keyFile,
            hostKey: key.fingerprint,
            uploadDir: '/upload',
            downloadDir: '/download',
            debtor: DEBTOR,
          },
        ],
      }),
    );
    platform = await startTestPlatform({
      env: { PAYGATE_ENV: 'production', PAYGATE_EMBEDDED_PRODUCTION: 'true', PAYGATE_CHANNELS: channels },
    });
    merchant = await createMerchant(platform, 'Boutique Zoë');
    browser = await launchChromium();
    mkdirSync(RESULTS_DIR, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (amount: string) => {
    const created = await post<Payment>(platform, merchant, '/api/v1/payments', {
      merchantOrderNo: `TR-${Math.random().toString(36).slice(2)}`,
      currency: 'EUR',
      amount,
      paymentMethod: { code: 'SEPA' },
      webhookUrl: 'https://shop.example/webhook',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    return created.body.data as Payment;
  };

  it('shows the account, beneficiary, amount and reference, and a QR code that reads back as the EPC lines', async () => {
    const payment = await create('12.30');
    const transfer = payment.bankTransfer;
    assert.ok(transfer);
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 420, height: 1000 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    const answer = await page.goto(payment.cashierUrl);
    assert.equal(answer?.status(), 200);
    const text = async (id: string) => (await page.getByTestId(id).textContent())?.trim();
    assert.equal(await text('transfer-iban'), 'DE89 3704 0044 0532 0130 00');
    assert.equal(await text('transfer-bic'), DEBTOR.bic);
    assert.equal(await text('transfer-beneficiary'), DEBTOR.name);
    assert.equal(await text('transfer-amount'), '€12.30');
    assert.equal(await text('transfer-reference'), transfer.reference.replace(/(.{4})(?!$)/g, '$1 '));
    // No sandbox form on a channel's payer page.
    assert.equal(await page.locator('form').count(), 0);
    const png = await page
      .getByTestId('transfer-qr')
      .screenshot({ path: join(RESULTS_DIR, 'transfer-payer-page-qr.png') });
    await page.screenshot({ path: join(RESULTS_DIR, 'transfer-payer-page-en.png'), fullPage: true });
    assert.equal(
      readQr(png),
      ['BCD', '002', '1', 'SCT', DEBTOR.bic, DEBTOR.name, DEBTOR.iban, 'EUR12.30', '', transfer.reference].join('\n'),
    );
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("speaks the payer's language (Accept-Language), with the amount in its format", async () => {
    const payment = await create('1234.50');
    const context = await browser.newContext({
      locale: 'pt-BR',
      extraHTTPHeaders: { 'accept-language': 'pt-BR,pt;q=0.9' },
    });
    const page = await context.newPage();
    await page.goto(payment.cashierUrl);
    assert.equal(await page.locator('html').getAttribute('lang'), 'pt-BR');
    assert.match((await page.getByTestId('transfer-amount').textContent()) ?? '', /€\s?1\.234,50/);
    assert.match((await page.locator('#transfer-title').textContent()) ?? '', /transferência bancária/);
    const png = await page.getByTestId('transfer-qr').screenshot();
    assert.match(readQr(png) ?? '', /\nEUR1234\.50\n\nRF\d{20}$/);
    await page.screenshot({ path: join(RESULTS_DIR, 'transfer-payer-page-pt-BR.png'), fullPage: true });
    await context.close();
  });

  it("speaks the SEPA payers' languages too, by Accept-Language: de, fr, it, nl, es, each with its links", async () => {
    const payment = await create('99.95');
    const expected = [
      ['de-DE,de;q=0.9,en;q=0.5', 'de', /99,95\s?€/, /Banküberweisung/, 'Europe/Berlin'],
      ['fr-FR,fr;q=0.9', 'fr', /99,95\s?€/, /virement bancaire/, 'Europe/Paris'],
      ['it-IT', 'it', /99,95\s?€/, /bonifico bancario/, 'Europe/Rome'],
      ['nl-NL,nl;q=0.9', 'nl', /€\s?99,95/, /bankoverschrijving/, 'Europe/Amsterdam'],
      ['es-ES,es;q=0.9', 'es', /99,95\s?€/, /transferencia bancaria/, 'Europe/Madrid'],
      ['es', 'es', /99,95\s?€/, /transferencia bancaria/, 'Europe/Madrid'],
      ['es-MX', 'es-MX', /EUR\s?99\.95/, /transferencia bancaria/, 'America/Mexico_City'],
    ] as const;
    for (const [header, locale, amount, title, zone] of expected) {
      const context = await browser.newContext({ extraHTTPHeaders: { 'accept-language': header } });
      const page = await context.newPage();
      await page.goto(payment.cashierUrl);
      assert.equal(await page.locator('html').getAttribute('lang'), locale, header);
      assert.match((await page.getByTestId('transfer-amount').textContent()) ?? '', amount, header);
      assert.match((await page.locator('#transfer-title').textContent()) ?? '', title, header);
      // The time says its zone: the zone's short name as that language writes it.
      const zoneName = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: 'short' })
        .formatToParts(payment.expiresAt)
        .find((part) => part.type === 'timeZoneName')?.value as string;
      assert.ok(((await page.getByTestId('expires').textContent()) ?? '').endsWith(zoneName), `${header}: ${zoneName}`);
      // The language links name every language the page speaks.
      const links = await page.getByRole('navigation').getByRole('link').allTextContents();
      assert.equal(links.length, 7, `${header}: ${links.join(', ')}`);
      assert.ok(links.includes('English'));
      await context.close();
    }
    // The link's language wins, as on the other pages.
    const context = await browser.newContext({ extraHTTPHeaders: { 'accept-language': 'de' } });
    const page = await context.newPage();
    await page.goto(`${payment.cashierUrl}?lang=nl`);
    assert.equal(await page.locator('html').getAttribute('lang'), 'nl');
    await context.close();
  });

  for (const [name, width] of [
    ['phone', 320],
    ['desktop', 1280],
  ] as const) {
    it(`keeps the order number on one line and shows the time with its zone (${name}, ${width} px)`, async () => {
      const payment = await create('1234.50');
      for (const header of ['en-US', 'de-DE', 'pt-BR']) {
        const context = await browser.newContext({
          viewport: { width, height: 900 },
          extraHTTPHeaders: { 'accept-language': header },
        });
        const page = await context.newPage();
        await page.goto(payment.cashierUrl);
        const orderNo = page.getByTestId('order-no');
        assert.equal((await orderNo.textContent())?.trim(), payment.orderNo);
        // Evaluated as text: this package's tests have no DOM types.
        const lines = await page.evaluate(`(() => {
          const range = document.createRange();
          range.selectNodeContents(document.querySelector('[data-testid="order-no"]'));
          return new Set(Array.from(range.getClientRects()).map((rect) => Math.round(rect.top))).size;
        })()`);
        assert.equal(lines, 1, `${header}: the order number is on one line`);
        const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
        assert.ok(overflow <= 0, `${header}: no sideways scrolling (${overflow}px)`);
        const box = await orderNo.boundingBox();
        const card = await page.locator('.card').boundingBox();
        assert.ok(box && card && box.x + box.width <= card.x + card.width, `${header}: inside the card`);
        assert.match(
          (await page.getByTestId('expires').textContent()) ?? '',
          /(UTC|MEZ|MESZ|CET|CEST|GMT[+-]\d+|BRT)$/,
        );
        await page.screenshot({
          path: join(RESULTS_DIR, `transfer-payer-page-${header}-${width}.png`),
          fullPage: true,
        });
        await context.close();
      }
    });
  }
});
