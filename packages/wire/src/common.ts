import { z } from 'zod';
import { component } from './registry.js';

/** Currencies the platform accepts (the server's catalogue gives each its scale and methods). */
export const CURRENCIES = ['BRL', 'MXN', 'USD', 'EUR'] as const;
export const Currency = z.enum(CURRENCIES, { error: 'not a supported currency' });
export type Currency = z.output<typeof Currency>;

/** Payment method codes (BRL: PIX, BOLETO; MXN: SPEI; USD: CARD; EUR: SEPA). */
export const PAYMENT_METHODS = ['PIX', 'BOLETO', 'SPEI', 'CARD', 'SEPA'] as const;
export const PaymentMethodCode = z.enum(PAYMENT_METHODS);
export type PaymentMethodCode = z.output<typeof PaymentMethodCode>;

/** Which kind of order. */
export const ORDER_TYPES = ['PAYMENT', 'PAYOUT'] as const;
export const OrderType = z.enum(ORDER_TYPES);
export type OrderType = z.output<typeof OrderType>;

/** A decimal string in major units: no sign, no exponent, never a float. */
export const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
export const decimal = (description: string) =>
  z.string().regex(DECIMAL, 'a decimal string, no sign or exponent').meta({ description });

/** A Unix time in milliseconds. */
export const unixMs = (description: string) => z.int().meta({ description: `${description} (Unix ms)` });

/** The merchant's own order number: 1 to 64 characters of letters, digits and `._:-`. */
export const merchantOrderNo = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, '1 to 64 letters, digits, dots, underscores, colons or hyphens');

/** Platform order numbers: `P…` for payments, `W…` for payouts. */
export const orderNoOf = (prefix: 'P' | 'W') =>
  z.string().regex(new RegExp(`^${prefix}[0-9]{18}$`), `a ${prefix === 'P' ? 'payment' : 'payout'} order number`);

/** Merchant text echoed in events. */
export const attach = z
  .string()
  .max(1024, 'at most 1024 characters')
  // The database cannot store NUL, and no merchant text needs control characters but tab and newline.
  .refine((text) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text), 'free of control characters');

/** An event id: `evt_` and a ULID. */
export const eventId = z.string().regex(/^evt_[0-9A-Z]{26}$/, 'an event id: evt_ and 26 letters or digits');

/** A channel's trade number or a refund number: up to 64 letters, digits or `._:-`. */
export const channelReference = z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'up to 64 letters, digits or ._:-');

/**
 * The shape of a webhookUrl in create and update requests. The server checks the URL rule with
 * its configuration (http/url.ts, http/ssrf.ts) in the schema it passes instead of this one.
 */
export const webhookUrlInput = z.string().max(2048, 'at most 2048 characters').meta({
  format: 'uri',
  description:
    'Where this order’s webhooks go: an absolute http(s) URL (https only in production) without control characters, whitespace, credentials or fragment, parsed as WHATWG URL does. It is stored normalized (new URL(x).href: lowercase scheme and host, IDN as punycode, default port and dot segments removed, non-ASCII percent-encoded), answered in that form, and that stored URL is what is called and signed (@path, @query). Unless PAYGATE_WEBHOOK_ALLOW_PRIVATE (the sandbox default), it must lead to a global unicast address: an IP literal that is not one (private, loopback, link-local, shared, documentation, benchmarking, multicast, reserved, or an IPv6 form carrying such an IPv4 address: mapped, compatible, NAT64, 6to4, Teredo, ISATAP) and localhost are refused (400 VALIDATION_FAILED, field webhookUrl); a host name is checked on every delivery, against every address it resolves to.',
});

/** A schema for a webhookUrl input: `webhookUrlInput`, or the server's configured rule. */
export type WebhookUrlSchema = z.ZodType<string, string>;

/**
 * The shape of a payment's returnUrl in create requests. The server checks the URL rule (http/url.ts,
 * without the SSRF guard) with its configuration in the schema it passes instead of this one.
 */
export const returnUrlInput = z.string().max(2048, 'at most 2048 characters').meta({
  format: 'uri',
  description:
    'Optional. Where the sandbox cashier page (or a channel’s hosted page) sends the payer’s browser after paying or failing, and when the payer opens an order that is already final: an absolute http(s) URL (https only in production) without control characters, whitespace, credentials or fragment, stored normalized as webhookUrl is (400 VALIDATION_FAILED, field returnUrl, otherwise). The SSRF rules do not apply: the platform never calls it. `orderNo`, `merchantOrderNo` and `status` are appended to its query (after any parameters it already has), e.g. `https://shop.example/thanks?cart=8812&orderNo=P202601010000000001&merchantOrderNo=M-1&status=SUCCEEDED`. A payment routed to a channel passes returnUrl to the channel with `orderNo` and `merchantOrderNo` appended, and the channel’s own page sends the payer there (without `status`: the payer may come back before the channel’s notification; read it with the query API). They are not signed: show the payer the status, but fulfil only on the webhook or the query API. Part of the create: a repeat with another returnUrl is DUPLICATE_ORDER.',
});

