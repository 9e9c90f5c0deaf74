import type { FieldError } from '../../errors.js';
import type { PaymentView } from '../payments/service.js';

/** What the cashier page shows. */
export interface CashierPage {
  readonly merchantName: string;
  readonly payment: PaymentView;
  /** Whether the payer can still act (PENDING and not past its expiry). */
  readonly open: boolean;
  readonly values?: { name: string; documentNumber: string };
  readonly errors?: readonly FieldError[];
  readonly environment: string;
  /**
   * A Pix payment's copy-and-paste code (the provider's `pixCopiaECola`, or the sandbox's own BR
   * Code) and its QR code as an SVG drawn by the `qrcode` library; shown while the payment is open.
   */
  readonly pix?: { readonly code: string; readonly qrSvg: string };
  /** A channel's payer page (production): the code only, no sandbox form. */
  readonly payerOnly?: boolean;
}

/**
 * The copy button's script, the page's only one: its hash is the whole of the CSP's script-src.
 * Without script the code is still in a read-only text box to select and copy.
 */
export const COPY_SCRIPT = `document.querySelectorAll('button[data-copy]').forEach(function (b) {
  b.addEventListener('click', function () {
    var code = document.getElementById(b.getAttribute('data-copy'));
    code.select();
    var done = function () { b.textContent = 'Copied'; };
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

const METHOD_NAMES: Readonly<Record<string, string>> = {
  PIX: 'Pix',
  BOLETO: 'Boleto bancário',
  SPEI: 'SPEI transfer',
  CARD: 'Card',
  SEPA: 'SEPA transfer',
};

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
.pix{margin:1rem 0;text-align:center}
.pix svg{width:14rem;height:14rem;max-width:100%}
.pix textarea{width:100%;font:.8rem/1.4 ui-monospace,monospace;padding:.5rem;border:1px solid #6b7280;border-radius:.5rem;resize:none;overflow-wrap:anywhere}
.copy{background:#1e3a8a;color:#fff;margin-top:.5rem}
`;

/** The Pix block: the QR code and the copy-and-paste code with its copy button. */
function pixBlock(pix: NonNullable<CashierPage['pix']>): string {
  return `<section class="pix" aria-labelledby="pix-title">
<h2 id="pix-title" class="hint">Scan with your bank's app, or copy the Pix code</h2>
<div data-testid="pix-qr" role="img" aria-label="Pix QR code">${pix.qrSvg}</div>
<label for="pix-code">Pix copy-and-paste code</label>
<textarea id="pix-code" data-testid="pix-code" readonly rows="4">${escapeHtml(pix.code)}</textarea>
<button class="copy" type="button" data-copy="pix-code">Copy the code</button>
</section>`;
}

function statusText(payment: PaymentView, open: boolean): string {
  switch (payment.status) {
    case 'SUCCEEDED':
      return 'Payment received. You can close this page.';
    case 'FAILED':
      return 'The payment failed.';
    case 'EXPIRED':
      return 'This payment has expired.';
    case 'CANCELED':
      return 'The merchant canceled this payment.';
    case 'PROCESSING':
      return 'The payment is being processed.';
    default:
      return open ? 'Waiting for payment.' : 'This payment has expired.';
  }
}

/** The sandbox cashier page: the order, and (while open) the payer form with pay and fail. */
export function renderCashierPage(page: CashierPage): string {
  const { payment } = page;
  const method = METHOD_NAMES[payment.paymentMethod.code] ?? payment.paymentMethod.code;
  const errorOf = (field: string) => page.errors?.find((e) => e.field === field || e.field === `payer.${field}`);
  const field = (name: 'name' | 'documentNumber', label: string, hint: string, autocomplete: string) => {
    const error = errorOf(name);
    const value = page.values?.[name] ?? '';
    const describedBy = `${name}-hint${error ? ` ${name}-error` : ''}`;
    return `<label for="${name}">${label}</label>
<input id="${name}" name="${name}" value="${escapeHtml(value)}" required maxlength="${name === 'name' ? 200 : 32}"
  autocomplete="${autocomplete}" aria-describedby="${describedBy}"${error ? ' aria-invalid="true"' : ''}>
<p class="hint" id="${name}-hint">${hint}</p>${
      error ? `\n<p class="error" id="${name}-error">${escapeHtml(error.message)}</p>` : ''
    }`;
  };
  const otherErrors = (page.errors ?? []).filter((e) => !['name', 'documentNumber'].some((f) => e.field.endsWith(f)));
  const returnHost = payment.returnUrl === undefined ? undefined : new URL(payment.returnUrl).host;
  const returnNote =
    returnHost === undefined
      ? ''
      : `\n<p class="hint" data-testid="return">Then you return to <strong>${escapeHtml(returnHost)}</strong>.</p>`;
  const pix = page.pix && page.open ? pixBlock(page.pix) : '';
  const form =
    page.open && !page.payerOnly
      ? `<form method="post" action="/cashier/${escapeHtml(payment.orderNo)}" novalidate>
${otherErrors.map((e) => `<p class="error" role="alert">${escapeHtml(e.message)}</p>`).join('\n')}
${field('name', 'Payer name', 'As on the payer’s account.', 'name')}
${field('documentNumber', 'Document number', 'Letters, digits, dots, dashes or slashes; leading zeros are kept.', 'off')}
<div class="actions">
<button class="pay" type="submit" name="action" value="pay">Pay ${escapeHtml(payment.amount)} ${escapeHtml(payment.currency)}</button>
<button class="fail" type="submit" name="action" value="fail">Make it fail</button>
</div>${returnNote}
</form>`
      : '';
  const payer = payment.payer
    ? `<dt>Payer</dt><dd>${escapeHtml([payment.payer.name, payment.payer.documentNumber].filter(Boolean).join(' · '))}</dd>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Pay ${escapeHtml(page.merchantName)} · Paygate${page.payerOnly ? '' : ' sandbox cashier'}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<div class="card">
${page.payerOnly ? '' : `<span class="badge">Sandbox · ${escapeHtml(page.environment)} test payment</span>`}
<h1>Pay ${escapeHtml(page.merchantName)}</h1>
<p class="amount" data-testid="amount">${escapeHtml(payment.amount)} <span>${escapeHtml(payment.currency)}</span></p>
<dl>
<dt>Method</dt><dd data-testid="method">${escapeHtml(method)}</dd>
<dt>Order</dt><dd>${escapeHtml(payment.orderNo)}</dd>
<dt>Merchant reference</dt><dd>${escapeHtml(payment.merchantOrderNo)}</dd>
${payer}
</dl>
<p class="status ${payment.status}" role="status" data-testid="status">${escapeHtml(statusText(payment, page.open))}</p>
${pix}
${form}
</div>
<footer>${page.payerOnly ? 'Paid through Pix; this page shows the code your bank needs.' : 'No money moves in the sandbox. This page does not exist in production.'}</footer>${pix ? `\n<script>${COPY_SCRIPT}</script>` : ''}
</main>
</body>
</html>
`;
}
