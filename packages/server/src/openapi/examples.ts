/**
 * An example request and response for every operation of the reference, keyed by operationId and
 * merged into the document by `document.ts` (`withExamples`). The values are what the sandbox
 * answers (order numbers, times and keys made up); a test validates each against its schema, opens
 * each sealed envelope to its plaintext, and replays each VALIDATION_FAILED example against a
 * running platform, expecting exactly the answer shown.
 */
import { fieldSentence } from '../errors.js';
import { WORKED_EXAMPLE } from './signing.js';

/** One named example: a short summary and the JSON value. */
export interface Example {
  readonly summary: string;
  readonly value: unknown;
}

/** The examples of one operation. */
export interface OperationExamples {
  /** The operation, as `METHOD /path` in the document. */
  readonly operation: string;
  /** Path and query parameter values of the example request, by name. */
  readonly parameters?: Readonly<Record<string, string | number>>;
  /** A write's business JSON, sealed inside the envelope (or an unsealed request body). */
  readonly request?: unknown;
  /** Its envelope's ciphertext: `request` sealed to the protocol vectors' body key (writes only). */
  readonly ciphertext?: string;
  /** Response examples by HTTP status, each by name. */
  readonly responses: Readonly<Record<string, Readonly<Record<string, Example>>>>;
  /**
   * The request that gets the 400 example: a write's plaintext, or a read's raw query. Not in the
   * document: a test sends it to a running platform and expects exactly that answer.
   */
  readonly invalid?: { readonly request: unknown } | { readonly query: string };
}

/** Made-up but well-formed values shared by the examples. */
const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const PAYMENT_NO = 'P202601010000000001';
const PAYOUT_NO = 'W202601010000000002';
const CASHIER_URL = `http://127.0.0.1:8080/cashier/${PAYMENT_NO}`;
const EVENT_ID = 'evt_01KDX3Q8ZJ6W4V1H9T2M5N7P0R';
const REFUND_EVENT_ID = 'evt_01KDX7B2C4D6E8F0G1H3J5K7M9';

// Field errors as the platform words them (validationFailed: a sentence naming the field).
const invalid = (errors: { field: string; message: string }[]) => ({
  msg: 'VALIDATION_FAILED',
  message: 'the request is not valid',
  errors: errors.map(({ field, message }) => ({ field, message: fieldSentence(field, message) })),
});
const ok = (data: unknown) => ({ msg: 'SUCCESS', data });
const ORDER_NOT_FOUND = { msg: 'ORDER_NOT_FOUND', message: 'no such order' };
const notFound = { orderNotFound: { summary: 'No order with this number for this merchant', value: ORDER_NOT_FOUND } };

const PAYMENT_CREATE = {
  merchantOrderNo: 'M-20260101-0001',
  currency: 'BRL',
  amount: '125.50',
  paymentMethod: { code: 'PIX' },
  webhookUrl: 'https://merchant.example/webhook/payment',
  attach: 'cart=8812',
  returnUrl: 'https://merchant.example/checkout/done?cart=8812',
};

const PAYMENT = {
  orderNo: PAYMENT_NO,
  merchantOrderNo: PAYMENT_CREATE.merchantOrderNo,
  status: 'PENDING',
  currency: 'BRL',
  amount: '125.50',
  paymentMethod: { code: 'PIX' },
  webhookUrl: PAYMENT_CREATE.webhookUrl,
  cashierUrl: CASHIER_URL,
  payerAction: { kind: 'redirect', url: CASHIER_URL },
  createdAt: T0,
  updatedAt: T0,
  expiresAt: T0 + 1_800_000,
  attach: PAYMENT_CREATE.attach,
  returnUrl: PAYMENT_CREATE.returnUrl,
};

const PAYMENT_SUCCEEDED = {
  ...PAYMENT,
  status: 'SUCCEEDED',
  updatedAt: T0 + 95_000,
  paidAmount: '125.50',
  channelTradeNo: 'SBX-7F3K2M',
  payer: { name: 'Maria Silva', documentNumber: '00123456789' },
  finalizedAt: T0 + 95_000,
};

const PAYOUT_CREATE = {
  merchantOrderNo: 'WO-20260101-0002',
  currency: 'BRL',
  amount: '100.00',
  webhookUrl: 'https://merchant.example/webhook/payout',
  attach: 'batch=7',
  payee: { name: 'João Souza', accountNumber: '000123456789', bankCode: '341', documentNumber: '01234567890' },
};

