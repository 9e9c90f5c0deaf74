import { z } from 'zod';
import { CURRENCIES, merchantOrderNo, orderNoOf, PAYMENT_METHODS } from './common.js';
import { PAYMENT_STATUSES } from './payments.js';
import { PAYOUT_STATUSES } from './payouts.js';
import { DELIVERY_STATUSES } from './webhooks.js';

/**
 * Query parameters of the merchant API's reads. Values arrive as strings (the server's parseQuery
 * refuses unknown, repeated and empty names first); a numeric parameter is parsed from plain
 * decimal digits. Metadata `param` is the JSON schema the OpenAPI document gives the decoded value
 * where it differs from the string the schema reads (an integer), or the values a service checks
 * itself with its own message (a status filter); `queryParameters()` generates the parameter list.
 */
type ParamMeta = { description?: string; param?: Record<string, unknown> };

/** The latest instant time filters and cursors may name: 9999-12-31T23:59:59.999Z. */
export const MAX_UNIX_MS = 253_402_300_799_999;

/** A Unix time in milliseconds as a query parameter: plain decimal digits, 0 to year 9999. */
export const unixMsParam = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,14})$/, 'a Unix time in milliseconds (decimal digits)')
  .transform(Number)
  .refine((ms) => ms <= MAX_UNIX_MS, `at most ${MAX_UNIX_MS} (the end of year 9999)`);

/** A page size as a query parameter: plain decimal digits, 1 to 100 (default 20). */
export const pageSizeParam = z
  .string()
  .regex(/^[1-9][0-9]{0,2}$/, 'an integer from 1 to 100')
  .transform(Number)
  .refine((size) => size <= 100, 'an integer from 1 to 100')
  .default(20);

const param = (meta: ParamMeta) => meta;
const timeParams = (what: string) => ({
  from: unixMsParam
    .optional()
    .meta(param({ description: `${what} at or after (Unix ms)`, param: { type: 'integer' } })),
  to: unixMsParam.optional().meta(param({ description: `${what} at or before (Unix ms)`, param: { type: 'integer' } })),
});
const pageParams = {
  pageSize: pageSizeParam.meta(
    param({ description: '1 to 100, default 20', param: { type: 'integer', minimum: 1, maximum: 100 } }),
  ),
  cursor: z
    .string()
    .max(200)
    .optional()
    .meta(param({ description: 'nextCursor of the previous page' })),
};

/** A filter the service checks against `values` itself (and says which are allowed). */
const checkedParam = (values: readonly string[], description: string) =>
  z
    .string()
    .max(20)
    .optional()
    .meta(param({ description, param: { type: 'string', enum: [...values] } }));

/** Filters of an order list: status (checked by the service), creation time range, paging. */
export const ListQuery = z.object({ status: z.string().max(20).optional(), ...timeParams('Created'), ...pageParams });

/** `GET /api/v1/payments/list` and `/payouts/list`. */
export const orderListQuery = (statuses: readonly string[]) =>
  ListQuery.extend({ status: checkedParam(statuses, 'Only orders in this state') });
export const PaymentListQuery = orderListQuery(PAYMENT_STATUSES);
export const PayoutListQuery = orderListQuery(PAYOUT_STATUSES);

/** `GET /api/v1/payments`, `/payouts` and `/payouts/receipt`: exactly one of orderNo and merchantOrderNo. */
export const orderLookupQuery = (prefix: 'P' | 'W') =>
  z
    .object({
      orderNo: orderNoOf(prefix)
        .optional()
        .meta(param({ description: 'Platform order number (or merchantOrderNo; exactly one non-empty)' })),
      merchantOrderNo: merchantOrderNo.optional().meta(param({ description: 'Merchant order number' })),
    })
    .refine((ref) => (ref.orderNo === undefined) !== (ref.merchantOrderNo === undefined), {
      message: 'give exactly one of orderNo and merchantOrderNo',
      path: ['orderNo'],
    });

/** `GET /api/v1/events`. */
export const EventListQuery = z.object({
  // Events carry the platform's order number (P… or W…).
  orderNo: z
    .string()
    .regex(/^[PW][0-9]{18}$/, 'a payment or payout order number')
    .optional()
    .meta(param({ description: 'Only the events of this order (P… or W…)' })),
  status: checkedParam(DELIVERY_STATUSES, 'Delivery status'),
  ...timeParams('Created'),
  ...pageParams,
});

/** `GET /api/v1/ledger/entries`. */
export const LedgerEntriesQuery = z.object({
  currency: checkedParam(CURRENCIES, 'Only this currency'),
  ...timeParams('Posted'),
  ...pageParams,
});

/** `GET /api/v1/balances`. */
export const BalancesQuery = z.object({ currency: checkedParam(CURRENCIES, 'Only this currency') });

/** `GET /api/v1/rates`. */
export const RatesQuery = z.object({
  currency: checkedParam(CURRENCIES, 'Only this currency'),
  method: checkedParam(PAYMENT_METHODS, 'Only this payment method'),
});

/** The OpenAPI query parameters of a query schema, in its members' order. */
export function queryParameters(query: z.ZodObject): Record<string, unknown>[] {
  return Object.entries(query.shape as Record<string, z.ZodType>).map(([name, field]) => {
    const { description, param: documented } = (z.globalRegistry.get(field) ?? {}) as ParamMeta;
    let schema = documented;
    if (!schema) {
      const {
        $schema: _s,
        description: _d,
        ...generated
      } = z.toJSONSchema(field, {
        target: 'draft-2020-12',
        io: 'input',
      }) as Record<string, unknown>;
      schema = generated;
    }
    return {
      name,
      in: 'query',
      required: !field.safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
    };
  });
}
