import type { FieldError } from '../../errors.js';
import type { PaymentView } from '../payments/service.js';
import type { Messages } from './i18n.js';
import { maskDocument } from './mask.js';

/** What the cashier page shows. */
export interface CashierPage {
  readonly merchantName: string;
  readonly payment: PaymentView;
  /** Whether the payer can still act (PENDING and not past its expiry). */
  readonly open: boolean;
  readonly values?: { name: string; documentNumber: string };
  readonly errors?: readonly FieldError[];
  /**
   * A Pix payment's copy-and-paste code (the provider's `pixCopiaECola`, or the sandbox's own BR
   * Code) and its QR code as an SVG drawn by the `qrcode` library; shown while the payment is open.
   */
  readonly pix?: { readonly code: string; readonly qrSvg: string };
  /**
   * A payment by bank transfer's details as people read them (the IBAN and the reference in groups
   * of four), the EPC QR code's payload and its SVG; shown while the payment is open.
   */
  readonly transfer?: {
    readonly iban: string;
    readonly bic?: string;
    readonly beneficiary: string;
    readonly reference: string;
    readonly payload: string;
    readonly qrSvg: string;
  };
  /** A channel's payer page (production): the code only, no sandbox form. */
  readonly payerOnly?: boolean;
  /** The page's words, amounts and dates, in the payer's language. */
  readonly messages: Messages;
  /** The link's `lang` parameter, when it chose the language: the form posts back with it. */
  readonly lang?: string | undefined;
}

/**
 * The copy button's script, the page's only one: its hash is the whole of the CSP's script-src.
 * Without script the code is still in a read-only text box to select and copy.
 */
