import { RatesQuery } from '@paygate/wire';
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Fees } from './service.js';
import { parseInput, parseQuery } from '../../validation.js';

/** `GET /api/v1/rates?currency=…&method=…`: the merchant's fee table (its plan over the platform's). */
export function feeRoutes(api: FastifyInstance, { fees }: { readonly fees: Fees }): void {
  api.get('/rates', async (request) => {
    const query = parseQuery(rawTarget(request).query, Object.keys(RatesQuery.shape));
    const { currency, method } = parseInput(RatesQuery, query);
    return success(await fees.table({ currency, method }, merchantOf(request).id));
  });
}
