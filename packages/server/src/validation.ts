import { z } from 'zod';
import type { Config } from './config.js';
import { type FieldError, validationFailed } from './errors.js';
import { httpUrl } from './http/url.js';
import { refusedHost } from './modules/webhooks/destination.js';

/** Parses `input` with `schema`, or throws VALIDATION_FAILED with one error per bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationFailed(
    result.error.issues.map((issue): FieldError => ({ field: issue.path.join('.') || 'body', message: issue.message })),
  );
}

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
  .refine((text) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text), 'no control characters');

/**
 * A webhook URL under the one URL rule (http/url.ts; https only in production), at most 2048
 * characters; its output is the normalized URL, which is stored, called and signed. Unless
 * PAYGATE_WEBHOOK_ALLOW_PRIVATE, an address literal must be global unicast (and localhost is
 * refused); every address a name resolves to is checked again when delivering (SSRF guard).
 */
export function webhookUrl(config: Pick<Config, 'environment' | 'webhookAllowPrivate'>) {
  return httpUrl({
    httpsOnly: config.environment === 'production',
    maxLength: 2048,
    refuse: config.webhookAllowPrivate ? undefined : refusedHost,
  });
}

/** Reference to an order in write requests: exactly one of orderNo and merchantOrderNo. */
export function orderRef(prefix: 'P' | 'W') {
  return z
    .object({ orderNo: orderNoOf(prefix).optional(), merchantOrderNo: merchantOrderNo.optional() })
    .refine((ref) => (ref.orderNo === undefined) !== (ref.merchantOrderNo === undefined), {
      message: 'give exactly one of orderNo and merchantOrderNo',
      path: ['orderNo'],
    });
}

export type OrderRef =
  { orderNo: string; merchantOrderNo?: undefined } | { orderNo?: undefined; merchantOrderNo: string };

/**
 * Parses a raw query string against the endpoint's public parameters: every name must be listed,
 * none may repeat; empty values count as absent. Values are never echoed in errors (they are
 * not logged either).
 */
export function parseQuery(rawQuery: string | undefined, allowed: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  if (!rawQuery) return values;
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!allowed.includes(name)) errors.push({ field: name, message: 'is not a query parameter of this endpoint' });
    else if (seen.has(name)) errors.push({ field: name, message: 'is repeated' });
    seen.add(name);
    if (value !== '') values[name] = value;
  }
  if (errors.length > 0) throw validationFailed(errors);
  return values;
}

/** Query parameters shared by the list endpoints. */
export const listQuery = z.object({
  status: z.string().optional(),
  from: z.coerce.number().int().nonnegative().optional(),
  to: z.coerce.number().int().nonnegative().optional(),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

/** Opaque list cursor: the position after the last row of a page (created_at, id). */
export function encodeCursor(createdAt: Date, id: bigint): string {
  return Buffer.from(`${createdAt.getTime()}:${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; id: bigint } {
  const match = /^(\d{1,15}):(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw validationFailed([{ field: 'cursor', message: 'not a cursor from a previous page' }]);
  return { createdAt: new Date(Number(match[1])), id: BigInt(match[2] as string) };
}
