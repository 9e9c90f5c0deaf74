import { BalancesQuery, queryParameters } from '@paygate/wire';
import { type PathItem, readOperation, ref } from '../../openapi/common.js';

export const balancePaths: Record<string, PathItem> = {
  '/api/v1/balances': {
    get: readOperation({
      summary: 'Balances per currency',
      description:
        "Read from the double-entry ledger. Every platform currency is listed (zeros included), in a fixed order, unless currency narrows it to one. A SUCCEEDED payment adds paidAmount less the method's fee to available; a payout moves amount + fee from available to reserved until it succeeds (reserved is spent) or fails (back to available); a return adds the principal back to available.",
      tags: ['Balances'],
      query: queryParameters(BalancesQuery),
      data: { type: 'array', items: ref('Balance') },
    }),
  },
};
