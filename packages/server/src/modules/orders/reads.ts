import type { Queryable } from '../../db/db.js';
import {
  type OrderListFilters,
  orderCount,
  orderPage,
  type OrderTable,
  type StatusTotal,
  statusTotals,
} from '../../db/paging.js';

/**
 * The reads both order kinds answer alike over their own table (`orders`, which the owning
 * module names): a page of views, a count, and totals by status and currency.
 */
export class OrderReads<Row extends { created_at: Date; id: bigint }, View> {
  constructor(
    private readonly db: Queryable,
    private readonly orders: OrderTable,
    private readonly view: (row: Row) => View,
  ) {}

  /** Newest first, filtered by status and creation time (Unix ms, inclusive), with a cursor. */
  async list(merchantId: bigint, filters: OrderListFilters): Promise<{ items: View[]; nextCursor: string | null }> {
    const page = await orderPage<Row>(this.db, this.orders, merchantId, filters);
    return { items: page.rows.map((row) => this.view(row)), nextCursor: page.nextCursor };
  }

  /** How many orders `list` would page through with these filters. */
  count(merchantId: bigint, filters: Omit<OrderListFilters, 'pageSize' | 'cursor'>): Promise<number> {
    return orderCount(this.db, this.orders, merchantId, filters);
  }

  /** Orders created in [from, to] by status and currency: count and amount. */
  totals(merchantId: bigint, range: { from: number; to: number }): Promise<StatusTotal[]> {
    return statusTotals(this.db, this.orders.table, merchantId, range);
  }
}
