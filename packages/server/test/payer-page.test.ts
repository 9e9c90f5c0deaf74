/**
 * The payer page (issue 39, items 2 and 3): anyone holding a payment's link sees the payer's name
 * and a masked document number only (the authenticated API and the webhook keep the whole one),
 * and the page speaks the payer's language (pt-BR, es-MX, en) from Accept-Language or the link's
 * `lang`, with amounts and dates in that locale's format; its favicon is an SVG. The production
 * payer page (a Pix channel's) is covered in pix-e2e.test.ts; this file drives the sandbox page.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Payment } from '@paygate/wire';
import { acceptedLanguages, CATALOGUE_DIR, chooseLocale, LOCALES } from '../src/modules/cashier/i18n.js';
import { maskDocument } from '../src/modules/cashier/mask.js';
import {
  createMerchant,
  databases,
  get,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';

const catalogue = (locale: string) =>
  JSON.parse(readFileSync(join(CATALOGUE_DIR, `${locale}.json`), 'utf8')) as Record<string, string>;

/** The text a reader sees: tags out, entities decoded, spaces (the no-break ones included) folded. */
const visibleText = (html: string) =>
  html
    .replace(/<style>[\s\S]*?<\/style>|<script>[\s\S]*?<\/script>|<svg[\s\S]*?<\/svg>/g, ' ')
    .replace(/<[^>]+>/g, '\n')
    .replaceAll('&amp;', '&')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replace(/[\u00a0\u202f]/g, ' ');

describe('masking a document number for the payer page', () => {
  it('a CPF keeps its middle six digits, formatted or not', () => {
    assert.equal(maskDocument('12345678901'), '***.456.789-**');
    assert.equal(maskDocument('123.456.789-01'), '***.456.789-**');
    assert.equal(maskDocument('01234567890'), '***.345.678-**');
  });
  it('a CNPJ keeps the six digits after its first two', () => {
    assert.equal(maskDocument('12.345.678/0001-90'), '**.345.678/****-**');
    assert.equal(maskDocument('12345678000190'), '**.345.678/****-**');
  });
  it('any other document shows at most its middle four letters or digits, fewer than half, separators kept', () => {
    assert.equal(maskDocument('GODE561231GR8'), '****5612*****');
    assert.equal(maskDocument('AB-1234/5'), '**-12**/*');
    assert.equal(maskDocument('123'), '***');
    assert.equal(maskDocument('7'), '*');
    for (const document of ['GODE561231GR8', 'X9Y8Z7W6V5U4T3S2R1Q0', '0012', 'ABCDEFGHIJKL']) {
      const shown = [...maskDocument(document)].filter((c) => c !== '*').length;
      assert.ok(shown <= 4 && shown < document.length / 2, document);
    }
  });
});

describe('choosing the language', () => {
  it('orders Accept-Language by q, the header order among equals; q=0 and junk left out', () => {
    assert.deepEqual(acceptedLanguages('de;q=0.9, es-MX;q=0.5, pt;q=0.8, en;q=0, x y, fr'), [
      'fr',
      'de',
      'pt',
      'es-MX',
    ]);
    assert.deepEqual(acceptedLanguages(undefined), []);
  });
  it('takes the first preference spoken, by tag or by language; the link overrides; English otherwise', () => {
    assert.equal(chooseLocale('pt-BR,pt;q=0.9,en;q=0.8', undefined), 'pt-BR');
    assert.equal(chooseLocale('en;q=0.4, es;q=0.7, pt-PT;q=0.6', undefined), 'es-MX');
    assert.equal(chooseLocale('de-DE, fr;q=0.9, PT;q=0.1', undefined), 'pt-BR');
    assert.equal(chooseLocale('pt-BR', 'es-mx'), 'es-MX');
    assert.equal(chooseLocale('pt-BR', 'klingon'), 'pt-BR', 'a language we do not speak in the link is ignored');
    assert.equal(chooseLocale('de, fr', undefined), 'en');
    assert.equal(chooseLocale('*', undefined), 'en');
  });
  it('every catalogue has the same keys, and pt-BR and es-MX leave nothing in English but names', () => {
    const english = catalogue('en');
    const same = new Set(['method.PIX', 'method.BOLETO', 'transfer.iban', 'transfer.bic']);
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const other = catalogue(locale);
      assert.deepEqual(Object.keys(other).sort(), Object.keys(english).sort(), locale);
      for (const [key, text] of Object.entries(other)) {
        if (!same.has(key)) assert.notEqual(text, english[key], `${locale} ${key} is still English`);
      }
    }
  });
});

