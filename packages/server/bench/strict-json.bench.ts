// Cost of strict JSON parsing (duplicate member names refused) against plain JSON.parse, for
// the decrypted business JSON of a signed POST. Run:
//   node --conditions=source --import tsx packages/server/bench/strict-json.bench.ts
import { findBadMember, parseStrictJson } from '../src/http/strict-json.js';

const payment = {
  merchantOrderNo: 'M-2f1c9a7e-4b1d-4e0a',
  currency: 'BRL',
  amount: '125.50',
  paymentMethod: { code: 'PIX' },
  webhookUrl: 'https://merchant.example/webhook/payment',
  attach: 'cart=8812',
};

/** `base` padded with `extra` (built by `item(i)`) until its JSON is about `bytes` long. */
function bodyOf(bytes: number, item: (i: number) => unknown): string {
  const extra: unknown[] = [];
  let text = JSON.stringify({ ...payment, extra });
  for (let i = 0; text.length < bytes; i++) {
    extra.push(item(i));
    if (bytes < 65536 || i % 64 === 0 || text.length > bytes * 0.9) text = JSON.stringify({ ...payment, extra });
  }
  return JSON.stringify({ ...payment, extra });
}

const BODIES: [string, string][] = [
  ['1 KiB, objects', bodyOf(1024, (i) => ({ sku: `SKU-${i}`, qty: i % 5, price: '9.90', note: 'gift\u00e9 "wrap"' }))],
  [
    '1 MiB, objects',
    bodyOf(1 << 20, (i) => ({ sku: `SKU-${i}`, qty: i % 5, price: '9.90', note: 'gift\u00e9 "wrap"' })),
  ],
  ['1 MiB, numbers', bodyOf(1 << 20, (i) => i * 1.5)],
  ['1 MiB, one string', JSON.stringify({ ...payment, attach: 'x\\"y'.repeat((1 << 20) / 6) })],
];

function perCall(fn: () => unknown, minMs = 400): number {
  for (let i = 0; i < 20; i++) fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 10; i++) fn();
    calls += 10;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (elapsed * 1000) / calls; // µs
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

for (const [name, text] of BODIES) {
  if (findBadMember(text)) throw new Error('bench body has a duplicate');
  const plain: number[] = [];
  const strict: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(perCall(() => JSON.parse(text)));
    strict.push(perCall(() => parseStrictJson(text)));
  }
  const p = median(plain);
  const s = median(strict);
  console.log(
    `${name.padEnd(18)} ${String(text.length).padStart(8)} B  JSON.parse ${p.toFixed(1).padStart(8)} µs  strict ${s
      .toFixed(1)
      .padStart(8)} µs  (+${(((s - p) / p) * 100).toFixed(0)}%)`,
  );
}
