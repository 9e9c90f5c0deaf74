import { decimal, type PathItem, readOperation, ref, type Schema } from '../../openapi/common.js';

export const balanceSchemas: Record<string, Schema> = {
  Balance: {
    type: 'object',
    required: ['currency', 'available', 'reserved'],
    properties: {
      currency: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
      available: decimal('What payouts may use now, major units'),
      reserved: decimal('Held for PENDING and PROCESSING payouts (amount + fee), major units'),
    },
  },
};

export const balancePaths: Record<string, PathItem> = {
  '/api/v1/balances': {
    get: readOperation({
      summary: 'Balances per currency',
      description:
        "Read from the double-entry ledger. Every platform currency is listed (zeros included), in a fixed order, unless currency narrows it to one. A SUCCEEDED payment adds paidAmount less the method's fee to available; a payout moves amount + fee from available to reserved until it succeeds (reserved is spent) or fails (back to available); a return adds the principal back to available.",
      tags: ['Balances'],
      query: [
        {
          name: 'currency',
          description: 'Only this currency',
          schema: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
        },
      ],
      data: { type: 'array', items: ref('Balance') },
    }),
  },
};
