import type { StatusTotal } from '@paygate/wire';
import { validationFailed } from '../errors.js';
import { checkTimeRange, decodeCursor, encodeCursor } from '../validation.js';
import { scaleOf } from '../catalog.js';
import { formatAmount } from '../money.js';
import type { Queryable } from './db.js';

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
    `${query.select} WHERE ${where.join(' AND ')}
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

/** A page of one merchant's orders, newest first, filtered by status and creation time (see keysetPage). */
export async function orderPage<R extends { created_at: Date; id: bigint }>(
  db: Queryable,
  orders: OrderTable,
  merchantId: bigint,
  filters: OrderListFilters,
): Promise<Page<R>> {
  checkStatusFilter(orders, filters.status);
  return keysetPage<R>(db, {
    select: `SELECT ${orders.columns} FROM ${orders.table}`,
    equals: { merchant_id: merchantId, status: filters.status },
    from: filters.from,
    to: filters.to,
    cursor: filters.cursor,
    pageSize: filters.pageSize,
  });
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
