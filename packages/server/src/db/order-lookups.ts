import type DataLoader from 'dataloader';
import { type Db, prepared, type PreparedStatement } from './db.js';
import { perTurnLoader } from './per-turn.js';
import type { OrderRef } from '../validation.js';

/** The columns every order row has that a lookup matches on. */
interface Keyed {
  readonly order_no: string;
  readonly merchant_id: bigint;
  readonly merchant_order_no: string;
}

/** One merchant's reference to one of its orders: by the platform's number or by its own. */
interface Lookup {
  readonly merchantId: bigint;
  readonly ref: OrderRef;
}

const merchantKey = (merchantId: bigint, merchantOrderNo: string) => `${merchantId}\u0000${merchantOrderNo}`;

/**
 * Orders of `table` by order number ($1) and by merchant and merchantOrderNo ($2, $3), many at
 * once: two index probes in one statement, the order-number index and the unique
 * (merchant_id, merchant_order_no) index, each given its keys as arrays.
 */
export function lookupStatement(table: 'payments' | 'payouts', columns: string): PreparedStatement {
  return prepared(
    `${table}_lookup_many`,
    `SELECT ${columns} FROM ${table} WHERE order_no = ANY($1::text[])
     UNION ALL
     SELECT ${columns} FROM ${table}
      WHERE (merchant_id, merchant_order_no) IN (SELECT * FROM unnest($2::bigint[], $3::text[]))`,
    { customPlan: true },
  );
}

/**
 * Reads of one order table by `orderNo` or by `(merchant, merchantOrderNo)` outside a
 * transaction, batched per turn of the event loop (see perTurnLoader): the lookups of every
 * request that arrives in one turn, by either key and for any merchant, are answered by one
 * statement. Under load N signed reads cost one round trip, one parse-free execution and one
 * index probe per key instead of N statements.
 *
 * The order must be the asking merchant's: by `orderNo` a row of another merchant answers
 * `undefined`, exactly as if there were none. No cache: each caller reads committed data no
 * older than its own call.
 */
export class OrderLookups<Row extends Keyed> {
  private readonly statement: PreparedStatement;
  private readonly loader: DataLoader<Lookup, Row | undefined>;

  /** `table` and `columns` come from the module that owns the table (its row's select list). */
  constructor(
    private readonly db: Db,
    table: 'payments' | 'payouts',
    columns: string,
  ) {
    this.statement = lookupStatement(table, columns);
    this.loader = perTurnLoader<Lookup, Row | undefined>((lookups) => this.batch(lookups));
  }

  /** The merchant's order `ref` names, or undefined when it has none. */
  find(merchantId: bigint, ref: OrderRef): Promise<Row | undefined> {
    return this.loader.load({ merchantId, ref });
  }

  private async batch(lookups: readonly Lookup[]): Promise<(Row | undefined)[]> {
    const orderNos: string[] = [];
    const merchantIds: string[] = [];
    const merchantOrderNos: string[] = [];
    for (const { merchantId, ref } of lookups) {
      if (ref.orderNo !== undefined) orderNos.push(ref.orderNo);
      else {
        merchantIds.push(merchantId.toString());
        merchantOrderNos.push(ref.merchantOrderNo);
      }
    }
    const { rows } = await this.db.query<Row>(this.statement, [orderNos, merchantIds, merchantOrderNos]);
    const byOrderNo = new Map<string, Row>();
    const byMerchantKey = new Map<string, Row>();
    for (const row of rows) {
      byOrderNo.set(row.order_no, row);
      byMerchantKey.set(merchantKey(row.merchant_id, row.merchant_order_no), row);
    }
    return lookups.map(({ merchantId, ref }) => {
      if (ref.orderNo === undefined) return byMerchantKey.get(merchantKey(merchantId, ref.merchantOrderNo));
      const row = byOrderNo.get(ref.orderNo);
      return row && row.merchant_id === merchantId ? row : undefined;
    });
  }
}
