import { PRODUCTS, type ShopOrder } from './orders.js';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const h = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#111827}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.4rem;border-bottom:1px solid #e5e7eb}
button,.pay{font:inherit;padding:.4rem .9rem;border-radius:.4rem;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer;text-decoration:none}
.status{font-weight:700;padding:.1rem .5rem;border-radius:.4rem;background:#e0e7ff}
.SUCCEEDED{background:#dcfce7}.FAILED,.EXPIRED,.CANCELED{background:#fee2e2}.error{color:#b91c1c}`;

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED']);

function page(title: string, body: string, refresh = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${h(title)} · Example shop</title>
${refresh ? '<meta http-equiv="refresh" content="3">' : ''}<style>${STYLE}</style></head>
<body><p><a href="/">Example shop</a> · a Paygate sandbox integration</p>${body}</body></html>`;
}

const status = (order: ShopOrder) => `<span class="status ${h(order.status)}">${h(order.status)}</span>`;

/** The shop front: products and recent orders. */
export function homePage(orders: readonly ShopOrder[]): string {
  const products = PRODUCTS.map(
    (p) => `<tr><td>${h(p.name)}</td><td>${h(p.currency)} ${h(p.amount)}</td><td>${h(p.method)}</td>
<td><form method="post" action="/orders"><input type="hidden" name="product" value="${h(p.id)}"><button>Buy</button></form></td></tr>`,
  ).join('\n');
  const rows = orders
    .map(
      (o) =>
        `<tr><td><a href="/orders/${h(o.id)}">${h(o.id)}</a></td><td>${h(o.productName)}</td><td>${h(o.currency)} ${h(o.amount)}</td><td>${status(o)}</td></tr>`,
    )
    .join('\n');
  return page(
    'Shop',
    `<h1>Products</h1><table><tr><th>Product</th><th>Price</th><th>Method</th><th></th></tr>${products}</table>
<h2>Your orders</h2>${orders.length ? `<table><tr><th>Order</th><th>Product</th><th>Amount</th><th>Status</th></tr>${rows}</table>` : '<p>None yet.</p>'}`,
  );
}

/** One order: its state as the verified webhooks left it; refreshes itself until final. */
export function orderPage(order: ShopOrder): string {
  const final = FINAL.has(order.status);
  const action =
    order.status === 'PENDING' && order.cashierUrl
      ? `<p><a class="pay" href="${h(order.cashierUrl)}">Pay at the cashier</a></p><p>This page updates when Paygate's webhook arrives.</p>`
      : order.status === 'NEW'
        ? `<form method="post" action="/orders/${h(order.id)}/pay"><button>Pay</button></form>`
        : '';
  const outcome: Record<string, string> = {
    SUCCEEDED: `Paid${order.paidAmount ? ` ${h(order.currency)} ${h(order.paidAmount)}` : ''}${order.payerName ? ` by ${h(order.payerName)}` : ''}. Thank you!`,
    FAILED: 'The payment failed.',
    EXPIRED: 'The payment expired before it was paid.',
    CANCELED: 'The payment was canceled.',
  };
  return page(
    order.id,
    `<h1>Order ${h(order.id)}</h1><p>${h(order.productName)}: ${h(order.currency)} ${h(order.amount)} (${h(order.method)})</p>
<p>Status: ${status(order)}</p>${final ? `<p>${outcome[order.status] ?? ''}</p>` : ''}${action}
${order.orderNo ? `<p>Paygate order ${h(order.orderNo)}</p>` : ''}`,
    !final,
  );
}

/** A failure the payer can act on. */
export function errorPage(title: string, message: string, status = 502): { status: number; html: string } {
  return {
    status,
    html: page(title, `<h1>${h(title)}</h1><p class="error">${h(message)}</p><p><a href="/">Back to the shop</a></p>`),
  };
}
