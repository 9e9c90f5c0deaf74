import { CURRENCIES, scaleOf } from '../catalog.js';
import { validationFailed } from '../errors.js';
import { checkTimeRange, decodeCursor, encodeCursor } from '../validation.js';
import type { Queryable } from './db.js';
import type { OrderTable, Page } from './paging.js';

/** An order table as the portal's search reads it: its listing, and the columns of its person. */
export interface SearchTable extends OrderTable {
  /** The payer's (payments) or payee's (payouts) name column. */
  readonly nameColumn: 'payer_name' | 'payee_name';
  /** The payer's or payee's document number column. */
  readonly documentColumn: 'payer_document' | 'payee_document';
  /** The payee's account number column (payouts); payments have none. */
  readonly accountColumn?: 'payee_account_number';
}

/** What a search filters on: the text, and the list filters beside it. */
export interface SearchFilters {
  /** What the person typed: an order number, a merchant order number, a name, a document number or an amount. */
  readonly q: string;
  readonly status?: string | undefined;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly pageSize: number;
  readonly cursor?: string | undefined;
}

/** The longest search text taken. */
export const SEARCH_MAX = 100;

/**
 * The conditions one search text stands for, any of which finds an order (`OR`), with their
 * parameters: the text as an order number or merchant order number (exactly); its words as
 * prefixes of the name's words (all of them: `mar sil` finds Maria Silva); its letters and digits
 * as a document number (`123.456.789-01` finds 12345678901); and, when it is a decimal, as an
 * amount in each currency whose minor digits can hold it (`10`, `10.5`, `10,50`).
 * The expressions are those of migration 0023's indexes.
 */
function searchConditions(orders: SearchTable, q: string, params: unknown[]): string[] {
  const add = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const text = add(q);
  const conditions = [`order_no = ${text}`, `merchant_order_no = ${text}`];
  // Words are letters and digits only, so nothing in them is tsquery syntax.
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length > 0) {
    const query = add(words.map((word) => `${word}:*`).join(' & '));
    conditions.push(`to_tsvector('simple', coalesce(${orders.nameColumn}, '')) @@ to_tsquery('simple', ${query})`);
  }
  const document = q.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
  if (document.length >= 3) {
    conditions.push(
      `upper(regexp_replace(${orders.documentColumn}, '[^0-9A-Za-z]', '', 'g')) = ${add(document)} AND ${orders.documentColumn} IS NOT NULL`,
    );
  }
  for (const [units, fraction] of amountReadings(q)) {
    for (const [scale, currencies] of currenciesByScale(fraction)) {
      const minor = BigInt(units + fraction.padEnd(scale, '0').slice(0, scale));
      if (minor === 0n) continue;
      conditions.push(`(amount_minor = ${add(minor.toString())} AND currency = ANY(${add(currencies)}::text[]))`);
    }
  }
  return conditions;
}

/**
 * The amounts a text may be, as [units, fraction digits]: a decimal with a point or a comma
 * (`10`, `10.5`, `10,50`), and a number with thousands groups in either convention (`1.234,50`,
 * `1,234.50`). `1,500` is read both ways (1.5 and 1500): a search may find a little more, never less.
 */
export function amountReadings(q: string): [string, string][] {
  const readings: [string, string][] = [];
  const plain = /^([0-9]{1,15})(?:[.,]([0-9]{1,4}))?$/.exec(q);
  if (plain) readings.push([plain[1] as string, plain[2] ?? '']);
  const grouped = /^([0-9]{1,3}(?:([.,])[0-9]{3})(?:\2[0-9]{3}){0,3})(?:[.,]([0-9]{1,4}))?$/.exec(q);
  if (grouped && (grouped[3] === undefined || !q.slice(-(grouped[3].length + 1)).startsWith(grouped[2] as string))) {
    readings.push([(grouped[1] as string).replace(/[.,]/g, ''), grouped[3] ?? '']);
  }
  return readings;
}

/**
 * One merchant's orders that the search text finds (see searchConditions), within the list
 * filters, newest first with a keyset cursor as the lists have; and how many there are.
 */
