import { checkTimeRange, decodeCursor, encodeCursor } from '../validation.js';
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
