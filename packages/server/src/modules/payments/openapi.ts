import { orderLookupQuery, PaymentListQuery, queryParameters } from '@paygate/wire';
import { type PathItem, page, readOperation, ref, writeOperation } from '../../openapi/common.js';

export const paymentPaths: Record<string, PathItem> = {
  '/api/v1/payments': {
    post: writeOperation({
      summary: 'Create a payment order',
      description:
        'Creates a PENDING payment. Repeating a create with the same merchantOrderNo and the same fields returns the existing order (HTTP 200) and creates nothing; different fields are DUPLICATE_ORDER. The order is routed to the channel serving its currency and method (PAYGATE_CHANNELS; in the sandbox the built-in sandbox channel serves the rest) and registered there before the create answers; in production a currency or method no channel serves is VALIDATION_FAILED naming currency or paymentMethod.code, and nothing is created.',
      tags: ['Payments'],
      plaintext: ref('CreatePaymentRequest'),
      data: ref('Payment'),
      errors: {
        '409': 'DUPLICATE_ORDER',
        '503':
          "CHANNEL_UNAVAILABLE: the payment's channel could not be reached; no order was created, retry the same create",
      },
    }),
    get: readOperation({
      summary: 'Query a payment order',
      description:
        'By query parameter: there is no `GET /api/v1/payments/{orderNo}`. That REST-style path answers 404 `NOT_FOUND` with a message naming this query (`?orderNo=`) once signed (401 unsigned, like every path).',
      tags: ['Payments'],
      query: queryParameters(orderLookupQuery('P')),
      data: ref('Payment'),
      errors: { '404': 'ORDER_NOT_FOUND' },
    }),
  },
  '/api/v1/payments/list': {
    get: readOperation({
      summary: 'List payment orders, newest first',
      tags: ['Payments'],
      query: queryParameters(PaymentListQuery),
      data: page(ref('Payment')),
    }),
  },
  '/api/v1/payments/cancel': {
    post: writeOperation({
      summary: 'Cancel a PENDING payment order',
      description:
        'PENDING → CANCELED, with a CANCELED webhook. Canceling a CANCELED order returns it unchanged. A payment routed to a channel is withdrawn at its channel first, so nothing can be paid there afterwards; if the payer paid or declined there first, the payment takes that state (with its webhook) and the cancel is INVALID_STATE.',
      tags: ['Payments'],
      plaintext: ref('PaymentRef'),
      data: ref('Payment'),
      errors: {
        '404': 'ORDER_NOT_FOUND',
        '409': 'INVALID_STATE',
        '503': "CHANNEL_UNAVAILABLE: the payment's channel could not be reached; nothing changed, retry the cancel",
      },
    }),
  },
  '/api/v1/payments/update': {
    post: writeOperation({
      summary: 'Change attach or webhookUrl of a payment that is not final',
      tags: ['Payments'],
      plaintext: ref('UpdatePaymentRequest'),
      data: ref('Payment'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
  '/api/v1/sandbox/payments/simulate': {
    post: writeOperation({
      summary: 'Sandbox: drive a payment as the channel would',
      description:
        'Sandbox only (404 in production). Moves PENDING → PROCESSING/SUCCEEDED/FAILED/EXPIRED and PROCESSING → SUCCEEDED/FAILED. Repeating the current state changes nothing; a final order never moves again (INVALID_STATE). Payer details come only from here or the cashier page and are frozen once final.',
      tags: ['Sandbox'],
      plaintext: ref('SimulatePaymentRequest'),
      data: ref('Payment'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
};
