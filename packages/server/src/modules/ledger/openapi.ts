import { CURRENCIES } from '@paygate/wire';
import { type PathItem, page, readOperation, ref } from '../../openapi/common.js';

export const ledgerPaths: Record<string, PathItem> = {
  '/api/v1/ledger/entries': {
    get: readOperation({
      summary: "The merchant's ledger entries, newest first",
      tags: ['Balances'],
      query: [
        {
          name: 'currency',
          description: 'Only this currency',
          schema: { type: 'string', enum: [...CURRENCIES] },
        },
        { name: 'from', description: 'Posted at or after (Unix ms)', schema: { type: 'integer' } },
        { name: 'to', description: 'Posted at or before (Unix ms)', schema: { type: 'integer' } },
        {
          name: 'pageSize',
          description: '1 to 100, default 20',
          schema: { type: 'integer', minimum: 1, maximum: 100 },
        },
        { name: 'cursor', description: 'nextCursor of the previous page' },
      ],
      data: page(ref('LedgerEntry')),
    }),
  },
};
