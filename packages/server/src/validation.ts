import { MAX_UNIX_MS } from '@paygate/wire';
import type { z } from 'zod';
import type { Config } from './config.js';
import { type FieldError, validationFailed } from './errors.js';
import { httpUrl } from './http/url.js';
import { refusedHost } from './http/ssrf.js';

/**
 * Parses `input` with `schema`, or throws VALIDATION_FAILED with one error per bad field, each a
 * plain sentence naming the field and what it takes (see `issueErrors`).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw validationFailed(result.error.issues.flatMap((issue) => issueErrors(schema, issue)));
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return TYPE_NAMES[typeof value] ?? typeof value;
}

/** The member names of the object schema at `path` under `schema` (through optional and pipes). */
function membersAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.core.$ZodType | undefined = schema;
  const unwrap = () => {
    for (;;) {
      const def = current?._zod.def as { type?: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType } | undefined;
      if (def?.type === 'optional' || def?.type === 'nullable' || def?.type === 'default') current = def.innerType;
      else if (def?.type === 'pipe') current = def.in;
      else return;
    }
  };
  for (const key of [...path, undefined]) {
    unwrap();
    const def = current?._zod.def as {
      type?: string;
      shape?: Record<string, z.core.$ZodType>;
      element?: z.core.$ZodType;
    };
    if (key === undefined) return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
    if (def?.type === 'object' && def.shape) current = def.shape[String(key)];
    else if (def?.type === 'array') current = def.element;
    else return [];
  }
  return [];
}

/** One zod issue as field errors: unknown members one each, the rest as a sentence. */
function issueErrors(schema: z.core.$ZodType, issue: z.core.$ZodIssue): FieldError[] {
  const at = (key?: PropertyKey) => [...issue.path, ...(key === undefined ? [] : [key])].map(String).join('.');
  const field = at() || 'body';
  switch (issue.code) {
    case 'unrecognized_keys': {
      const members = membersAt(schema, issue.path);
      return issue.keys.map((key) => {
        const near = members.find((member) => member.toLowerCase() === key.toLowerCase());
        const hint = near
          ? `; did you mean ${near}?`
          : members.length > 0
            ? `; the members are ${members.join(', ')}`
            : '';
        return { field: at(key), message: `${at(key)} is not a member of this request${hint}` };
      });
    }
    case 'invalid_type': {
      const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
      if (issue.input === undefined) return [{ field, message: `${field} is required: ${expected}` }];
      return [{ field, message: `${field} must be ${expected}, not ${typeOf(issue.input)}` }];
    }
    case 'invalid_value': {
      const values = issue.values.map(String);
      const upper = typeof issue.input === 'string' ? issue.input.toUpperCase() : undefined;
      if (upper !== undefined && upper !== issue.input && values.includes(upper)) {
        const last = String(issue.path.at(-1) ?? '');
        return [
          {
            field,
            message:
              last === 'currency' ? `currency codes are upper case: ${upper}` : `${field} is upper case: ${upper}`,
          },
        ];
      }
      return [{ field, message: `${field} must be one of ${values.join(', ')}` }];
    }
    case 'too_big':
    case 'too_small': {
      if (!issue.message.startsWith('Too ')) return [{ field, message: issue.message }];
      const bound = issue.code === 'too_big' ? `at most ${String(issue.maximum)}` : `at least ${String(issue.minimum)}`;
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' items' : '';
      return [{ field, message: `${field} must be ${bound}${unit}` }];
    }
    default:
      return [{ field, message: issue.message.startsWith('Invalid') ? `${field} is not valid here` : issue.message }];
  }
}

// The wire's field schemas, shared with the OpenAPI document and the SDK types (@paygate/wire).
export { attach, merchantOrderNo, type OrderRef, orderNoOf } from '@paygate/wire';

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

/**
 * Where the payer's browser is sent back to (a payment's returnUrl): the same URL rule as a
 * webhook URL (https only in production, at most 2048 characters, stored normalized). The SSRF
 * guard does not apply: the platform never calls it, the payer's browser does.
 */
export function returnUrl(config: Pick<Config, 'environment'>) {
  return httpUrl({ httpsOnly: config.environment === 'production', maxLength: 2048 });
}

/**
 * Parses a raw query string against the endpoint's public parameters: every name must be listed,
 * none may repeat, none may be empty (`?a=` and `?a` are refused, not read as absent). Values
 * are never echoed in errors (they are not logged either).
 */
export function parseQuery(rawQuery: string | undefined, allowed: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  if (!rawQuery) return values;
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!allowed.includes(name)) errors.push({ field: name, message: 'is not a query parameter of this endpoint' });
    else if (seen.has(name)) errors.push({ field: name, message: 'is repeated' });
    else if (value === '') errors.push({ field: name, message: 'is empty' });
    seen.add(name);
    values[name] = value;
  }
  if (errors.length > 0) throw validationFailed(errors);
  return values;
}

// Query parameter schemas shared with the OpenAPI document (@paygate/wire).
export { ListQuery as listQuery, MAX_UNIX_MS, pageSizeParam, unixMsParam } from '@paygate/wire';
/** The largest row id (PostgreSQL bigint). */
const MAX_ROW_ID = 2n ** 63n - 1n;

/** `to` before `from` is refused rather than read as an empty range. */
export function checkTimeRange(range: { from?: number | undefined; to?: number | undefined }): void {
  if (range.from !== undefined && range.to !== undefined && range.to < range.from) {
    throw validationFailed([{ field: 'to', message: 'is before from' }]);
  }
}

/** Opaque list cursor: the position after the last row of a page (created_at, id). */
export function encodeCursor(createdAt: Date, id: bigint): string {
  return Buffer.from(`${createdAt.getTime()}:${id}`).toString('base64url');
}

/**
 * The position a cursor names. Only what `encodeCursor` produces is accepted: unpadded base64url
 * that re-encodes to itself, a time of 0 to MAX_UNIX_MS and a row id of 1 to 2^63-1, both in
 * plain digits; anything else (tampered, truncated, from elsewhere) is VALIDATION_FAILED.
 */
export function decodeCursor(cursor: string): { createdAt: Date; id: bigint } {
  const refused = () => validationFailed([{ field: 'cursor', message: 'not a cursor from a previous page' }]);
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw refused();
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor) throw refused();
  const match = /^(0|[1-9][0-9]{0,14}):([1-9][0-9]{0,18})$/.exec(bytes.toString('latin1'));
  if (!match) throw refused();
  const ms = Number(match[1]);
  const id = BigInt(match[2] as string);
  if (ms > MAX_UNIX_MS || id > MAX_ROW_ID) throw refused();
  return { createdAt: new Date(ms), id };
}
