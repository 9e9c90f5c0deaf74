import { LedgerEntriesQuery } from '@paygate/wire';
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Ledger } from './service.js';
import { parseInput, parseQuery } from '../../validation.js';

/** `GET /api/v1/ledger/entries`: the merchant's own postings, newest first (the portal's statement). */
export function ledgerRoutes(api: FastifyInstance, { ledger }: { readonly ledger: Ledger }): void {
  api.get('/ledger/entries', async (request) => {
    const query = parseQuery(rawTarget(request).query, Object.keys(LedgerEntriesQuery.shape));
    return success(await ledger.entries(merchantOf(request).id, parseInput(LedgerEntriesQuery, query)));
  });
}
