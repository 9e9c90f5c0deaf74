import type { Charge } from './model.js';

/** Inline styles and same-origin form posts only; nothing is loaded from anywhere, and never framed. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The page's CSP: PAGE_CSP, and with a returnUrl its origin in form-action too, since browsers
 * hold the redirect that follows the Pay or Decline post to form-action.
 */
export function pageCsp(charge: Charge): string {
  if (charge.returnUrl === undefined) return PAGE_CSP;
  return PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${new URL(charge.returnUrl).origin}`);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#eef2f7;color:#111827}
main{max-width:28rem;margin:2rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #cbd5e1;border-radius:.75rem;padding:1.5rem}
.badge{display:inline-block;background:#e0f2fe;color:#0c4a6e;border:1px solid #0369a1;border-radius:999px;padding:0 .6rem;font-size:.8rem;font-weight:600}
h1{font-size:1.25rem;margin:.5rem 0 1rem}
.amount{font-size:2rem;font-weight:700;margin:0}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:1rem 0}
dt{color:#475569}dd{margin:0;font-weight:500;overflow-wrap:anywhere}
code{display:block;background:#f1f5f9;border:1px solid #cbd5e1;border-radius:.5rem;padding:.5rem;overflow-wrap:anywhere;font-size:.85rem}
label{display:block;font-weight:600;margin-top:1rem}
input{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #64748b;border-radius:.5rem;margin-top:.25rem}
input:focus,button:focus{outline:3px solid #2563eb;outline-offset:2px}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.5rem}
button{font:inherit;font-weight:600;padding:.7rem 1.2rem;border-radius:.5rem;border:1px solid transparent;cursor:pointer}
.pay{background:#15803d;color:#fff;flex:1}
.decline{background:#fff;color:#b91c1c;border-color:#b91c1c}
.status{font-size:1.1rem;font-weight:700;padding:.75rem 1rem;border-radius:.5rem;margin:1rem 0 0;background:#e0e7ff;color:#1e3a8a}
footer{color:#475569;font-size:.8rem;text-align:center;margin-top:1rem}
`;

const STATUS_TEXT: Readonly<Record<Charge['status'], string>> = {
  open: 'Waiting for payment.',
  paid: 'Paid. You can close this page.',
  declined: 'The payment was declined.',
  expired: 'This payment has expired.',
  canceled: 'This payment was canceled by the merchant.',
};

function instructions(charge: Charge): string {
  if (charge.pixCode) return `<p>Pix copy-and-paste code:</p><code>${escapeHtml(charge.pixCode)}</code>`;
  if (charge.boletoLine) return `<p>Boleto line:</p><code>${escapeHtml(charge.boletoLine)}</code>`;
  if (charge.bankDetails) {
    const d = charge.bankDetails;
    return `<dl><dt>Beneficiary</dt><dd>${escapeHtml(d.beneficiary)}</dd><dt>Bank</dt><dd>${escapeHtml(d.bank)}</dd>
<dt>Account</dt><dd>${escapeHtml(d.account)}</dd>${d.bic ? `<dt>BIC</dt><dd>${escapeHtml(d.bic)}</dd>` : ''}
<dt>Reference</dt><dd>${escapeHtml(d.reference)}</dd></dl>`;
  }
  return '';
}

/** The hosted payer page: the charge and, while it is open, Pay and Decline. */
export function renderPayPage(charge: Charge, now: number): string {
  const open = charge.status === 'open' && now < charge.expiresAt;
  const status = open ? STATUS_TEXT.open : STATUS_TEXT[charge.status === 'open' ? 'expired' : charge.status];
  const id = escapeHtml(charge.id);
  const form = open
    ? `${instructions(charge)}
<form method="post" action="/pay/${id}/pay">
<label for="name">Payer name (optional)</label><input id="name" name="name" maxlength="200" autocomplete="name">
<label for="documentNumber">Document number (optional)</label><input id="documentNumber" name="documentNumber" maxlength="64">
<div class="actions"><button class="pay" type="submit">Pay</button>
<button class="decline" type="submit" formaction="/pay/${id}/decline">Decline</button></div>
</form>`
    : charge.returnUrl !== undefined
      ? `<p><a href="${escapeHtml(charge.returnUrl)}">Back to the shop</a></p>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay ${escapeHtml(charge.amount)} ${escapeHtml(charge.currency)} · PSP simulator</title><style>${STYLE}</style></head>
<body><main><div class="card">
<span class="badge">Simulated provider</span>
<h1>Payment ${escapeHtml(charge.reference)}</h1>
<p class="amount">${escapeHtml(charge.amount)} ${escapeHtml(charge.currency)}</p>
<dl><dt>Method</dt><dd>${escapeHtml(charge.method)}</dd><dt>Charge</dt><dd>${id}</dd></dl>
<p class="status" role="status">${status}</p>
${form}
</div><footer>No real money moves on this page.</footer></main></body></html>
`;
}