export const COPY_SCRIPT = `document.querySelectorAll('button[data-copy]').forEach(function (b) {
  b.addEventListener('click', function () {
    var code = document.getElementById(b.getAttribute('data-copy'));
    code.select();
    var done = function () { b.textContent = b.getAttribute('data-copied'); };
    if (navigator.clipboard) navigator.clipboard.writeText(code.value).then(done, function () {});
    else if (document.execCommand('copy')) done();
  });
});`;

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and double-quoted attribute values. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** Inline styles only (the page's CSP allows no other source); colours meet WCAG AA contrast. */
const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:28rem;margin:2rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #d1d5db;border-radius:.75rem;padding:1.5rem;box-shadow:0 1px 2px rgba(0,0,0,.05)}
.badge{display:inline-block;background:#fef3c7;color:#78350f;border:1px solid #b45309;border-radius:999px;padding:0 .6rem;font-size:.8rem;font-weight:600}
h1{font-size:1.25rem;margin:.5rem 0 1rem}
.amount{font-size:2rem;font-weight:700;margin:0}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:1rem 0}
dt{color:#4b5563}dd{margin:0;font-weight:500;overflow-wrap:anywhere}
.order-no{white-space:nowrap;overflow-wrap:normal;font-variant-numeric:tabular-nums}
@media (max-width:24rem){main{margin:1rem auto}.card{padding:1rem}dl{grid-template-columns:minmax(0,1fr);gap:0}dd{margin-bottom:.5rem}}
label{display:block;font-weight:600;margin-top:1rem}
input{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #6b7280;border-radius:.5rem;margin-top:.25rem}
input[aria-invalid=true]{border-color:#b91c1c}
input:focus,button:focus{outline:3px solid #2563eb;outline-offset:2px}
.hint{color:#4b5563;font-size:.875rem;margin:.25rem 0 0}
.error{color:#b91c1c;font-size:.875rem;margin:.25rem 0 0;font-weight:600}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.5rem}
button{font:inherit;font-weight:600;padding:.7rem 1.2rem;border-radius:.5rem;border:1px solid transparent;cursor:pointer}
.pay{background:#15803d;color:#fff;flex:1}
.fail{background:#fff;color:#b91c1c;border-color:#b91c1c}
.status{font-size:1.1rem;font-weight:700;padding:.75rem 1rem;border-radius:.5rem;margin:1rem 0 0}
.status.SUCCEEDED{background:#dcfce7;color:#14532d}
.status.FAILED,.status.EXPIRED,.status.CANCELED{background:#fee2e2;color:#7f1d1d}
.status.PENDING,.status.PROCESSING{background:#e0e7ff;color:#1e3a8a}
footer{color:#4b5563;font-size:.8rem;text-align:center;margin-top:1rem}
.languages{text-align:right;font-size:.875rem;margin-bottom:.5rem}
.languages a{color:#1e3a8a}
.pix{margin:1rem 0;text-align:center}
.pix svg{width:14rem;height:14rem;max-width:100%}
.pix textarea{width:100%;font:.8rem/1.4 ui-monospace,monospace;padding:.5rem;border:1px solid #6b7280;border-radius:.5rem;resize:none;overflow-wrap:anywhere}
.copy{background:#1e3a8a;color:#fff;margin-top:.5rem}
.transfer .pix svg{width:16rem;height:16rem}
.mono{font-family:ui-monospace,monospace}
`;

/** The Pix block: the QR code and the copy-and-paste code with its copy button. */
function pixBlock(pix: NonNullable<CashierPage['pix']>, m: Messages): string {
  return `<section class="pix" aria-labelledby="pix-title">
<h2 id="pix-title" class="hint">${escapeHtml(m.t('pix.title'))}</h2>
<div data-testid="pix-qr" role="img" aria-label="${escapeHtml(m.t('pix.qr'))}">${pix.qrSvg}</div>
<label for="pix-code">${escapeHtml(m.t('pix.code'))}</label>
<textarea id="pix-code" data-testid="pix-code" readonly rows="4">${escapeHtml(pix.code)}</textarea>
<button class="copy" type="button" data-copy="pix-code" data-copied="${escapeHtml(m.t('pix.copied'))}">${escapeHtml(m.t('pix.copy'))}</button>
</section>`;
}

/** The bank transfer block: the EPC QR code, and what to type when not scanning it. */
function transferBlock(transfer: NonNullable<CashierPage['transfer']>, amount: string, m: Messages): string {
  const row = (key: string, value: string, id: string) =>
    `<dt>${escapeHtml(m.t(key))}</dt><dd class="mono" data-testid="${id}">${escapeHtml(value)}</dd>`;
  return `<section class="transfer" aria-labelledby="transfer-title">
<h2 id="transfer-title" class="hint">${escapeHtml(m.t('transfer.title'))}</h2>
<div class="pix" data-testid="transfer-qr" role="img" aria-label="${escapeHtml(m.t('transfer.qr'))}">${transfer.qrSvg}</div>
<dl>
${row('transfer.beneficiary', transfer.beneficiary, 'transfer-beneficiary')}
${row('transfer.iban', transfer.iban, 'transfer-iban')}
${transfer.bic === undefined ? '' : row('transfer.bic', transfer.bic, 'transfer-bic')}
${row('transfer.amount', amount, 'transfer-amount')}
${row('transfer.reference', transfer.reference, 'transfer-reference')}
</dl>
<p class="hint">${escapeHtml(m.t('transfer.hint'))}</p>
</section>`;
}

function statusText(payment: PaymentView, open: boolean, m: Messages): string {
  switch (payment.status) {
    case 'SUCCEEDED':
    case 'FAILED':
    case 'EXPIRED':
    case 'CANCELED':
    case 'PROCESSING':
      return m.t(`status.${payment.status}`);
    default:
      return m.t(open ? 'status.waiting' : 'status.EXPIRED');
  }
}

/** `path` with the link's `lang` parameter, when the page's language came from the link. */
export function withLang(path: string, lang: string | undefined): string {
  return lang === undefined ? path : `${path}?lang=${encodeURIComponent(lang)}`;
}

/** The page's head: its language, title, the favicon and the styles. */
function head(m: Messages, title: string): string {
  return `<!doctype html>
<html lang="${m.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<style>${STYLE}</style>
</head>`;
}

/** Links to the page in each other language (plain links with `?lang=`: no script needed). */
function languageLinks(m: Messages, path: string): string {
  const links = m.languages
    .filter((language) => language.locale !== m.locale)
    .map(
      (language) =>
        `<a href="${escapeHtml(withLang(path, language.locale))}" lang="${language.locale}" hreflang="${language.locale}">${escapeHtml(language.name)}</a>`,
    );
  return `<nav class="languages" aria-label="${escapeHtml(m.t('languages'))}">${links.join(' · ')}</nav>`;
}

/**
 * The payer page at each payment's cashierUrl, in the payer's language: the order (amount and
 * dates in the locale's format), the payer as far as anyone holding the link may see it (the
 * name and a masked document number), the Pix code while open and, in the sandbox, the payer form
 * with pay and fail.
 */
export function renderCashierPage(page: CashierPage): string {
  const { payment, messages: m } = page;
  const path = `/cashier/${payment.orderNo}`;
  const method = m.t(`method.${payment.paymentMethod.code}`);
  const errorOf = (field: string) => page.errors?.find((e) => e.field === field || e.field === `payer.${field}`);
  const field = (name: 'name' | 'documentNumber', label: string, hint: string, autocomplete: string) => {
    const error = errorOf(name);
    const value = page.values?.[name] ?? '';
    const describedBy = `${name}-hint${error ? ` ${name}-error` : ''}`;
    return `<label for="${name}">${escapeHtml(label)}</label>
<input id="${name}" name="${name}" value="${escapeHtml(value)}" required maxlength="${name === 'name' ? 200 : 32}"
  autocomplete="${autocomplete}" aria-describedby="${describedBy}"${error ? ' aria-invalid="true"' : ''}>
<p class="hint" id="${name}-hint">${escapeHtml(hint)}</p>${
      error ? `\n<p class="error" id="${name}-error">${escapeHtml(error.message)}</p>` : ''
    }`;
  };
  const otherErrors = (page.errors ?? []).filter((e) => !['name', 'documentNumber'].some((f) => e.field.endsWith(f)));
  const returnHost = payment.returnUrl === undefined ? undefined : new URL(payment.returnUrl).host;
  const returnNote =
    returnHost === undefined
      ? ''
      : `\n<p class="hint" data-testid="return">${escapeHtml(m.t('form.returnTo')).replace('{host}', `<strong>${escapeHtml(returnHost)}</strong>`)}</p>`;
  const amount = m.money(payment.amount, payment.currency);
  const pix = page.pix && page.open ? pixBlock(page.pix, m) : '';
  const transfer = page.transfer && page.open ? transferBlock(page.transfer, amount, m) : '';
  const form =
    page.open && !page.payerOnly
      ? `<form method="post" action="${escapeHtml(withLang(path, page.lang))}" novalidate>
${otherErrors.map((e) => `<p class="error" role="alert">${escapeHtml(e.message)}</p>`).join('\n')}
${field('name', m.t('form.name'), m.t('form.nameHint'), 'name')}
${field('documentNumber', m.t('form.document'), m.t('form.documentHint'), 'off')}
<div class="actions">
<button class="pay" type="submit" name="action" value="pay">${escapeHtml(m.t('form.pay', { amount }))}</button>
<button class="fail" type="submit" name="action" value="fail">${escapeHtml(m.t('form.fail'))}</button>
</div>${returnNote}
</form>`
      : '';
  // Anyone holding the link sees this page: the name, and the document number masked (mask.ts).
  const payerShown = payment.payer
    ? [
        payment.payer.name,
        payment.payer.documentNumber === undefined ? undefined : maskDocument(payment.payer.documentNumber),
      ]
        .filter(Boolean)
        .join(' · ')
    : '';
  const payer =
    payerShown === ''
      ? ''
      : `<dt>${escapeHtml(m.t('field.payer'))}</dt><dd data-testid="payer">${escapeHtml(payerShown)}</dd>`;
  const when = page.open
    ? `<dt>${escapeHtml(m.t('field.payBy'))}</dt><dd data-testid="expires">${escapeHtml(m.dateTime(payment.expiresAt))}</dd>`
    : payment.finalizedAt === undefined
      ? ''
      : `<dt>${escapeHtml(m.t('field.finalizedAt'))}</dt><dd data-testid="finalized">${escapeHtml(m.dateTime(payment.finalizedAt))}</dd>`;
  const title = m.t(page.payerOnly ? 'title' : 'titleSandbox', { merchant: page.merchantName });
  return `${head(m, title)}
<body>
<main>
${languageLinks(m, path)}
<div class="card">
${page.payerOnly ? '' : `<span class="badge">${escapeHtml(m.t('badge'))}</span>`}
<h1>${escapeHtml(m.t('heading', { merchant: page.merchantName }))}</h1>
<p class="amount" data-testid="amount">${escapeHtml(amount)}</p>
<dl>
<dt>${escapeHtml(m.t('field.method'))}</dt><dd data-testid="method">${escapeHtml(method)}</dd>
<dt>${escapeHtml(m.t('field.order'))}</dt><dd class="order-no" data-testid="order-no">${escapeHtml(payment.orderNo)}</dd>
<dt>${escapeHtml(m.t('field.merchantReference'))}</dt><dd>${escapeHtml(payment.merchantOrderNo)}</dd>
${when}
${payer}
</dl>
<p class="status ${payment.status}" role="status" data-testid="status">${escapeHtml(statusText(payment, page.open, m))}</p>
${pix}${transfer}
${form}
</div>
<footer>${escapeHtml(m.t(page.payerOnly ? (page.transfer ? 'footer.transfer' : 'footer.payer') : 'footer.sandbox'))}</footer>${pix ? `\n<script>${COPY_SCRIPT}</script>` : ''}
</main>
</body>
</html>
`;
}

/** The page for an order number nothing is known by, in the payer's language. */
export function renderNotFoundPage(orderNo: string, m: Messages): string {
  return `${head(m, m.t('notFound.title'))}
<body><main><div class="card"><h1>${escapeHtml(m.t('notFound.heading'))}</h1>
<p>${escapeHtml(m.t('notFound.text', { orderNo }))}</p></div></main></body></html>
`;
}
