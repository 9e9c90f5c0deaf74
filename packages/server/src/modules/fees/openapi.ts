import { queryParameters, RatesQuery } from '@paygate/wire';
import { type PathItem, readOperation, ref } from '../../openapi/common.js';

export const feePaths: Record<string, PathItem> = {
  '/api/v1/rates': {
    get: readOperation({
      summary: 'The rate table: pay-in fees per currency and method, payout fee per currency',
      description:
        'The sandbox table is configurable with PAYGATE_FEES. method keeps only the currencies that accept it, with only that method; a currency with no such method gives an empty list.',
      tags: ['Rates'],
      query: queryParameters(RatesQuery),
      data: { type: 'array', items: ref('CurrencyRates') },
    }),
  },
};
