import { decimal, type PathItem, readOperation, ref, type Schema } from '../../openapi/common.js';

const fee = (description: string): Schema => ({
  type: 'object',
  required: ['feePercent', 'feeFixed'],
  description,
  properties: {
    feePercent: decimal('Percentage of the amount (two decimals); the charge is rounded half up to the minor unit'),
    feeFixed: decimal('Fixed part, major units'),
  },
});

export const rateSchemas: Record<string, Schema> = {
  CurrencyRates: {
    type: 'object',
    required: ['currency', 'scale', 'payments', 'payout'],
    properties: {
      currency: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
      scale: { type: 'integer', description: 'Minor-unit digits (ISO 4217)' },
      payments: {
        type: 'array',
        description:
          'Pay-in fee per payment method: deducted from paidAmount when the payment succeeds (never more than paidAmount)',
        items: {
          allOf: [
            fee('A pay-in fee'),
            {
              type: 'object',
              required: ['method'],
              properties: { method: { type: 'string', enum: ['PIX', 'BOLETO', 'SPEI', 'CARD', 'SEPA'] } },
            },
          ],
        },
      },
      payout: fee('The payout fee: charged on top of the payout amount, reserved with it, not returned on a return'),
    },
  },
};

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
          schema: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
        },
        {
          name: 'method',
          description: 'Only this payment method',
          schema: { type: 'string', enum: ['PIX', 'BOLETO', 'SPEI', 'CARD', 'SEPA'] },
        },
      ],
      data: { type: 'array', items: ref('CurrencyRates') },
    }),
  },
};
