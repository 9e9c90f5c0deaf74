import { PayoutListQuery, PayoutRef } from '@paygate/wire';
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { businessBody, merchantOf, nonceOf, rawTarget } from '../../http/merchant-api.js';
import type { Payouts } from './service.js';
import { type OrderRef, parseInput, parseQuery } from '../../validation.js';
import { LIST_PARAMETERS, refFromQuery } from '../payments/routes.js';

/** Payout order endpoints of the merchant API (decisions.md, Endpoints). */
export function payoutRoutes(api: FastifyInstance, { payouts }: { readonly payouts: Payouts }): void {
  // The nonce is recorded by the create's and the confirm's transactions, and with the reads in the
  // same flight (NonceMode).
  api.post('/payouts', { config: { nonce: 'in-write' } }, async (request) => {
    const { payout } = await payouts.create(merchantOf(request).id, businessBody(request), nonceOf(request));
    return success(payout);
  });

  api.get('/payouts', { config: { nonce: 'with-read' } }, async (request) =>
    success(await payouts.get(merchantOf(request).id, refFromQuery(rawTarget(request).query, 'W'))),
  );

  api.get('/payouts/list', { config: { nonce: 'with-read' } }, async (request) => {
    const filters = parseInput(PayoutListQuery, parseQuery(rawTarget(request).query, LIST_PARAMETERS));
    return success(await payouts.list(merchantOf(request).id, filters));
  });

  // The only read that returns the payee's account details.
  api.get('/payouts/receipt', { config: { nonce: 'with-read' } }, async (request) =>
    success(await payouts.receipt(merchantOf(request).id, refFromQuery(rawTarget(request).query, 'W'))),
  );

  api.post('/payouts/confirm', { config: { nonce: 'in-write' } }, async (request) => {
    const ref = parseInput(PayoutRef, businessBody(request)) as OrderRef;
    return success(await payouts.confirm(merchantOf(request).id, ref, nonceOf(request)));
  });

  api.post('/payouts/update', async (request) =>
    success(await payouts.update(merchantOf(request).id, businessBody(request))),
  );
}

/** Sandbox helpers that act as the payout channel; registered by the sandbox routes only. */
export function sandboxPayoutRoutes(api: FastifyInstance, { payouts }: { readonly payouts: Payouts }): void {
  api.post('/sandbox/payouts/simulate', async (request) =>
    success(await payouts.applyChannelReport(merchantOf(request).id, businessBody(request))),
  );

  api.post('/sandbox/payouts/return', async (request) =>
    success(await payouts.returnPayout(merchantOf(request).id, businessBody(request))),
  );
}
