import type { FastifyInstance } from 'fastify';
import { orderLookupQuery, PaymentListQuery, PaymentRef } from '@paygate/wire';
import { success } from '../../http/errors.js';
import { businessBody, merchantOf, nonceOf, rawTarget } from '../../http/merchant-api.js';
import type { Payments } from './service.js';
import { type OrderRef, parseInput, parseQuery } from '../../validation.js';

/** Built once: a zod schema costs more to build than to run, and every signed query parses one. */
const LOOKUP_QUERIES = { P: orderLookupQuery('P'), W: orderLookupQuery('W') } as const;

/** `?orderNo=…` or `?merchantOrderNo=…` (exactly one non-empty). */
export function refFromQuery(rawQuery: string | undefined, prefix: 'P' | 'W'): OrderRef {
  const query = parseQuery(rawQuery, ['orderNo', 'merchantOrderNo']);
  return parseInput(LOOKUP_QUERIES[prefix], query) as OrderRef;
}

export const LIST_PARAMETERS = Object.keys(PaymentListQuery.shape);

/** Payment order endpoints of the merchant API (decisions.md, Endpoints). */
export function paymentRoutes(api: FastifyInstance, { payments }: { readonly payments: Payments }): void {
  // The nonce is recorded by the create's own statement, by the cancel's transaction, and with the
  // reads in the same flight (NonceMode).
  api.post('/payments', { config: { nonce: 'in-write' } }, async (request) => {
    const { payment } = await payments.create(merchantOf(request).id, businessBody(request), nonceOf(request));
    return success(payment);
  });

  api.get('/payments', { config: { nonce: 'with-read' } }, async (request) =>
    success(await payments.get(merchantOf(request).id, refFromQuery(rawTarget(request).query, 'P'))),
  );

  api.get('/payments/list', { config: { nonce: 'with-read' } }, async (request) => {
    const filters = parseInput(PaymentListQuery, parseQuery(rawTarget(request).query, LIST_PARAMETERS));
    return success(await payments.list(merchantOf(request).id, filters));
  });

  api.post('/payments/cancel', { config: { nonce: 'in-write' } }, async (request) => {
    const ref = parseInput(PaymentRef, businessBody(request)) as OrderRef;
    return success(await payments.cancel(merchantOf(request).id, ref, undefined, nonceOf(request)));
  });

  api.post('/payments/update', async (request) =>
    success(await payments.update(merchantOf(request).id, businessBody(request))),
  );
}
