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
import { CHANNEL_STATUSES, PAYOUT_STATUSES } from './service.js';

const CURRENCIES = ['BRL', 'MXN', 'USD', 'EUR'];

const orderRef: Schema = {
  type: 'object',
  description: 'Exactly one of orderNo and merchantOrderNo',
  properties: { orderNo: { type: 'string', pattern: '^W[0-9]{18}$' }, merchantOrderNo: { type: 'string' } },
};

const refundFields: Record<string, Schema> = {
  refundNo: { type: 'string', description: 'Present only once the refund has posted (REFUNDED)' },
  refundAmount: decimal(
    'The full returned principal (not net of the payout fee, which is not returned); REFUNDED only',
  ),
  refundTime: unixMs('When the refund posted; never changes on retry; REFUNDED only'),
};

const orderQuery = [
  { name: 'orderNo', description: 'Platform order number (or merchantOrderNo; exactly one non-empty)' },
  { name: 'merchantOrderNo', description: 'Merchant order number' },
];

export const payoutSchemas: Record<string, Schema> = {
  Payee: {
    type: 'object',
    required: ['name', 'accountNumber'],
    description: 'Who receives the payout. Returned only by the payout receipt; never in queries, lists or webhooks.',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      accountNumber: {
        type: 'string',
        pattern: '^[A-Za-z0-9@.+_-]{1,140}$',
        description: 'Bank account, CLABE, IBAN or PIX key; no spaces',
      },
      bankCode: { type: 'string', pattern: '^[A-Za-z0-9]{1,16}$' },
      documentNumber: {
        type: 'string',
        pattern: '^[0-9A-Za-z.\\-/]{1,32}$',
        description: 'Kept as a string: leading zeros survive',
      },
    },
  },
  Payout: {
    type: 'object',
    description: 'A payout order. Carries no payee details (see the receipt).',
    required: [
      'orderNo',
      'merchantOrderNo',
      'status',
      'currency',
      'amount',
      'fee',
      'webhookUrl',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      orderNo: { type: 'string', pattern: '^W[0-9]{18}$' },
      merchantOrderNo: { type: 'string' },
      status: { type: 'string', enum: [...PAYOUT_STATUSES] },
      currency: { type: 'string', enum: CURRENCIES },
      amount: decimal('What the payee receives, major units'),
      fee: decimal('The payout fee from the rate table, fixed at creation; reserved and charged on top of amount'),
      webhookUrl: webhookUrlOutput,
      attach: { type: 'string' },
      channelTradeNo: { type: 'string', description: 'Present once the channel reported a final outcome' },
      ...refundFields,
      createdAt: unixMs('Creation time'),
      updatedAt: unixMs('Last change'),
      confirmedAt: unixMs('When the merchant confirmed the payout'),
      finalizedAt: unixMs('When the channel reported SUCCEEDED or FAILED'),
    },
  },
  PayoutReceipt: {
    type: 'object',
    description: 'The payout receipt: the only read that returns the payee.',
    required: ['orderNo', 'merchantOrderNo', 'status', 'currency', 'amount', 'fee', 'total', 'payee', 'createdAt'],
    properties: {
      orderNo: { type: 'string', pattern: '^W[0-9]{18}$' },
      merchantOrderNo: { type: 'string' },
      status: { type: 'string', enum: [...PAYOUT_STATUSES] },
      currency: { type: 'string', enum: CURRENCIES },
      amount: decimal('What the payee receives'),
      fee: decimal('The payout fee'),
      total: decimal('amount + fee: what left the available balance'),
      payee: ref('Payee'),
      channelTradeNo: { type: 'string' },
      ...refundFields,
      createdAt: unixMs('Creation time'),
      confirmedAt: unixMs('Confirmation time'),
      finalizedAt: unixMs('Time of the final channel outcome'),
    },
  },
  PayoutEvent: {
    type: 'object',
    description:
      'Body of a payout webhook (SUCCEEDED, FAILED, REFUNDED). No payee or sender identity. SUCCEEDED and FAILED carry channelTradeNo and attach; REFUNDED carries refundNo, refundAmount and refundTime instead and has its own eventId.',
    required: ['eventId', 'orderType', 'orderNo', 'merchantOrderNo', 'status', 'currency', 'amount'],
    properties: {
      eventId: { type: 'string', pattern: '^evt_[0-9A-Z]{26}$' },
      orderType: { const: 'PAYOUT' },
      orderNo: { type: 'string', pattern: '^W[0-9]{18}$' },
      merchantOrderNo: { type: 'string' },
      status: { type: 'string', enum: ['SUCCEEDED', 'FAILED', 'REFUNDED'] },
      currency: { type: 'string', enum: CURRENCIES },
      amount: decimal('Payout amount'),
      channelTradeNo: { type: 'string' },
      attach: { type: 'string' },
      ...refundFields,
    },
  },
};