export async function searchOrders<R extends { created_at: Date; id: bigint }>(
  db: Queryable,
  orders: SearchTable,
  merchantId: bigint,
  filters: SearchFilters,
): Promise<Page<R> & { total: number }> {
  const q = filters.q.trim();
  if (q === '' || q.length > SEARCH_MAX) {
    throw validationFailed([{ field: 'q', message: `1 to ${SEARCH_MAX} characters` }]);
  }
  if (filters.status !== undefined && !orders.statuses.includes(filters.status)) {
    throw validationFailed([{ field: 'status', message: `one of ${orders.statuses.join(', ')}` }]);
  }
  checkTimeRange(filters);
  const cursor = filters.cursor === undefined ? undefined : decodeCursor(filters.cursor);
  const params: unknown[] = [merchantId];
  const where = [`merchant_id = $1`, `(${searchConditions(orders, q, params).join(' OR ')})`];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (filters.status !== undefined) add((p) => `status = ${p}`, filters.status);
  if (filters.from !== undefined) add((p) => `created_at >= ${p}`, new Date(filters.from));
  if (filters.to !== undefined) add((p) => `created_at <= ${p}`, new Date(filters.to));
  const counted = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM ${orders.table} WHERE ${where.join(' AND ')}`,
    params,
  );
  if (cursor !== undefined) {
    params.push(cursor.createdAt, cursor.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(filters.pageSize + 1);
  const result = await db.query<R>(
    `SELECT ${orders.columns} FROM ${orders.table} WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  const rows = result.rows.slice(0, filters.pageSize);
  const last = rows.at(-1);
  return {
    rows,
    nextCursor: result.rows.length > filters.pageSize && last ? encodeCursor(last.created_at, last.id) : null,
    total: Number(counted.rows[0]?.n ?? 0),
  };
}

/** What the back office's search filters on, across every merchant. */
export interface SearchAllFilters {
  /** An identifier or an amount; empty: every order within the other filters. */
  readonly q?: string | undefined;
  /** Orders the text names through another record (a channel's own id of the order, a bank file's MsgId). */
  readonly orderNos?: readonly string[];
  readonly merchantId?: bigint | undefined;
  readonly status?: string | undefined;
  readonly currency?: string | undefined;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  /** The position after which the page starts, newest first (see allOrdersCursor). */
  readonly after?: { readonly createdAt: Date; readonly orderNo: string } | undefined;
  readonly limit: number;
}

/**
 * The position of a search across every merchant: the creation time and the order number (unique
 * across payments and payouts, P… and W…), so that two tables' pages merge into one order.
 */
export function allOrdersCursor(createdAt: number, orderNo: string): string {
  return Buffer.from(`${createdAt}:${orderNo}`).toString('base64url');
}

/** The position a cursor of `allOrdersCursor` names; anything else is VALIDATION_FAILED. */
export function readAllOrdersCursor(cursor: string): { createdAt: Date; orderNo: string } {
  const refused = () => validationFailed([{ field: 'cursor', message: 'not a cursor from a previous page' }]);
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw refused();
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor) throw refused();
  const match = /^(0|[1-9][0-9]{0,14}):([PW][0-9]{18})$/.exec(bytes.toString('latin1'));
  if (!match) throw refused();
  return { createdAt: new Date(Number(match[1])), orderNo: match[2] as string };
}

/**
 * The conditions an identifier stands for across every merchant, each of which an index of
 * migration 0026 answers: the order number, the merchant's order number (in any case), the channel's trade
 * number, the orders another record names, the payer's or payee's document and the payee's
 * account (letters and digits, upper-cased), and the text as an amount.
 */
