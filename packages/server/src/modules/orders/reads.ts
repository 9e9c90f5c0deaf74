import type { Db } from '../../db/db.js';
import {
  type OrderListFilters,
  orderCount,
  orderPages,
  type Page,
  pageRequest,
  type PageRequest,
  type StatusTotal,
  statusTotals,
  succeededVolumes,
} from '../../db/paging.js';
import { perTurnLoader } from '../../db/per-turn.js';
import { type SearchFilters, searchOrders, type SearchTable } from '../../db/order-search.js';

/** The same request twice in one batch reads its page once. */
const requestKey = (r: PageRequest) =>
  `${r.merchantId}|${r.status ?? ''}|${r.from?.getTime() ?? ''}|${r.to?.getTime() ?? ''}|${r.after ? `${r.after.createdAt.getTime()}:${r.after.id}` : ''}|${r.pageSize}`;

/**
 * The reads both order kinds answer alike over their own table (`orders`, which the owning
 * module names): a page of views, a count, and totals by status and currency.
 */
export class OrderReads<Row extends { created_at: Date; id: bigint }, View> {
  /**
   * List pages outside a transaction, batched per turn of the event loop (see perTurnLoader): the
   * list requests of one turn, of any merchants and filters, cost one statement per combination
   * of filters used (see orderPages), and identical requests one page.
   */
  private readonly pages = perTurnLoader<PageRequest, Page<Row>>(async (requests) => {
    const distinct = new Map<string, PageRequest>();
    for (const request of requests) distinct.set(requestKey(request), request);
    const keys = [...distinct.keys()];
    const pages = await orderPages<Row>(this.db, this.orders, [...distinct.values()]);
    const byKey = new Map(keys.map((key, i) => [key, pages[i] as Page<Row>]));
    return requests.map((request) => byKey.get(requestKey(request)) as Page<Row>);
  });

  constructor(
    private readonly db: Db,
    private readonly orders: SearchTable,
    private readonly view: (row: Row) => View,
  ) {}

  /** Newest first, filtered by status and creation time (Unix ms, inclusive), with a cursor. */
  async list(merchantId: bigint, filters: OrderListFilters): Promise<{ items: View[]; nextCursor: string | null }> {
    const page = await this.pages.load(pageRequest(this.orders, merchantId, filters));
    return { items: page.rows.map((row) => this.view(row)), nextCursor: page.nextCursor };
  }

  /** How many orders `list` would page through with these filters. */
  count(merchantId: bigint, filters: Omit<OrderListFilters, 'pageSize' | 'cursor'>): Promise<number> {
    return orderCount(this.db, this.orders, merchantId, filters);
  }

  /**
   * The portal's search: orders an order number, merchant order number, payer or payee name or
   * document number, or amount finds (db/order-search.ts), newest first, with how many there are.
   */
  async search(
    merchantId: bigint,
    filters: SearchFilters,
  ): Promise<{ items: View[]; nextCursor: string | null; total: number }> {
    const page = await searchOrders<Row>(this.db, this.orders, merchantId, filters);
    return { items: page.rows.map((row) => this.view(row)), nextCursor: page.nextCursor, total: page.total };
  }

  /** Many merchants' succeeded orders created in [from, to], by currency (the back office's merchant list). */
  volumes(merchantIds: readonly bigint[], range: { from: number; to: number }) {
    return succeededVolumes(this.db, this.orders.table, merchantIds, range);
  }

  /** Orders created in [from, to] by status and currency: count and amount. */
  totals(merchantId: bigint, range: { from: number; to: number }): Promise<StatusTotal[]> {
    return statusTotals(this.db, this.orders.table, merchantId, range);
  }
}
