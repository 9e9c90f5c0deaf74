import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { success } from '../../http/errors.js';
import { merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Services } from '../../services.js';
import { listQuery, parseInput, parseQuery } from '../../validation.js';

const entriesQuery = listQuery.omit({ status: true }).extend({ currency: z.string().optional() });

/** `GET /api/v1/ledger/entries`: the merchant's own postings, newest first (the portal's statement). */
export function ledgerRoutes(api: FastifyInstance, { ledger }: Services): void {
  api.get('/ledger/entries', async (request) => {
    const query = parseQuery(rawTarget(request).query, ['currency', 'from', 'to', 'pageSize', 'cursor']);
    return success(await ledger.entries(merchantOf(request).id, parseInput(entriesQuery, query)));
  });
}
