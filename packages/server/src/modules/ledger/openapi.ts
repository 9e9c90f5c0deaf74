import { LedgerEntriesQuery, queryParameters } from '@paygate/wire';
import { type PathItem, page, readOperation, ref } from '../../openapi/common.js';

export const ledgerPaths: Record<string, PathItem> = {
  '/api/v1/ledger/entries': {
    get: readOperation({
      summary: "The merchant's ledger entries, newest first",
      tags: ['Balances'],
      query: queryParameters(LedgerEntriesQuery),
      data: page(ref('LedgerEntry')),
    }),
  },
};
