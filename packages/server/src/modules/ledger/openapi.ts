import { type PathItem, page, readOperation, ref, type Schema, unixMs } from '../../openapi/common.js';

export const ledgerSchemas: Record<string, Schema> = {
  LedgerEntry: {
    type: 'object',
    description: "One posting on one of the merchant's accounts (the platform's own accounts are not shown).",
    required: [
      'entryId',
      'reference',
      'transactionKind',
      'orderNo',
      'account',
      'currency',
      'amount',
      'side',
      'createdAt',
    ],
    properties: {
      entryId: { type: 'string' },
      reference: {
        type: 'string',
        description:
          'Idempotency reference of the business fact: payment:<orderNo>:succeeded, payout:<orderNo>:reserve|settle|release, refund:<orderNo>',
      },
      transactionKind: {
        type: 'string',
        enum: ['payment', 'payout_reserve', 'payout_settle', 'payout_release', 'refund'],
      },
      orderNo: { type: 'string' },
      account: { type: 'string', enum: ['available', 'reserved'] },
      currency: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
      amount: {
        type: 'string',
        pattern: '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$',
        description: 'Signed, major units: positive credits the account, negative debits it',
      },
      side: { type: 'string', enum: ['credit', 'debit'] },
      createdAt: unixMs('Posting time'),
    },
  },
};

export const ledgerPaths: Record<string, PathItem> = {
  '/api/v1/ledger/entries': {
    get: readOperation({
      summary: "The merchant's ledger entries, newest first",
      tags: ['Balances'],
      query: [
        {
          name: 'currency',
          description: 'Only this currency',
          schema: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
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