const PAYOUT = {
  orderNo: PAYOUT_NO,
  merchantOrderNo: PAYOUT_CREATE.merchantOrderNo,
  status: 'PENDING',
  currency: 'BRL',
  amount: '100.00',
  fee: '2.00',
  webhookUrl: PAYOUT_CREATE.webhookUrl,
  createdAt: T0,
  updatedAt: T0,
  attach: PAYOUT_CREATE.attach,
};
const PAYOUT_PROCESSING = { ...PAYOUT, status: 'PROCESSING', updatedAt: T0 + 60_000, confirmedAt: T0 + 60_000 };
const PAYOUT_SUCCEEDED = {
  ...PAYOUT_PROCESSING,
  status: 'SUCCEEDED',
  updatedAt: T0 + 300_000,
  channelTradeNo: 'CHWMWTJZ6TZ740125',
  finalizedAt: T0 + 300_000,
};
const PAYOUT_REFUNDED = {
  ...PAYOUT_SUCCEEDED,
  status: 'REFUNDED',
  updatedAt: T0 + 86_400_000,
  refundNo: 'RF-20260102-0001',
  refundAmount: '100.00',
  refundTime: T0 + 86_400_000,
};

const WEBHOOK_EVENT = {
  eventId: EVENT_ID,
  orderType: 'PAYMENT',
  orderNo: PAYMENT_NO,
  status: 'SUCCEEDED',
  deliveryStatus: 'delivered',
  attempts: 2,
  createdAt: T0 + 95_000,
  deliveredAt: T0 + 97_400,
  nextAttemptAt: null,
  lastStatusCode: 200,
  lastError: null,
};

const invalidState = (message: string) => ({
  invalidState: { summary: 'Not possible in the order’s state', value: { msg: 'INVALID_STATE', message } },
});