function identifierConditions(
  orders: SearchTable,
  q: string,
  orderNos: readonly string[],
  params: unknown[],
): string[] {
  const add = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const conditions: string[] = [];
  if (q !== '') {
    const text = add(q);
    conditions.push(`order_no = ${text}`, `lower(merchant_order_no) = lower(${text})`, `channel_trade_no = ${text}`);
    const normalized = q.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
    if (normalized.length >= 3) {
      const value = add(normalized);
      conditions.push(
        `(lower(regexp_replace(${orders.documentColumn}, '[^0-9A-Za-z]', '', 'g')) = lower(${value}) AND ${orders.documentColumn} IS NOT NULL)`,
      );
      if (orders.accountColumn !== undefined) {
        conditions.push(`upper(regexp_replace(${orders.accountColumn}, '[^0-9A-Za-z]', '', 'g')) = ${value}`);
      }
    }
    // An amount as `<currency>:<minor units>` keys, one per currency whose minor digits hold it.
    const keys: string[] = [];
    for (const [units, fraction] of amountReadings(q)) {
      for (const [scale, currencies] of currenciesByScale(fraction)) {
        const minor = BigInt(units + fraction.padEnd(scale, '0').slice(0, scale));
        if (minor !== 0n) keys.push(...currencies.map((currency) => `${currency}:${minor}`));
      }
    }
    if (keys.length > 0) conditions.push(`(currency || ':' || amount_minor::text) = ANY(${add(keys)}::text[])`);
  }
  if (orderNos.length > 0) conditions.push(`order_no = ANY(${add(orderNos)}::text[])`);
  return conditions;
}

/** The catalogue's currencies by minor digits, those whose scale can hold `fraction`. */
function currenciesByScale(fraction: string): Map<number, string[]> {
  const byScale = new Map<number, string[]>();
  for (const currency of CURRENCIES.keys()) {
    const scale = scaleOf(currency);
    if (fraction.replace(/0+$/, '').length > scale) continue;
    byScale.set(scale, [...(byScale.get(scale) ?? []), currency]);
  }
  return byScale;
}

/**
 * Every merchant's orders of one table that the back office's search finds, newest first (by
 * creation time, then order number), at most `limit` after `after`. The caller merges the pages of
 * both tables. A text that is no identifier and names no order finds nothing.
 */
export async function searchAllOrders<R>(db: Queryable, orders: SearchTable, filters: SearchAllFilters): Promise<R[]> {
  const q = (filters.q ?? '').trim();
  if (q.length > SEARCH_MAX) throw validationFailed([{ field: 'q', message: `at most ${SEARCH_MAX} characters` }]);
  if (filters.status !== undefined && !orders.statuses.includes(filters.status)) {
    throw validationFailed([{ field: 'status', message: `one of ${orders.statuses.join(', ')}` }]);
  }
  checkTimeRange(filters);
  const params: unknown[] = [];
  const where: string[] = [];
  const identified = q !== '' || (filters.orderNos?.length ?? 0) > 0;
  if (identified) {
    const conditions = identifierConditions(orders, q, filters.orderNos ?? [], params);
    where.push(`(${conditions.join(' OR ')})`);
  }
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (filters.merchantId !== undefined) add((p) => `merchant_id = ${p}`, filters.merchantId);
  if (filters.status !== undefined) add((p) => `status = ${p}`, filters.status);
  if (filters.currency !== undefined) add((p) => `currency = ${p}`, filters.currency);
  if (filters.from !== undefined) add((p) => `created_at >= ${p}`, new Date(filters.from));
  if (filters.to !== undefined) add((p) => `created_at <= ${p}`, new Date(filters.to));
  const paging: string[] = [];
  if (filters.after !== undefined) {
    params.push(filters.after.createdAt, filters.after.orderNo);
    paging.push(`(created_at, order_no) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(filters.limit);
  const tail = `ORDER BY created_at DESC, order_no DESC LIMIT $${params.length}`;
  const whereOf = (clauses: readonly string[]) => (clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '');
  // An identifier finds few orders, each by its own index (a BitmapOr of them): they are found
  // first (MATERIALIZED), then sorted. Left to itself, the planner expects many and walks the
  // newest-first index instead, filtering the whole table (seconds at a million orders).
  const sql = identified
    ? `WITH found AS MATERIALIZED (SELECT ${orders.columns} FROM ${orders.table} ${whereOf(where)})
       SELECT * FROM found ${whereOf(paging)} ${tail}`
    : `SELECT ${orders.columns} FROM ${orders.table} ${whereOf([...where, ...paging])} ${tail}`;
  const result = await db.query<R>(sql, params);
  return result.rows;
}