const createPayout: Schema = {
  type: 'object',
  required: ['merchantOrderNo', 'currency', 'amount', 'webhookUrl', 'payee'],
  properties: {
    merchantOrderNo: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$',
      description: 'Creates deduplicate on this alone',
    },
    currency: { type: 'string', enum: CURRENCIES },
    amount: decimal("Positive, no sign or exponent, at most the currency's minor digits"),
    webhookUrl: webhookUrlInput,
    attach: { type: 'string', maxLength: 1024 },
    payee: ref('Payee'),
  },
};

export const payoutPaths: Record<string, PathItem> = {
  '/api/v1/payouts': {
    post: writeOperation({
      summary: 'Create a payout order',
      description:
        'Creates a PENDING payout and, in the same database transaction, moves amount + fee (the fee from the rate table) from the available balance to reserved. When available does not cover amount + fee the answer is INSUFFICIENT_BALANCE and nothing is written. Repeating a create with the same merchantOrderNo and the same fields (payee included) returns the existing order (HTTP 200) and moves no money; different fields are DUPLICATE_ORDER.',
      tags: ['Payouts'],
      plaintext: createPayout,
      data: ref('Payout'),
      errors: { '409': 'DUPLICATE_ORDER or INSUFFICIENT_BALANCE' },
    }),
    get: readOperation({
      summary: 'Query a payout order',
      description:
        'The source of truth when webhooks conflict. Before a return posts, a returned payout still shows its original result and no refund fields.',
      tags: ['Payouts'],
      query: orderQuery,
      data: ref('Payout'),
      errors: { '404': 'ORDER_NOT_FOUND' },
    }),
  },
  '/api/v1/payouts/list': {
    get: readOperation({
      summary: 'List payout orders, newest first',
      tags: ['Payouts'],
      query: listQueryParameters(PAYOUT_STATUSES),
      data: page(ref('Payout')),
    }),
  },
  '/api/v1/payouts/receipt': {
    get: readOperation({
      summary: 'Payout receipt: payee account details, amounts, fee, status and times',
      tags: ['Payouts'],
      query: orderQuery,
      data: ref('PayoutReceipt'),
      errors: { '404': 'ORDER_NOT_FOUND' },
    }),
  },
  '/api/v1/payouts/confirm': {
    post: writeOperation({
      summary: 'Confirm a PENDING payout (hand it to the channel)',
      description:
        'PENDING → PROCESSING. Confirming a payout that is already confirmed or PROCESSING returns it unchanged; any other state is INVALID_STATE.',
      tags: ['Payouts'],
      plaintext: orderRef,
      data: ref('Payout'),
      errors: {
        '404': 'ORDER_NOT_FOUND',
        '409': 'INVALID_STATE',
        '503':
          "CHANNEL_UNAVAILABLE: the payout's channel could not be reached; the payout stays PENDING, retry the confirm",
      },
    }),
  },
  '/api/v1/payouts/update': {
    post: writeOperation({
      summary: 'Change attach or webhookUrl of a PENDING payout',
      tags: ['Payouts'],
      plaintext: {
        ...orderRef,
        properties: {
          ...(orderRef.properties as Schema),
          attach: { type: 'string', maxLength: 1024 },
          webhookUrl: webhookUrlInput,
        },
      },
      data: ref('Payout'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
  '/api/v1/sandbox/payouts/simulate': {
    post: writeOperation({
      summary: 'Sandbox: drive a payout as the channel would',
      description:
        'Sandbox only (404 in production). PENDING → PROCESSING/SUCCEEDED/FAILED (the sandbox channel may act on an unconfirmed payout) and PROCESSING → SUCCEEDED/FAILED. SUCCEEDED settles the reserve (amount to the channel, fee to the platform) and writes the SUCCEEDED webhook; FAILED releases amount + fee back to available and writes the FAILED webhook. Repeating the current state changes nothing. A late SUCCEEDED after REFUNDED changes nothing and returns the REFUNDED order (HTTP 200); any other move out of a final state is INVALID_STATE.',
      tags: ['Sandbox'],
      plaintext: {
        type: 'object',
        required: ['orderNo', 'status'],
        properties: {
          orderNo: { type: 'string', pattern: '^W[0-9]{18}$' },
          status: { type: 'string', enum: [...CHANNEL_STATUSES] },
          channelTradeNo: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
        },
      },
      data: ref('Payout'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
  '/api/v1/sandbox/payouts/return': {
    post: writeOperation({
      summary: 'Sandbox: the channel returns a SUCCEEDED payout',
      description:
        "Sandbox only. Credits the full principal (amount) back to available — the payout fee is not returned — and moves SUCCEEDED → REFUNDED with refundNo (generated RF… when absent), refundAmount and refundTime (the posting time, Unix ms), writing a REFUNDED webhook with its own eventId whose retries stop 24 h after it was created. Applied once per order and once per refundNo: returning a REFUNDED payout again, or reusing a refundNo already applied (to any of the merchant's payouts), credits nothing and returns the payout that refund applied to (HTTP 200) with its refund fields unchanged. Other states are INVALID_STATE.",
      tags: ['Sandbox'],
      plaintext: {
        type: 'object',
        required: ['orderNo'],
        properties: {
          orderNo: { type: 'string', pattern: '^W[0-9]{18}$' },
          refundNo: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
        },
      },
      data: ref('Payout'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
};
