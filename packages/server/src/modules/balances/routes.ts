import { BalancesQuery } from '@paygate/wire';
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Balances } from './service.js';
import { parseInput, parseQuery } from '../../validation.js';

/** `GET /api/v1/balances?currency=…`: available and reserved per currency. */
export function balanceRoutes(api: FastifyInstance, { balances }: { readonly balances: Balances }): void {
  // The nonce is recorded in the same flight as the read (NonceMode).
  api.get('/balances', { config: { nonce: 'with-read' } }, async (request) => {
    const query = parseQuery(rawTarget(request).query, Object.keys(BalancesQuery.shape));
    const { currency } = parseInput(BalancesQuery, query);
    return success(await balances.list(merchantOf(request).id, currency));
  });
}
