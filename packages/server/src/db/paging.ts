import type { StatusTotal } from '@paygate/wire';
import { validationFailed } from '../errors.js';
import { checkTimeRange, decodeCursor, encodeCursor } from '../validation.js';
import { scaleOf } from '../catalog.js';
import { formatAmount } from '../money.js';
import { prepared, type PreparedStatement, type Queryable } from './db.js';

/** A page of rows, newest first, and the cursor of the next page (`null` on the last). */
export interface Page<R> {
  readonly rows: R[];
  readonly nextCursor: string | null;
}

/** What a keyset-paged listing filters on. */
export interface PageQuery {
  /** `SELECT … FROM …` (joins included), without WHERE. */
  readonly select: string;
  /** The table alias qualifying `created_at` and `id` (e.g. `e.`), or `''`. */
  readonly alias?: string;
  /** Equality filters by column; `undefined` values are left out. The first should be the owner. */
  readonly equals: Readonly<Record<string, unknown>>;
  /** Created at or after / at or before, Unix ms, inclusive. */
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly cursor?: string | undefined;
  readonly pageSize: number;
}

/**
 * Newest-first keyset paging over `(created_at, id)`: the cursor is the last row's pair, so a
 * page costs an index range scan however deep it is, and rows inserted meanwhile never shift it.
 */
export async function keysetPage<R extends { created_at: Date; id: bigint }>(
  db: Queryable,
  query: PageQuery,
): Promise<Page<R>> {
  // Every filter is checked before any SQL: a bad one is VALIDATION_FAILED, never a database error.
  checkTimeRange(query);
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const alias = query.alias ?? '';
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, ...values: unknown[]) => {
    let text = clause;
    for (const value of values) {
      params.push(value);
      text = text.replace('?', `$${params.length}`);
    }
    where.push(text);
  };
  for (const [column, value] of Object.entries(query.equals)) {
    if (value !== undefined) add(`${column} = ?`, value);
  }
  if (query.from !== undefined) add(`${alias}created_at >= ?`, new Date(query.from));
  if (query.to !== undefined) add(`${alias}created_at <= ?`, new Date(query.to));
  if (cursor !== undefined) {
    add(`(${alias}created_at, ${alias}id) < (?, ?)`, cursor.createdAt, cursor.id);
  }
  params.push(query.pageSize + 1);
  const result = await db.query<R>(
    `${query.select} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${alias}created_at DESC, ${alias}id DESC LIMIT $${params.length}`,
    params,
  );
  const rows = result.rows.slice(0, query.pageSize);
  const last = rows.at(-1);
  return {
    rows,
    nextCursor: result.rows.length > query.pageSize && last ? encodeCursor(last.created_at, last.id) : null,
  };
}

/** What a count of a listing filters on: the same equality filters and time range as its pages. */
export interface CountQuery {
  /** The table (no joins). */
  readonly from: string;
  /** Equality filters by column; `undefined` values are left out. */
  readonly equals: Readonly<Record<string, unknown>>;
  /** Created at or after / at or before, Unix ms, inclusive. */
  readonly createdFrom?: number | undefined;
  readonly createdTo?: number | undefined;
}

