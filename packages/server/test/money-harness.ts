/**
 * Helpers shared by the money suites (ledger, payouts, balances, property test): funding a
 * merchant through real payments, payout bodies, and reading the books and the outbox.
 */
import assert from 'node:assert/strict';
import type { Balance, Payout } from '@paygate/wire';
import { randomUUID } from 'node:crypto';
import type { Platform } from '../src/platform.js';
import { get, paymentInput, post, type TestMerchant } from './harness.js';

/** Simple, exact fees for suites that count money: free pay-ins, BRL payouts 1% + 2.00. */
export const SIMPLE_FEES = JSON.stringify({
  payments: { BRL: { PIX: { percent: '0', fixed: '0' } } },
  payouts: { BRL: { percent: '1', fixed: '2.00' } },
});

/** The API's payout and balance views: the wire schemas' types. */
export type { Balance, Payout };

/** A valid payout create body; override fields as needed. */
export function payoutInput(overrides: Record<string, unknown> = {}) {
  return {
    merchantOrderNo: `WO-${randomUUID().slice(0, 18)}`,
    currency: 'BRL',
    amount: '100.00',
    webhookUrl: 'https://merchant.example/webhook/payout',
    attach: 'batch=7',
    payee: { name: 'João Souza', accountNumber: '000123456789', bankCode: '341', documentNumber: '01234567890' },
    ...overrides,
  };
}

/** Credits the merchant through a real payment: create, then the sandbox reports SUCCEEDED. */
export async function fund(platform: Platform, merchant: TestMerchant, amount: string, currency = 'BRL') {
  const method = { BRL: 'PIX', MXN: 'SPEI', USD: 'CARD', EUR: 'SEPA' }[currency] as string;
  const created = await post<{ orderNo: string }>(
    platform,
    merchant,
    '/api/v1/payments',
    paymentInput({ amount, currency, paymentMethod: { code: method } }),
  );
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const orderNo = created.body.data?.orderNo as string;
  const paid = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'SUCCEEDED' });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  return orderNo;
}

/** The merchant's balance in one currency, through the API. */
export async function balanceOf(platform: Platform, merchant: TestMerchant, currency = 'BRL'): Promise<Balance> {
  const response = await get<Balance[]>(platform, merchant, '/api/v1/balances', `currency=${currency}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data?.[0] as Balance;
}

/** The outbox events of one order, oldest first, with their parsed bodies. */
export async function eventsOf(platform: Platform, orderNo: string) {
  const result = await platform.services.db.query<{
    event_id: string;
    status: string;
    body: Uint8Array;
    created_at: Date;
    deliver_until: Date | null;
  }>('SELECT event_id, status, body, created_at, deliver_until FROM events WHERE order_no = $1 ORDER BY id', [orderNo]);
  return result.rows.map((row) => ({
    ...row,
    text: Buffer.from(row.body).toString('utf8'),
    json: JSON.parse(Buffer.from(row.body).toString('utf8')) as Record<string, unknown>,
  }));
}

/** Ledger transactions of one order, oldest first. */
export async function postingsOf(platform: Platform, orderNo: string) {
  const result = await platform.services.db.query<{ reference: string; kind: string; id: bigint }>(
    'SELECT id, reference, kind FROM ledger_transactions WHERE order_no = $1 ORDER BY id',
    [orderNo],
  );
  return result.rows;
}

/** Asserts the books are healthy: balanced, balances equal to their entries, nothing negative. */
export async function assertBooksHealthy(platform: Platform) {
  const report = await platform.services.ledger.audit();
  assert.deepEqual(report, { unbalanced: [], drifted: [], negative: [] });
}