for (const database of databases()) {
  describe(`the sandbox payer page (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    before(async () => {
      platform = await startTestPlatform({ database });
      merchant = await createMerchant(platform, 'Loja Exemplo');
    });
    after(() => platform.close());

    const createPayment = async (overrides: Record<string, unknown> = {}) => {
      const created = await post<Payment>(platform, merchant, '/api/v1/payments', paymentInput(overrides));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.data as Payment;
    };
    const open = (payment: Payment, headers: Record<string, string> = {}, query = '') =>
      fetch(`${payment.cashierUrl}${query}`, { headers, redirect: 'manual' });
    const pay = (payment: Payment, name: string, documentNumber: string) =>
      fetch(payment.cashierUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ action: 'pay', name, documentNumber }).toString(),
        redirect: 'manual',
      });

    it('shows the payer’s name and a masked CPF; the API and the webhook keep the whole number', async () => {
      const payment = await createPayment();
      assert.equal((await pay(payment, 'Maria Silva', '123.456.789-01')).status, 303);
      const response = await open(payment);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, /<dd data-testid="payer">Maria Silva · \*\*\*\.456\.789-\*\*<\/dd>/);
      for (const whole of ['123.456.789-01', '12345678901', '-01<', '123.']) assert.ok(!html.includes(whole), whole);

      const read = await get<Payment>(platform, merchant, '/api/v1/payments', `orderNo=${payment.orderNo}`);
      assert.deepEqual(read.body.data?.payer, { name: 'Maria Silva', documentNumber: '123.456.789-01' });
      const events = await platform.services.db.query<{ body: Uint8Array }>(
        'SELECT body FROM events WHERE order_no = $1',
        [payment.orderNo],
      );
      const event = JSON.parse(Buffer.from(events.rows[0]?.body as Uint8Array).toString()) as Payment;
      assert.equal(event.payer?.documentNumber, '123.456.789-01');
    });

    it('masks a CNPJ and other documents too, in every language', async () => {
      const cnpj = await createPayment();
      await pay(cnpj, 'Empresa Ltda', '12345678000190');
      const other = await createPayment({ currency: 'MXN', amount: '50', paymentMethod: { code: 'SPEI' } });
      await pay(other, 'José Pérez', 'GODE561231GR8');
      for (const lang of LOCALES) {
        const cnpjPage = await (await open(cnpj, {}, `?lang=${lang}`)).text();
        assert.match(cnpjPage, /Empresa Ltda · \*\*\.345\.678\/\*\*\*\*-\*\*/);
        assert.ok(!cnpjPage.includes('12345678000190') && !cnpjPage.includes('0001'), lang);
        const otherPage = await (await open(other, {}, `?lang=${lang}`)).text();
        assert.match(otherPage, /José Pérez · \*\*\*\*5612\*\*\*\*\*/);
        assert.ok(!otherPage.includes('GODE561231GR8'), lang);
      }
    });

    it('speaks Portuguese to a Brazilian browser: R$ amounts, São Paulo dates, nothing left in English', async () => {
      const payment = await createPayment({ amount: '1234.5' });
      const response = await open(payment, { 'accept-language': 'pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-language'), 'pt-BR');
      assert.match(response.headers.get('vary') ?? '', /accept-language/i);
      const html = await response.text();
      assert.match(html, /<html lang="pt-BR">/);
      const text = visibleText(html);
      assert.match(text, /R\$ 1\.234,50/);
      assert.match(text, /Pagar R\$ 1\.234,50/);
      assert.match(text, /Aguardando o pagamento\./);
      assert.match(text, /Nome do pagador/);
      const expires = new Intl.DateTimeFormat('pt-BR', {
        dateStyle: 'medium',
        timeStyle: 'short',
        timeZone: 'America/Sao_Paulo',
      }).format(payment.expiresAt);
      assert.ok(text.includes(expires.replace(/[\u00a0\u202f]/g, ' ')), `${expires} in ${text}`);
      // No sentence of the English catalogue is on the page (names like "Pix" are the same in both).
      const english = catalogue('en');
      const portuguese = catalogue('pt-BR');
      const lines = text.split('\n').map((line) => line.trim());
      for (const [key, sentence] of Object.entries(english)) {
        // The language links name each language in itself (marked with its lang attribute).
        if (key === 'language' || sentence === portuguese[key] || sentence.includes('{')) continue;
        assert.ok(!lines.includes(sentence), `"${sentence}" (${key}) is on the pt-BR page`);
      }
      assert.ok(!/\b(Pay|Payer|Order|Method|Waiting|Document|Copy|Sandbox)\b/.test(text), text);
    });

    it('speaks Mexican Spanish, English, by q-value, by the link, and English for a language it lacks', async () => {
      const payment = await createPayment({ currency: 'MXN', amount: '1500.5', paymentMethod: { code: 'SPEI' } });
      const amountOf = async (headers: Record<string, string>, query = '') => {
        const response = await open(payment, headers, query);
        const html = await response.text();
        const amount = visibleText(/<p class="amount"[^>]*>([^<]*)<\/p>/.exec(html)?.[1] ?? '');
        return { locale: response.headers.get('content-language'), amount, html };
      };
      const spanish = await amountOf({ 'accept-language': 'es-MX' });
      assert.deepEqual([spanish.locale, spanish.amount], ['es-MX', '$1,500.50']);
      assert.match(spanish.html, /Transferencia SPEI/);
      const english = await amountOf({ 'accept-language': 'en-US,en;q=0.9' });
      assert.deepEqual([english.locale, english.amount], ['en', 'MX$1,500.50']);
      assert.match(english.html, /SPEI transfer/);
      const byQ = await amountOf({ 'accept-language': 'en;q=0.3, pt-BR;q=0.6, es;q=0.9' });
      assert.equal(byQ.locale, 'es-MX', 'the highest q wins, not the first listed');
      const byLink = await amountOf({ 'accept-language': 'es-MX' }, '?lang=pt-BR');
      assert.deepEqual([byLink.locale, byLink.amount], ['pt-BR', 'MX$ 1.500,50']);
      assert.match(
        byLink.html,
        /<form method="post" action="\/cashier\/P\d+\?lang=pt-BR"/,
        'the post keeps the language',
      );
      const unknown = await amountOf({ 'accept-language': 'de-DE,fr;q=0.8' });
      assert.deepEqual([unknown.locale, unknown.amount], ['en', 'MX$1,500.50']);
      const unknownLink = await amountOf({ 'accept-language': 'es-MX' }, '?lang=de');
      assert.equal(unknownLink.locale, 'es-MX', 'a link language we lack falls back to the browser’s');
      // Each page links to itself in the other languages.
      assert.match(english.html, /<a href="\/cashier\/P\d+\?lang=pt-BR" lang="pt-BR" hreflang="pt-BR">Português<\/a>/);
    });

    it('answers a post in the page’s language: its errors, and the redirect back keeps the link’s language', async () => {
      const payment = await createPayment();
      const missing = await fetch(`${payment.cashierUrl}?lang=pt-BR`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=pay&name=&documentNumber=',
      });
      assert.equal(missing.status, 400);
      const html = await missing.text();
      assert.match(html, /id="documentNumber-error">Informe o número do documento do pagador\./);
      const invalid = await fetch(payment.cashierUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'es-MX' },
        body: 'action=pay&name=Ana&documentNumber=12%2034%3Cx',
      });
      assert.equal(invalid.status, 400);
      assert.match(await invalid.text(), /id="documentNumber-error">No se puede aceptar este número de documento/);
      const paid = await fetch(`${payment.cashierUrl}?lang=es-MX`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=pay&name=Ana&documentNumber=1234',
        redirect: 'manual',
      });
      assert.equal(paid.status, 303);
      assert.equal(paid.headers.get('location'), `/cashier/${payment.orderNo}?lang=es-MX`);
      const done = await (await open(payment, {}, '?lang=es-MX')).text();
      assert.match(done, /Pago recibido\./);
      assert.match(done, /<dd data-testid="payer">Ana · \*2\*\*<\/dd>/);
    });

    it('an unknown order is not found in the payer’s language', async () => {
      const response = await fetch(`${platform.url}/cashier/P209901010000000001`, {
        headers: { 'accept-language': 'pt-BR' },
      });
      assert.equal(response.status, 404);
      assert.match(await response.text(), /Pagamento não encontrado/);
    });

    it('has a favicon: an SVG with its type, allowed by the page’s CSP', async () => {
      const payment = await createPayment();
      const page = await open(payment);
      assert.match(await page.text(), /<link rel="icon" type="image\/svg\+xml" href="\/favicon\.svg">/);
      assert.match(page.headers.get('content-security-policy') ?? '', /img-src 'self'/);
      const icon = await fetch(`${platform.url}/favicon.svg`);
      assert.equal(icon.status, 200);
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
      assert.match(await icon.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    });
  });
}
