import { CURRENCIES, PAYMENT_METHODS } from '@paygate/wire';
import { type PathItem, readOperation, ref } from '../../openapi/common.js';

export const ratePaths: Record<string, PathItem> = {
  '/api/v1/rates': {
    get: readOperation({
      summary: 'The rate table: pay-in fees per currency and method, payout fee per currency',
      description:
        'The sandbox table is configurable with PAYGATE_FEES. method keeps only the currencies that accept it, with only that method; a currency with no such method gives an empty list.',
      tags: ['Rates'],
      query: [
        {
          name: 'currency',
          description: 'Only this currency',
          schema: { type: 'string', enum: [...CURRENCIES] },
        },
        {
          name: 'method',
          description: 'Only this payment method',
          schema: { type: 'string', enum: [...PAYMENT_METHODS] },
        },
      ],
      data: { type: 'array', items: ref('CurrencyRates') },
    }),
  },
};