/** How many rows a listing's filters match (the total shown next to its pages). */
export async function countRows(db: Queryable, query: CountQuery): Promise<number> {
  checkTimeRange({ from: query.createdFrom, to: query.createdTo });
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of Object.entries(query.equals)) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  if (query.createdFrom !== undefined) {
    params.push(new Date(query.createdFrom));
    where.push(`created_at >= $${params.length}`);
  }
  if (query.createdTo !== undefined) {
    params.push(new Date(query.createdTo));
    where.push(`created_at <= $${params.length}`);
  }
  const result = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM ${query.from} WHERE ${where.join(' AND ')}`,
    params,
  );
  return Number(result.rows[0]?.n ?? 0);
}

/** What a list of one merchant's payments or payouts filters on. */
export interface OrderListFilters {
  /** One of the table's statuses, or none. */
  status?: string | undefined;
  /** Created at or after / at or before, Unix ms, inclusive. */
  from?: number | undefined;
  to?: number | undefined;
  pageSize: number;
  cursor?: string | undefined;
}

/** An order table as its listing reads it: the table, the columns of its rows and its statuses. */
export interface OrderTable {
  readonly table: 'payments' | 'payouts';
  /** The select list of a row (`*` or named columns). */
  readonly columns: string;
  /** The statuses a list filter may name. */
  readonly statuses: readonly string[];
}

/** A list filter's status: one of the table's statuses, or none. */
function checkStatusFilter(orders: OrderTable, status: string | undefined): void {
  if (status !== undefined && !orders.statuses.includes(status)) {
    throw validationFailed([{ field: 'status', message: `one of ${orders.statuses.join(', ')}` }]);
  }
}

/** One list request of one merchant's orders, checked and ready for {@link orderPages}. */
export interface PageRequest {
  readonly merchantId: bigint;
  readonly status: string | undefined;
  readonly from: Date | undefined;
  readonly to: Date | undefined;
  readonly after: { createdAt: Date; id: bigint } | undefined;
  readonly pageSize: number;
}

/**
 * A list request's filters checked (VALIDATION_FAILED before any SQL) and decoded: a status of
 * the table, `to` not before `from`, a cursor `encodeCursor` made.
 */
export function pageRequest(orders: OrderTable, merchantId: bigint, filters: OrderListFilters): PageRequest {
  checkStatusFilter(orders, filters.status);
  checkTimeRange(filters);
  return {
    merchantId,
    status: filters.status,
    from: filters.from === undefined ? undefined : new Date(filters.from),
    to: filters.to === undefined ? undefined : new Date(filters.to),
    after: filters.cursor === undefined ? undefined : decodeCursor(filters.cursor),
    pageSize: filters.pageSize,
  };
}

/** Which filters a request uses, as bits: a statement per combination, so each keeps its index conditions. */
const shapeOf = (request: PageRequest) =>
  (request.status !== undefined ? 1 : 0) |
  (request.from !== undefined ? 2 : 0) |
  (request.to !== undefined ? 4 : 0) |
  (request.after !== undefined ? 8 : 0);

/** A column of the requests' table in a pages statement: its type, and the filter that needs it (0: always). */
interface RequestColumn {
  readonly name: string;
  readonly type: string;
  readonly shape: number;
  readonly value: (request: PageRequest) => unknown;
}

const REQUEST_COLUMNS: readonly RequestColumn[] = [
  { name: 'merchant_id', type: 'bigint', shape: 0, value: (r) => r.merchantId.toString() },
  { name: 'status', type: 'text', shape: 1, value: (r) => r.status },
  { name: 'created_from', type: 'timestamptz', shape: 2, value: (r) => r.from },
  { name: 'created_to', type: 'timestamptz', shape: 4, value: (r) => r.to },
  { name: 'after_at', type: 'timestamptz', shape: 8, value: (r) => r.after?.createdAt },
  { name: 'after_id', type: 'bigint', shape: 8, value: (r) => r.after?.id.toString() },
  { name: 'n', type: 'int', shape: 0, value: (r) => r.pageSize + 1 },
];

/** The request columns a shape's statement takes, in the order of its parameters. */
const requestColumns = (shape: number) => REQUEST_COLUMNS.filter((column) => (column.shape & shape) === column.shape);

/**
 * The statement that pages many requests of one shape at once: each request is a row of arrays
 * (`unnest … WITH ORDINALITY`, only the filters the shape uses), and a LATERAL subquery reads its
 * page with exactly the conditions its own statement would have, so each takes the list index,
 * `(merchant_id[, status], created_at DESC, id DESC)`, as a range scan from its cursor, however
 * deep.
 */
export function pagesStatement(orders: OrderTable, shape: number): PreparedStatement {
  const conditions = ['o.merchant_id = k.merchant_id'];
  if (shape & 1) conditions.push('o.status = k.status');
  if (shape & 2) conditions.push('o.created_at >= k.created_from');
  if (shape & 4) conditions.push('o.created_at <= k.created_to');
  if (shape & 8) conditions.push('(o.created_at, o.id) < (k.after_at, k.after_id)');
  const columns = orders.columns
    .split(',')
    .map((column) => `o.${column.trim()}`)
    .join(', ');
  const keys = requestColumns(shape);
  return prepared(
    `${orders.table}_pages_${shape}`,
    `SELECT k.i AS page_request, ${columns}
       FROM unnest(${keys.map((key, i) => `$${i + 1}::${key.type}[]`).join(', ')})
            WITH ORDINALITY AS k (${keys.map((key) => key.name).join(', ')}, i)
      CROSS JOIN LATERAL (
        SELECT * FROM ${orders.table} o WHERE ${conditions.join(' AND ')}
         ORDER BY o.created_at DESC, o.id DESC LIMIT k.n) o
      ORDER BY k.i, o.created_at DESC, o.id DESC`,
    { customPlan: true },
  );
}

/**
 * Pages of one order table for many list requests, newest first, with the cursor of each next
 * page (`null` on the last): one statement per combination of filters used, whatever the number
 * of requests or merchants. Keyset paging over `(created_at, id)`, as {@link keysetPage}.
 */
export async function orderPages<R extends { created_at: Date; id: bigint }>(
  db: Queryable,
  orders: OrderTable,
  requests: readonly PageRequest[],
): Promise<Page<R>[]> {
  const pages: Page<R>[] = new Array<Page<R>>(requests.length);
  const byShape = new Map<number, number[]>();
  requests.forEach((request, index) => {
    const shape = shapeOf(request);
    const indexes = byShape.get(shape);
    if (indexes) indexes.push(index);
    else byShape.set(shape, [index]);
  });
  await Promise.all(
    [...byShape].map(async ([shape, indexes]) => {
      const result = await db.query<R & { page_request: bigint }>(
        pagesStatement(orders, shape),
        requestColumns(shape).map(({ value }) => indexes.map((i) => value(requests[i] as PageRequest))),
      );
      const rowsOf = indexes.map((): R[] => []);
      for (const { page_request: ordinal, ...row } of result.rows)
        rowsOf[Number(ordinal) - 1]?.push(row as unknown as R);
      indexes.forEach((requestIndex, k) => {
        const found = rowsOf[k] as R[];
        const pageSize = (requests[requestIndex] as PageRequest).pageSize;
        const rows = found.slice(0, pageSize);
        const last = rows.at(-1);
        pages[requestIndex] = {
          rows,
          nextCursor: found.length > pageSize && last ? encodeCursor(last.created_at, last.id) : null,
        };
      });
    }),
  );
  return pages;
}

/** How many of one merchant's orders `orderPage` would page through with these filters. */
export async function orderCount(
  db: Queryable,
  orders: OrderTable,
  merchantId: bigint,
  filters: Omit<OrderListFilters, 'pageSize' | 'cursor'>,
): Promise<number> {
  checkStatusFilter(orders, filters.status);
  return countRows(db, {
    from: orders.table,
    equals: { merchant_id: merchantId, status: filters.status },
    createdFrom: filters.from,
    createdTo: filters.to,
  });
}

/** One status and currency of an order table over a period: how many orders and their amount. */
export type { StatusTotal };

/** Orders of one merchant created in [from, to] by status and currency (`payments` or `payouts`). */
export async function statusTotals(
  db: Queryable,
  table: 'payments' | 'payouts',
  merchantId: bigint,
  range: { from: number; to: number },
): Promise<StatusTotal[]> {
  checkTimeRange(range);
  const result = await db.query<{ status: string; currency: string; n: bigint; amount: bigint }>(
    `SELECT status, currency, count(*)::bigint AS n, sum(amount_minor)::bigint AS amount FROM ${table}
      WHERE merchant_id = $1 AND created_at >= $2 AND created_at <= $3
      GROUP BY status, currency ORDER BY status, currency`,
    [merchantId, new Date(range.from), new Date(range.to)],
  );
  return result.rows.map((r) => ({
    status: r.status,
    currency: r.currency,
    count: Number(r.n),
    amount: formatAmount(r.amount, scaleOf(r.currency)),
  }));
}

/**
 * Many merchants' succeeded orders created in [from, to], by merchant and currency: count and
 * amount (the back office's merchant list). One statement for all.
 */
export async function succeededVolumes(
  db: Queryable,
  table: 'payments' | 'payouts',
  merchantIds: readonly bigint[],
  range: { from: number; to: number },
): Promise<Map<bigint, { currency: string; count: number; amount: string }[]>> {
  checkTimeRange(range);
  const byMerchant = new Map<bigint, { currency: string; count: number; amount: string }[]>(
    merchantIds.map((id) => [id, []]),
  );
  if (merchantIds.length === 0) return byMerchant;
  const result = await db.query<{ merchant_id: bigint; currency: string; n: bigint; amount: bigint }>(
    `SELECT merchant_id, currency, count(*)::bigint AS n, sum(amount_minor)::bigint AS amount FROM ${table}
      WHERE merchant_id = ANY($1::bigint[]) AND status IN ('SUCCEEDED', 'REFUNDED') AND created_at >= $2 AND created_at <= $3
      GROUP BY merchant_id, currency ORDER BY merchant_id, currency`,
    [merchantIds.map(String), new Date(range.from), new Date(range.to)],
  );
  for (const r of result.rows) {
    byMerchant.get(r.merchant_id)?.push({
      currency: r.currency,
      count: Number(r.n),
      amount: formatAmount(r.amount, scaleOf(r.currency)),
    });
  }
  return byMerchant;
}

/** The channels a merchant's orders went through ('sandbox' for the built-in one): how many, the last when. */
export async function channelsUsed(
  db: Queryable,
  table: 'payments' | 'payouts',
  merchantId: bigint,
): Promise<{ channel: string; orders: number; lastAt: number }[]> {
  const result = await db.query<{ channel: string; n: bigint; last: Date }>(
    `SELECT coalesce(channel, 'sandbox') AS channel, count(*)::bigint AS n, max(created_at) AS last FROM ${table}
      WHERE merchant_id = $1 GROUP BY 1 ORDER BY 1`,
    [merchantId],
  );
  return result.rows.map((r) => ({ channel: r.channel, orders: Number(r.n), lastAt: r.last.getTime() }));
}