/** A returnUrl in payment views: the normalized form that was stored. */
export const returnUrlOutput = z.string().meta({
  format: 'uri',
  description: 'Where the payer is sent after paying or failing (normalized); absent when the create gave none',
});

/** A webhookUrl in order views: the normalized form that was stored. */
export const webhookUrlOutput = z.string().meta({
  format: 'uri',
  description: 'The normalized URL this order’s webhooks are sent to and signed for',
});

/**
 * Reference to an order in write requests: exactly one of orderNo and merchantOrderNo (the
 * refinement is not expressible in the OpenAPI schema; the description says it).
 */
export const orderRefOf = (prefix: 'P' | 'W') =>
  z
    .strictObject({ orderNo: orderNoOf(prefix).optional(), merchantOrderNo: merchantOrderNo.optional() })
    .refine((ref) => (ref.orderNo === undefined) !== (ref.merchantOrderNo === undefined), {
      message: 'give exactly one of orderNo and merchantOrderNo',
      path: ['orderNo'],
    })
    .meta({ description: 'Exactly one of orderNo and merchantOrderNo' });

/** Names one order in a write: exactly one of `orderNo` (the platform's) and `merchantOrderNo` (yours). */
export type OrderRef =
  { orderNo: string; merchantOrderNo?: undefined } | { orderNo?: undefined; merchantOrderNo: string };

/** `attach` and/or `webhookUrl` of an order that is not final, named by an order reference. */
export const updateOrderOf = (prefix: 'P' | 'W', webhookUrl: WebhookUrlSchema = webhookUrlInput) =>
  z
    .strictObject({
      orderNo: orderNoOf(prefix).optional(),
      merchantOrderNo: merchantOrderNo.optional(),
      attach: attach.optional(),
      webhookUrl: webhookUrl.optional(),
    })
    .refine((u) => (u.orderNo === undefined) !== (u.merchantOrderNo === undefined), {
      message: 'give exactly one of orderNo and merchantOrderNo',
      path: ['orderNo'],
    })
    .refine((u) => u.attach !== undefined || u.webhookUrl !== undefined, {
      message: 'give attach or webhookUrl to change',
      path: ['attach'],
    })
    .meta({ description: 'Exactly one of orderNo and merchantOrderNo, and attach or webhookUrl (or both)' });

/** One page of a list, newest first. Pass `nextCursor` as `cursor` for the next page (`null` on the last). */
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** The sealed-box envelope every POST body is. */
export const Envelope = component(
  'Envelope',
  z
    .strictObject({
      version: z.literal(1),
      alg: z
        .literal('sealedbox-v1-x25519-xsalsa20poly1305')
        .meta({ description: 'Must equal the Content-Encryption header' }),
      keyId: z.string().meta({ description: 'Id of the platform body key sealed to' }),
      ciphertext: z
        .string()
        .meta({ contentEncoding: 'base64', description: 'Canonical standard base64 of crypto_box_seal output' }),
    })
    .meta({
      description: 'Exactly these four members; unknown or duplicate members and trailing content are refused (401).',
    }),
);
export type Envelope = z.output<typeof Envelope>;

/** The one body of every authentication failure. */
export const Unauthorized = component('Unauthorized', z.strictObject({ msg: z.literal('UNAUTHORIZED') }));
export type Unauthorized = z.output<typeof Unauthorized>;

/** Failure codes the API answers with (`msg`). */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'ORDER_NOT_FOUND',
  'EVENT_NOT_FOUND',
  'NOT_FOUND',
  'DUPLICATE_ORDER',
  'INVALID_STATE',
  'INSUFFICIENT_BALANCE',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'BAD_REQUEST',
  'REQUEST_TIMEOUT',
  'REQUEST_HEADER_FIELDS_TOO_LARGE',
  'NOT_IMPLEMENTED',
  'SERVICE_UNAVAILABLE',
  'NOT_READY',
  'CHANNEL_UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** One problem with one input field, as VALIDATION_FAILED reports it. */
export const FieldError = z.object({ field: z.string(), message: z.string() });
export type FieldError = z.output<typeof FieldError>;

/** A failure answer: `msg` is the code; VALIDATION_FAILED lists the bad fields. */
export const ErrorBody = component(
  'Error',
  z.object({ msg: z.enum(ERROR_CODES), message: z.string().optional(), errors: z.array(FieldError).optional() }),
);
export type ErrorBody = z.output<typeof ErrorBody>;

/** `{"msg":"SUCCESS","data": …}`. */
export const successOf = <T extends z.ZodType>(data: T) => z.object({ msg: z.literal('SUCCESS'), data });
