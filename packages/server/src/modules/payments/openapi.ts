import {
  decimal,
  listQueryParameters,
  type PathItem,
  page,
  readOperation,
  ref,
  type Schema,
  unixMs,
  webhookUrlInput,
  webhookUrlOutput,
  writeOperation,
} from '../../openapi/common.js';
import { PAYMENT_STATUSES } from './service.js';

const orderRef: Schema = {
  type: 'object',
  description: 'Exactly one of orderNo and merchantOrderNo',
  properties: { orderNo: { type: 'string' }, merchantOrderNo: { type: 'string' } },
};

export const paymentSchemas: Record<string, Schema> = {
  Payer: {
    type: 'object',
    description:
      'The actual payer as the channel reported it; absent members are unknown, the whole object is omitted when both are',
    properties: {
      name: { type: 'string' },
      documentNumber: { type: 'string', description: 'Kept as a string: leading zeros survive' },
    },
  },
  Payment: {
    type: 'object',
    required: [
      'orderNo',
      'merchantOrderNo',
      'status',
      'currency',
      'amount',
      'paymentMethod',
      'webhookUrl',
      'cashierUrl',
      'payerAction',
      'createdAt',
      'updatedAt',
      'expiresAt',
    ],
    properties: {
      orderNo: { type: 'string', pattern: '^P[0-9]{18}$' },
      merchantOrderNo: { type: 'string' },
      status: { type: 'string', enum: [...PAYMENT_STATUSES] },
      currency: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
      amount: decimal("Amount in major units, with the currency's minor digits"),
      paymentMethod: {
        type: 'object',
        required: ['code'],
        properties: { code: { type: 'string', enum: ['PIX', 'BOLETO', 'SPEI', 'CARD', 'SEPA'] } },
      },
      webhookUrl: webhookUrlOutput,
      attach: { type: 'string' },
      cashierUrl: {
        type: 'string',
        format: 'uri',
        description:
          "Where the payer pays: the channel's hosted page (payerAction.url), or the sandbox cashier page for the built-in sandbox channel",
      },
      payerAction: ref('PayerAction'),
      paidAmount: decimal('Amount the payer paid; present once SUCCEEDED'),
      channelTradeNo: { type: 'string' },
      payer: ref('Payer'),
      createdAt: unixMs('Creation time'),
      updatedAt: unixMs('Last change'),
      expiresAt: unixMs('A PENDING order expires at this time'),
      finalizedAt: unixMs('Time the order reached its final state'),
    },
  },
};

const createPayment: Schema = {
  type: 'object',
  required: ['merchantOrderNo', 'currency', 'amount', 'paymentMethod', 'webhookUrl'],
  description: 'Unknown members are ignored (payer details in particular are never taken from here).',
  properties: {
    merchantOrderNo: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$',
      description: 'Creates deduplicate on this alone',
    },
    currency: { type: 'string', enum: ['BRL', 'MXN', 'USD', 'EUR'] },
    amount: decimal(
      "Positive, no sign or exponent, at most the currency's minor digits (2 for all sandbox currencies)",
    ),
    paymentMethod: {
      type: 'object',
      required: ['code'],
      properties: { code: { type: 'string', description: 'BRL: PIX, BOLETO; MXN: SPEI; USD: CARD; EUR: SEPA' } },
    },
    webhookUrl: webhookUrlInput,
    attach: { type: 'string', maxLength: 1024 },
  },
};

export const paymentPaths: Record<string, PathItem> = {
  '/api/v1/payments': {
    post: writeOperation({
      summary: 'Create a payment order',
      description:
        'Creates a PENDING payment. Repeating a create with the same merchantOrderNo and the same fields returns the existing order (HTTP 200) and creates nothing; different fields are DUPLICATE_ORDER. The order is routed to the channel serving its currency and method (PAYGATE_CHANNELS; in the sandbox the built-in sandbox channel serves the rest) and registered there before the create answers; in production a currency or method no channel serves is VALIDATION_FAILED naming currency or paymentMethod.code, and nothing is created.',
      tags: ['Payments'],
      plaintext: createPayment,
      data: ref('Payment'),
      errors: {
        '409': 'DUPLICATE_ORDER',
        '503':
          "CHANNEL_UNAVAILABLE: the payment's channel could not be reached; no order was created, retry the same create",
      },
    }),
    get: readOperation({
      summary: 'Query a payment order',
      tags: ['Payments'],
      query: [
        { name: 'orderNo', description: 'Platform order number (or merchantOrderNo; exactly one non-empty)' },
        { name: 'merchantOrderNo', description: 'Merchant order number' },
      ],
      data: ref('Payment'),
      errors: { '404': 'ORDER_NOT_FOUND' },
    }),
  },
  '/api/v1/payments/list': {
    get: readOperation({
      summary: 'List payment orders, newest first',
      tags: ['Payments'],
      query: listQueryParameters(PAYMENT_STATUSES),
      data: page(ref('Payment')),
    }),
  },
  '/api/v1/payments/cancel': {
    post: writeOperation({
      summary: 'Cancel a PENDING payment order',
      description: 'PENDING → CANCELED, with a CANCELED webhook. Canceling a CANCELED order returns it unchanged.',
      tags: ['Payments'],
      plaintext: orderRef,
      data: ref('Payment'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
  '/api/v1/payments/update': {
    post: writeOperation({
      summary: 'Change attach or webhookUrl of a payment that is not final',
      tags: ['Payments'],
      plaintext: {
        ...orderRef,
        properties: {
          ...(orderRef.properties as Schema),
          attach: { type: 'string', maxLength: 1024 },
          webhookUrl: webhookUrlInput,
        },
      },
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
      plaintext: {
        type: 'object',
        required: ['orderNo', 'status'],
        properties: {
          orderNo: { type: 'string' },
          status: { type: 'string', enum: ['PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED'] },
          paidAmount: decimal('SUCCEEDED only; defaults to amount'),
          channelTradeNo: { type: 'string' },
          payer: ref('Payer'),
          failureReason: { type: 'string', maxLength: 200, description: 'FAILED only: why (shown in the portal)' },
        },
      },
      data: ref('Payment'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
};
