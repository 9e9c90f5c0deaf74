import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Services } from '../../services.js';
import { parseQuery } from '../../validation.js';

/** `GET /api/v1/balances?currency=…`: available and reserved per currency. */
export function balanceRoutes(api: FastifyInstance, { balances }: Services): void {
  api.get('/balances', async (request) => {
    const { currency } = parseQuery(rawTarget(request).query, ['currency']);
    return success(await balances.list(merchantOf(request).id, currency));
  });
}