export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  createPayment: {
    operation: 'POST /api/v1/payments',
    invalid: { request: { ...PAYMENT_CREATE, returnUrl: 'https://merchant.example/checkout/done#top' } },
    request: PAYMENT_CREATE,
    ciphertext:
      '/unlcjyxQsGIufwZaxCS1Ni3i6iGQuYNFR/Lnitl6lHQpVwcZU3s5fp5mXv6+U9LzAXhV/KIISlAh6r6HrULrdpaKm4SaYwI9GS8Nkl1KgbMl7tjGCjJpO+7GI5Aq3bZJzuWpEj1cTISxgsdEodC7l1mmi0H6rihuZbaUZBLiKIAdkmn6ljVAZyGKIM8RPvvCwECpD+6Rt1+W2s8ITVbxg5hl2FUE+rNB8FO8LeGicm2nunta1QKm5VP6IOOXRV7GyDRxl18XV7TaOKLxcAAYohJA9aCXbol2fnNrcjge4yphUTE+rQIZHYPeFWqzpb1s9xSGo9gt7YDFtzrVyrdggEofFXLq34LGLhF5hYELVkVO8FoGqb/6KAyTsddYHGFXyMC',
    responses: {
      '200': { pending: { summary: 'Created PENDING (or the same create repeated)', value: ok(PAYMENT) } },
      '400': {
        validationFailed: {
          summary: 'A returnUrl with a fragment',
          value: invalid([{ field: 'returnUrl', message: 'must not have a fragment' }]),
        },
      },
      '409': {
        duplicateOrder: {
          summary: 'The merchantOrderNo exists with other fields',
          value: {
            msg: 'DUPLICATE_ORDER',
            message: 'an order with this merchantOrderNo exists with different fields',
          },
        },
      },
      '503': {
        channelUnavailable: {
          summary: 'The channel did not answer; nothing was created',
          value: {
            msg: 'CHANNEL_UNAVAILABLE',
            message: 'the channel psp is unavailable; nothing was done, retry later',
          },
        },
      },
    },
  },
  getPayment: {
    operation: 'GET /api/v1/payments',
    invalid: { query: '' },
    parameters: { orderNo: PAYMENT_NO },
    responses: {
      '200': { succeeded: { summary: 'A SUCCEEDED payment with its payer', value: ok(PAYMENT_SUCCEEDED) } },
      '400': {
        validationFailed: {
          summary: 'Neither orderNo nor merchantOrderNo',
          value: invalid([{ field: 'orderNo', message: 'give exactly one of orderNo and merchantOrderNo' }]),
        },
      },
      '404': notFound,
    },
  },
  listPayments: {
    operation: 'GET /api/v1/payments/list',
    invalid: { query: 'status=SUCCEEDED&pageSize=500' },
    parameters: { status: 'SUCCEEDED', from: T0, pageSize: 1 },
    responses: {
      '200': {
        page: {
          summary: 'One page; pass nextCursor as cursor for the next',
          value: ok({ items: [PAYMENT_SUCCEEDED], nextCursor: 'MTc2NzIyNTY5NTAwMDox' }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'pageSize out of range',
          value: invalid([{ field: 'pageSize', message: 'an integer from 1 to 100' }]),
        },
      },
    },
  },
  cancelPayment: {
    operation: 'POST /api/v1/payments/cancel',
    invalid: { request: { orderNo: PAYMENT_NO, merchantOrderNo: PAYMENT_CREATE.merchantOrderNo } },
    request: { orderNo: PAYMENT_NO },
    ciphertext:
      'zVn3zG58/TiqZ5SMHp+ADJbzMDZ4eQ5/xKdoF59p3hP5DkJMFEujOa+zZQiBF6J/BMN6XKp0MC1VDV3MAWQ4/RUsT/FHzSadGZrDDye4p7DQ',
    responses: {
      '200': {
        canceled: {
          summary: 'PENDING → CANCELED',
          value: ok({ ...PAYMENT, status: 'CANCELED', updatedAt: T0 + 30_000, finalizedAt: T0 + 30_000 }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Both orderNo and merchantOrderNo',
          value: invalid([{ field: 'orderNo', message: 'give exactly one of orderNo and merchantOrderNo' }]),
        },
      },
      '404': notFound,
      '409': invalidState('a SUCCEEDED payment cannot be canceled'),
      '503': {
        channelUnavailable: {
          summary: 'The channel did not answer; nothing changed',
          value: {
            msg: 'CHANNEL_UNAVAILABLE',
            message: 'the channel psp is unavailable; nothing was done, retry later',
          },
        },
      },
    },
  },
  updatePayment: {
    operation: 'POST /api/v1/payments/update',
    invalid: { request: { orderNo: PAYMENT_NO } },
    request: { orderNo: PAYMENT_NO, attach: 'cart=8812;gift=true' },
    ciphertext:
      'wOB93ajXudvosTE+Lz3vi2xZYYz7T4EgHDl5Rki5rkM8B1mx7X1lzyCqbkbhJuRtFpaTvnhzw5GcIV0Gg5c5E7UYdZjMaoff0oQZKaBfECKpwXqVP13WK2npilUfea9U6BVnQd249rmIZAJ6Obyl+w==',
    responses: {
      '200': {
        updated: {
          summary: 'attach changed',
          value: ok({ ...PAYMENT, attach: 'cart=8812;gift=true', updatedAt: T0 + 20_000 }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Nothing to change',
          value: invalid([{ field: 'attach', message: 'give attach or webhookUrl to change' }]),
        },
      },
      '404': notFound,
      '409': invalidState('a SUCCEEDED payment cannot be updated'),
    },
  },
  simulatePayment: {
    operation: 'POST /api/v1/sandbox/payments/simulate',
    invalid: { request: { orderNo: PAYMENT_NO, status: 'PAID' } },
    request: {
      orderNo: PAYMENT_NO,
      status: 'SUCCEEDED',
      channelTradeNo: 'SBX-7F3K2M',
      payer: { name: 'Maria Silva', documentNumber: '00123456789' },
    },
    ciphertext:
      'i3Z2JmJAUSZxGWPofUdObA/VUQJezmpd/XqWX2TIYyGjDok/r6YZ7jYzMokST1bO1rcrq2zl91Jklc7JOXbiv6d8qKcogvc/t52h7ipS26bPRxvzxYKwkAvq356MdMOKA7LU9BcmJcrpVymD5uBEtth2KAE1QhmfZxlJgWLrbAdED4TitA17Bzp2yOWbQX1O0/dn4ZqSw8L4+45SekyNUdzTjYfvf8GNgFK8Y6/B1pUt9xK4dXXjgMXdWW7WggXhJyU=',
    responses: {
      '200': { succeeded: { summary: 'The payment as the channel reported it', value: ok(PAYMENT_SUCCEEDED) } },
      '400': {
        validationFailed: {
          summary: 'A state the channel cannot report',
          value: invalid([
            {
              field: 'status',
              message: 'status must be one of PROCESSING, SUCCEEDED, FAILED, EXPIRED',
            },
          ]),
        },
      },
      '404': notFound,
      '409': invalidState('a SUCCEEDED payment cannot become FAILED'),
    },
  },
  createPayout: {
    operation: 'POST /api/v1/payouts',
    invalid: { request: { ...PAYOUT_CREATE, payee: { name: 'João Souza' } } },
    request: PAYOUT_CREATE,
    ciphertext:
      'N38gzNQr4qkd+PoUoVdeZuwAwhTOREYkK8e9nVX9uTyR/eUtd+VeEySHvhkd06VX5BxqvM5kwRC8cnsZm5OeXc0FNZTMPptiy8LjVWR/H98CcFtezSgR91tb6t2WHut2DflviX7Tjt5kAufcoSWbisNzgh1WPNMogBWfpGjPghHwSrpbDbYWUtKUwFtUu4QLds7ChGXGlPsNeYKcZ4RS4qDtAjuLH4XEVX+3V3yFX7C/UhdBQwaiyrv1LK9eRcmpMXpbyWMvzHWWeZDmI/xegztrFqZHpGmDfC8/wYNmLOTt4lCZz4MC3MPoiWdyCuR1FdLFd/w7FCzf6ZHO9YeH8UkhQIEkglBpwm1oarcvrV37dBH967AKGzTZ+eOVxIYS1F71yiEwVZVEsJAsA7JDKGU=',
    responses: {
      '200': { pending: { summary: 'Created PENDING; amount + fee reserved', value: ok(PAYOUT) } },
      '400': {
        validationFailed: {
          summary: 'A payee without an account number',
          value: invalid([{ field: 'payee.accountNumber', message: 'payee.accountNumber is required: a string' }]),
        },
      },
      '409': {
        insufficientBalance: {
          summary: 'Available does not cover amount + fee; nothing was written',
          value: {
            msg: 'INSUFFICIENT_BALANCE',
            message: 'the available balance is 50.00 BRL; this payout needs 102.00 BRL (amount 100.00 + fee 2.00)',
          },
        },
      },
    },
  },
  getPayout: {
    operation: 'GET /api/v1/payouts',
    invalid: { query: `orderNo=${PAYMENT_NO}` },
    parameters: { merchantOrderNo: PAYOUT_CREATE.merchantOrderNo },
    responses: {
      '200': { succeeded: { summary: 'A SUCCEEDED payout', value: ok(PAYOUT_SUCCEEDED) } },
      '400': {
        validationFailed: {
          summary: 'A payment order number where a payout’s is expected',
          value: invalid([{ field: 'orderNo', message: 'a payout order number' }]),
        },
      },
      '404': notFound,
    },
  },
  listPayouts: {
    operation: 'GET /api/v1/payouts/list',
    invalid: { query: `from=${T0}&to=${T0 - 1}` },
    parameters: { status: 'PROCESSING', pageSize: 20 },
    responses: {
      '200': { page: { summary: 'The last page', value: ok({ items: [PAYOUT_PROCESSING], nextCursor: null }) } },
      '400': {
        validationFailed: {
          summary: 'to before from',
          value: invalid([{ field: 'to', message: 'is before from' }]),
        },
      },
    },
  },
  getPayoutReceipt: {
    operation: 'GET /api/v1/payouts/receipt',
    invalid: { query: `orderNo=${PAYOUT_NO}&merchantOrderNo=${PAYOUT_CREATE.merchantOrderNo}` },
    parameters: { orderNo: PAYOUT_NO },
    responses: {
      '200': {
        receipt: {
          summary: 'The receipt, with the payee',
          value: ok({
            orderNo: PAYOUT_NO,
            merchantOrderNo: PAYOUT_CREATE.merchantOrderNo,
            status: 'SUCCEEDED',
            currency: 'BRL',
            amount: '100.00',
            fee: '2.00',
            total: '102.00',
            payee: PAYOUT_CREATE.payee,
            channelTradeNo: PAYOUT_SUCCEEDED.channelTradeNo,
            createdAt: T0,
            confirmedAt: T0 + 60_000,
            finalizedAt: T0 + 300_000,
          }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Both orderNo and merchantOrderNo',
          value: invalid([{ field: 'orderNo', message: 'give exactly one of orderNo and merchantOrderNo' }]),
        },
      },
      '404': notFound,
    },
  },
  confirmPayout: {
    operation: 'POST /api/v1/payouts/confirm',
    invalid: { request: { orderNo: PAYMENT_NO } },
    request: { orderNo: PAYOUT_NO },
    ciphertext:
      'bAf3o3UOHf40qj2G737g45im+HUegVYbDi/37Pi2ZU5t4+/kwfHCJsoYlQcty2dIim936HjMwEef2g8Y3OAXRMq443J7I2mh+6uMpzkdwRwV',
    responses: {
      '200': { processing: { summary: 'PENDING → PROCESSING', value: ok(PAYOUT_PROCESSING) } },
      '400': {
        validationFailed: {
          summary: 'A payment order number',
          value: invalid([{ field: 'orderNo', message: 'a payout order number' }]),
        },
      },
      '404': notFound,
      '409': invalidState('a FAILED payout cannot be confirmed'),
      '503': {
        channelUnavailable: {
          summary: 'The channel did not answer; the payout stays PENDING',
          value: {
            msg: 'CHANNEL_UNAVAILABLE',
            message: 'the channel psp is unavailable; nothing was done, retry later',
          },
        },
      },
    },
  },
  updatePayout: {
    operation: 'POST /api/v1/payouts/update',
    invalid: {
      request: { merchantOrderNo: PAYOUT_CREATE.merchantOrderNo, webhookUrl: 'merchant.example/hooks/payout' },
    },
    request: { merchantOrderNo: PAYOUT_CREATE.merchantOrderNo, webhookUrl: 'https://merchant.example/hooks/payout' },
    ciphertext:
      '5OM7gWPzkbVtiUHlcUydDWG5rq5CHNfjG5R6esqdehd8wlrGUby1+Ql7gMIgZfAGNVwb9rytuFF/2qkcC83kIZRQpI5vd0bFbV5dIuqIKonG+QX5y04jPSYCClTu6WNxUwWuBi4ve8Q7M34g5tThEy7gs2QZHhG50FNCTjwzgrQ5ZzVEJEdGDVi5TQ==',
    responses: {
      '200': {
        updated: {
          summary: 'webhookUrl changed',
          value: ok({ ...PAYOUT, webhookUrl: 'https://merchant.example/hooks/payout', updatedAt: T0 + 20_000 }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Not an absolute URL',
          value: invalid([{ field: 'webhookUrl', message: 'is not an absolute URL' }]),
        },
      },
      '404': notFound,
      '409': invalidState('a PROCESSING payout cannot be updated'),
    },
  },
  simulatePayout: {
    operation: 'POST /api/v1/sandbox/payouts/simulate',
    invalid: { request: { orderNo: PAYOUT_NO } },
    request: { orderNo: PAYOUT_NO, status: 'SUCCEEDED', channelTradeNo: 'CHWMWTJZ6TZ740125' },
    ciphertext:
      'aMNB1yFBfSSQipiMuYW7b8PNag7034xjJbYXqDhatwQlpOlwuU2b09tSu3qFq1cBBtZgAw9bpudO6dh0vGLry46A20kBi7iKvjtCh/lq6afG7QzYpwgEwYNQ9HGi8lYhyK/k+C2+Kgcz2qPCDxeFPCH+vX3glsmJ25M4Ug/6sGaceqSbM0D4Q335Yg==',
    responses: {
      '200': {
        succeeded: { summary: 'Settled: amount to the channel, fee to the platform', value: ok(PAYOUT_SUCCEEDED) },
      },
      '400': {
        validationFailed: {
          summary: 'No status',
          value: invalid([
            {
              field: 'status',
              message: 'status must be one of PROCESSING, SUCCEEDED, FAILED',
            },
          ]),
        },
      },
      '404': notFound,
      '409': invalidState('a FAILED payout cannot become SUCCEEDED'),
    },
  },
  returnPayout: {
    operation: 'POST /api/v1/sandbox/payouts/return',
    invalid: { request: { orderNo: PAYOUT_NO, refundNo: 'RF 20260102' } },
    request: { orderNo: PAYOUT_NO, refundNo: 'RF-20260102-0001' },
    ciphertext:
      '1fb4UTEYrHPfkyC/Ci0zZ70iZl3sYK2SZI/lXWP3Y2rVaLchMU2FEpDJOXJ3L0LSqC4DhZV7q5SSt6+6R8VoDDrFkcSrkHYUxeljC7wgUBjdO4xngW6XLeJp6xVAJGXzShRN2wtoCKzMbU8Ia5kp',
    responses: {
      '200': { refunded: { summary: 'SUCCEEDED → REFUNDED, principal credited', value: ok(PAYOUT_REFUNDED) } },
      '400': {
        validationFailed: {
          summary: 'A refundNo with a space',
          value: invalid([{ field: 'refundNo', message: 'up to 64 letters, digits or ._:-' }]),
        },
      },
      '404': notFound,
      '409': invalidState('a PROCESSING payout cannot be returned'),
    },
  },
  checkReceiver: {
    operation: 'POST /api/v1/sandbox/webhooks/check',
    invalid: { request: { url: 'ftp://shop.example/webhook/payment' } },
    request: { url: 'https://shop.example/webhook/payment' },
    ciphertext:
      'nLiySvJU1HqMaGAPqhMwHRHXlIzvc85SGG8vfS9ZLzbQ9VkqOiJGAOj/BfVw4R2kp9EQsu3sx411FQEJ7BrEj6yBNCdFsb6gktDrq436i5h1EiJ8G7S5v3pKc7ML8w==',
    responses: {
      '200': {
        passed: {
          summary: 'A receiver that verifies as the specification asks (cases shortened)',
          value: ok({
            url: 'https://shop.example/webhook/payment',
            keyid: 'wk_test_5b0c7e2a91d3',
            passed: true,
            cases: [
              {
                name: 'valid',
                description: 'a delivery as the platform signs it',
                expected: 'accept',
                observed: ['200'],
                answer: 'ok',
                pass: true,
              },
              {
                name: 'body-changed',
                description: 'body changed after signing (amount), headers as signed',
                expected: 'refuse',
                observed: ['401'],
                answer: '{"check":"digest"}',
                pass: true,
              },
              {
                name: 'replayed-nonce',
                description: 'the same valid request twice: the first accepted, the second refused',
                expected: 'refuse',
                observed: ['200', '401'],
                answer: '{"check":"nonce"}',
                pass: true,
              },
            ],
          }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Not an http(s) URL',
          value: invalid([{ field: 'url', message: 'must be an http or https URL' }]),
        },
      },
    },
  },
  getBalances: {
    operation: 'GET /api/v1/balances',
    invalid: { query: 'currency=XBT' },
    parameters: { currency: 'BRL' },
    responses: {
      '200': {
        balances: {
          summary: 'One currency',
          value: ok([{ currency: 'BRL', available: '1222.26', reserved: '102.00' }]),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Not a platform currency',
          value: invalid([{ field: 'currency', message: 'not a supported currency' }]),
        },
      },
    },
  },
  getRates: {
    operation: 'GET /api/v1/rates',
    invalid: { query: 'currency=XBT' },
    parameters: { currency: 'BRL' },
    responses: {
      '200': {
        rates: {
          summary: 'The BRL fees',
          value: ok([
            {
              currency: 'BRL',
              scale: 2,
              payments: [
                { method: 'PIX', feePercent: '0.99', feeFixed: '0.00' },
                { method: 'BOLETO', feePercent: '0.00', feeFixed: '3.50' },
              ],
              payout: { feePercent: '0.00', feeFixed: '2.00' },
            },
          ]),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Not a platform currency',
          value: invalid([{ field: 'currency', message: 'not a supported currency' }]),
        },
      },
    },
  },
  listLedgerEntries: {
    operation: 'GET /api/v1/ledger/entries',
    invalid: { query: 'cursor=bm90LWEtY3Vyc29y' },
    parameters: { currency: 'BRL', pageSize: 2 },
    responses: {
      '200': {
        page: {
          summary: 'A return and the payout settlement before it',
          value: ok({
            items: [
              {
                entryId: '10',
                reference: `refund:${PAYOUT_NO}`,
                transactionKind: 'refund',
                orderNo: PAYOUT_NO,
                account: 'available',
                currency: 'BRL',
                amount: '100.00',
                createdAt: T0 + 86_400_000,
              },
              {
                entryId: '6',
                reference: `payout:${PAYOUT_NO}:settle`,
                transactionKind: 'payout_settle',
                orderNo: PAYOUT_NO,
                account: 'reserved',
                currency: 'BRL',
                amount: '-102.00',
                createdAt: T0 + 300_000,
              },
            ],
            nextCursor: 'MTc2NzIyNTkwMDAwMDo2',
          }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'A cursor that no page gave',
          value: invalid([{ field: 'cursor', message: 'not a cursor from a previous page' }]),
        },
      },
    },
  },
  listEvents: {
    operation: 'GET /api/v1/events',
    invalid: { query: 'status=bounced' },
    parameters: { orderNo: PAYMENT_NO },
    responses: {
      '200': {
        page: {
          summary: 'An order’s events with their attempts',
          value: ok({
            items: [
              {
                ...WEBHOOK_EVENT,
                attemptLog: [
                  {
                    attempt: 1,
                    startedAt: T0 + 95_100,
                    latencyMs: 5000,
                    statusCode: null,
                    responseExcerpt: null,
                    error: 'timeout after 5000 ms',
                  },
                  {
                    attempt: 2,
                    startedAt: T0 + 97_300,
                    latencyMs: 84,
                    statusCode: 200,
                    responseExcerpt: 'ok',
                    error: null,
                  },
                ],
              },
            ],
            nextCursor: null,
          }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'An unknown delivery status',
          value: invalid([{ field: 'status', message: 'one of delivered, pending, failed' }]),
        },
      },
    },
  },
  resendEvent: {
    operation: 'POST /api/v1/events/resend',
    invalid: { request: { eventId: 'evt_1' } },
    request: { eventId: EVENT_ID },
    ciphertext:
      '//zThIlnXsDVa3n/HALVX78FZU3uSLoB9RzZ3z836mNI3js6Nssf8tPJVEf0eYARilMJmSIwgST4ajh1vNWzYUoLIWjm1eE/NNnZeylJrMUnfjW+PgvxpV57bFc=',
    responses: {
      '200': {
        resent: {
          summary: 'Due now, with the same eventId and body',
          value: ok({ ...WEBHOOK_EVENT, deliveryStatus: 'pending', nextAttemptAt: T0 + 600_000 }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Not an event id',
          value: invalid([{ field: 'eventId', message: 'an event id: evt_ and 26 letters or digits' }]),
        },
      },
      '404': {
        eventNotFound: {
          summary: 'No such event of this merchant',
          value: { msg: 'EVENT_NOT_FOUND', message: 'no such event' },
        },
      },
    },
  },
  getWebhookKeys: {
    operation: 'GET /.well-known/paygate/webhook-keys',
    responses: {
      '200': {
        keys: {
          summary: 'During a rotation: the new active key and the previous one, still enabled',
          value: {
            environment: 'sandbox',
            keys: [
              {
                keyid: 'wk_test_7dxuxj1rv11aqm91',
                publicKey: 'eHvlTJ4bLOZAS5srGx9QaYvVdt8Bwpq6kmfD/EvbUWE=',
                status: 'active',
              },
              { keyid: 'wk_vectors_1', publicKey: 'ovhFJzYbWTPIk1fID8No4p1lxvIQfpATuTx9le03d3M=', status: 'enabled' },
            ],
          },
        },
      },
    },
  },
  receiveChannelNotification: {
    operation: 'POST /channels/{name}/notifications',
    parameters: { name: 'psp' },
    request: {
      id: 'ntf_5d2c9a71',
      type: 'charge.updated',
      object: { id: 'ch_8KQ2M4', reference: PAYMENT_NO, status: 'succeeded', amount: '125.50', currency: 'BRL' },
    },
    responses: {
      '200': { applied: { summary: 'Applied to the order', value: ok({ outcome: 'applied' }) } },
      '400': {
        validationFailed: {
          summary: 'Authenticated, but not a notification the connector understands',
          value: { msg: 'VALIDATION_FAILED', message: 'not a charge or transfer notification' },
        },
      },
      '401': { unauthorized: { summary: 'Forged, tampered, stale or replayed', value: { msg: 'UNAUTHORIZED' } } },
      '404': { notFound: { summary: 'No such channel', value: { msg: 'NOT_FOUND', message: 'no such channel' } } },
    },
  },
  receivePixCallback: {
    operation: 'POST /channels/{name}/notifications/pix',
    parameters: { name: 'pix' },
    request: {
      pix: [
        {
          endToEndId: 'E12345678202611251030abcdefghijk',
          txid: '3f9a6c0e5b2d4f718a9c0b1d2e3f4a5b',
          valor: '125.50',
          horario: '2026-11-25T10:30:00.000Z',
        },
      ],
    },
    responses: {
      '200': {
        received: {
          summary: 'Recorded; the charges it names are asked about next',
          value: ok({ outcome: 'received' }),
        },
      },
      '400': {
        validationFailed: {
          summary: 'Not an API Pix callback',
          value: { msg: 'VALIDATION_FAILED', message: 'not an API Pix callback {"pix": [...]}' },
        },
      },
      '404': { notFound: { summary: 'No such channel', value: { msg: 'NOT_FOUND', message: 'no such channel' } } },
    },
  },
};

/** Example bodies of the webhooks the platform sends (top-level `webhooks`), by webhook name. */
export const WEBHOOK_EXAMPLES: Readonly<Record<string, Readonly<Record<string, Example>>>> = {
  paymentEvent: {
    succeeded: {
      summary: 'Payment SUCCEEDED',
      value: {
        eventId: EVENT_ID,
        orderType: 'PAYMENT',
        orderNo: PAYMENT_NO,
        merchantOrderNo: PAYMENT_CREATE.merchantOrderNo,
        status: 'SUCCEEDED',
        currency: 'BRL',
        amount: '125.50',
        paidAmount: '125.50',
        channelTradeNo: 'SBX-7F3K2M',
        payer: { name: 'Maria Silva', documentNumber: '00123456789' },
        attach: 'cart=8812',
      },
    },
  },
  payoutEvent: {
    succeeded: {
      summary: 'Payout SUCCEEDED',
      value: {
        eventId: 'evt_01KDX4R7T9V1W3X5Y7Z9A1B3C5',
        orderType: 'PAYOUT',
        orderNo: PAYOUT_NO,
        merchantOrderNo: PAYOUT_CREATE.merchantOrderNo,
        status: 'SUCCEEDED',
        currency: 'BRL',
        amount: '100.00',
        channelTradeNo: 'CHWMWTJZ6TZ740125',
        attach: 'batch=7',
      },
    },
    refunded: {
      summary: 'Payout REFUNDED (returned by the channel): its own eventId',
      value: {
        eventId: REFUND_EVENT_ID,
        orderType: 'PAYOUT',
        orderNo: PAYOUT_NO,
        merchantOrderNo: PAYOUT_CREATE.merchantOrderNo,
        status: 'REFUNDED',
        currency: 'BRL',
        amount: '100.00',
        refundNo: 'RF-20260102-0001',
        refundAmount: '100.00',
        refundTime: T0 + 86_400_000,
      },
    },
  },
};

/** Answers every signed operation can give, the same for all (added to each by `withExamples`). */
export const COMMON_ERROR_EXAMPLES: Readonly<Record<string, Readonly<Record<string, Example>>>> = {
  '401': { unauthorized: { summary: 'Any authentication failure: always this body', value: { msg: 'UNAUTHORIZED' } } },
  '413': {
    payloadTooLarge: {
      summary: 'The sealed plaintext is over 1 MiB',
      value: { msg: 'PAYLOAD_TOO_LARGE', message: 'the sealed plaintext exceeds 1 MiB' },
    },
  },
  '429': {
    rateLimited: {
      summary: 'Too many requests for this merchant',
      value: { msg: 'RATE_LIMITED', message: 'too many requests for this merchant; retry later' },
    },
  },
  '500': {
    internalError: { summary: 'A fault of ours (logged with the Request-Id)', value: { msg: 'INTERNAL_ERROR' } },
  },
};

/** The envelope of a sealed example, with the body key of the protocol vectors. */
export const envelopeOf = (ciphertext: string) => ({
  version: 1,
  alg: 'sealedbox-v1-x25519-xsalsa20poly1305',
  keyId: WORKED_EXAMPLE.bodyKeyId,
  ciphertext,
});
