import { orderLookupQuery, PayoutListQuery, queryParameters } from '@paygate/wire';
import { type PathItem, page, readOperation, ref, writeOperation } from '../../openapi/common.js';

const orderQuery = queryParameters(orderLookupQuery('W'));

export const payoutPaths: Record<string, PathItem> = {
  '/api/v1/payouts': {
    post: writeOperation({
      summary: 'Create a payout order',
      description:
        'Creates a PENDING payout and, in the same database transaction, moves amount + fee (the fee from the rate table) from the available balance to reserved. When available does not cover amount + fee the answer is INSUFFICIENT_BALANCE and nothing is written. Repeating a create with the same merchantOrderNo and the same fields (payee included) returns the existing order (HTTP 200) and moves no money; different fields are DUPLICATE_ORDER.',
      tags: ['Payouts'],
      plaintext: ref('CreatePayoutRequest'),
      data: ref('Payout'),
      errors: { '409': 'DUPLICATE_ORDER or INSUFFICIENT_BALANCE' },
    }),
    get: readOperation({
      summary: 'Query a payout order',
      description:
        'The source of truth when webhooks conflict. Before a return posts, a returned payout still shows its original result and no refund fields. By query parameter: a REST-style `GET /api/v1/payouts/{orderNo}` answers 404 `NOT_FOUND` with a message naming this query (`?orderNo=`) once signed (401 unsigned, like every path).',
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
      query: queryParameters(PayoutListQuery),
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
      plaintext: ref('PayoutRef'),
      data: ref('Payout'),
      errors: {
        '404': 'ORDER_NOT_FOUND',
        '409': 'INVALID_STATE',
        '503':
          "CHANNEL_UNAVAILABLE: the payout's channel could not be reached; the payout stays PENDING with its reserve; retry the confirm (not a new payout). If the channel did take it and only its answer was lost, polling finds it there and the payout moves on to PROCESSING as the channel says.",
      },
    }),
  },
  '/api/v1/payouts/update': {
    post: writeOperation({
      summary: 'Change attach or webhookUrl of a PENDING payout',
      tags: ['Payouts'],
      plaintext: ref('UpdatePayoutRequest'),
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
      plaintext: ref('SimulatePayoutRequest'),
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
      plaintext: ref('ReturnPayoutRequest'),
      data: ref('Payout'),
      errors: { '404': 'ORDER_NOT_FOUND', '409': 'INVALID_STATE' },
    }),
  },
};
