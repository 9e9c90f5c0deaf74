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

/** The statements a batch of lookups of one order table takes, by the keys it carries. */
export interface LookupStatements {
  /** Order numbers only ($1). */
  readonly byOrderNo: PreparedStatement;
  /** (merchant, merchantOrderNo) pairs only, as two arrays ($1, $2). */
  readonly byMerchantOrderNo: PreparedStatement;
  /** Both ($1; $2 and $3). */
  readonly both: PreparedStatement;
}

/**
 * Orders of `table` by order number and by merchant and merchantOrderNo, many at once, each key
 * kind given as arrays to its unique index: `order_no = ANY(…)`, and the (merchant_id,
 * merchant_order_no) pairs as a plain join from `unnest`, one index probe per pair (the caller
 * sends each pair once).
 *
 * Never served by a plan of the planner's free choice kept for good (see
 * PreparedStatement.customPlan): the embedded database plans them for their parameters on every
 * call, so the plan is much of the cost there (the union of both plans in about 110 µs, the pairs
 * alone in about 55 µs, order numbers alone in about 17 µs, against 10–35 µs to execute; EXPLAIN's
 * planning time on PostgreSQL 15), and a batch takes only the part it needs. PostgreSQL's reads
 * connection keeps an index-only plan of each and renews it. The pairs were a semi-join
 * (`IN (SELECT * FROM unnest(…))`) before: its de-duplicating HashAggregate made the plan take
 * 0.24–0.28 ms instead of 0.09–0.15 and the execution 0.09 instead of 0.03–0.05 (100,000 payments,
 * five pairs, on a slower machine). (The pairs as `merchant_id = ANY(…) AND merchant_order_no = ANY(…)` plan in
 * 20 µs, but on a large table that was never analyzed the embedded database read payments by
 * merchantOrderNo at 40 % of the ceiling with it, 56 % with the join.)
 */
export function lookupStatements(table: 'payments' | 'payouts', columns: string): LookupStatements {
  const byOrderNo = `SELECT ${columns} FROM ${table} WHERE order_no = ANY($1::text[])`;
  const byMerchantOrderNo = (first: number) =>
    `SELECT ${columns}
       FROM unnest($${first}::bigint[], $${first + 1}::text[]) AS key (key_merchant_id, key_merchant_order_no)
       JOIN ${table} ON merchant_id = key_merchant_id AND merchant_order_no = key_merchant_order_no`;
  return {
    byOrderNo: prepared(`${table}_by_order_nos`, byOrderNo, { customPlan: true }),
    byMerchantOrderNo: prepared(`${table}_by_merchant_order_nos`, byMerchantOrderNo(1), { customPlan: true }),
    both: prepared(`${table}_lookup_many`, `${byOrderNo}\n     UNION ALL\n     ${byMerchantOrderNo(2)}`, {
      customPlan: true,
    }),
  };
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
  private readonly statements: LookupStatements;
  private readonly loader: DataLoader<Lookup, Row | undefined>;

  /** `table` and `columns` come from the module that owns the table (its row's select list). */
  constructor(
    private readonly db: Db,
    table: 'payments' | 'payouts',
    columns: string,
  ) {
    this.statements = lookupStatements(table, columns);
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
    const pairs = new Set<string>();
    for (const { merchantId, ref } of lookups) {
      if (ref.orderNo !== undefined) {
        orderNos.push(ref.orderNo);
        continue;
      }
      // The join answers a pair once for each time it is sent.
      const pair = merchantKey(merchantId, ref.merchantOrderNo);
      if (pairs.has(pair)) continue;
      pairs.add(pair);
      merchantIds.push(merchantId.toString());
      merchantOrderNos.push(ref.merchantOrderNo);
    }
    const { byOrderNo: byNumber, byMerchantOrderNo: byPair, both } = this.statements;
    const { rows } =
      merchantIds.length === 0
        ? await this.db.query<Row>(byNumber, [orderNos])
        : orderNos.length === 0
          ? await this.db.query<Row>(byPair, [merchantIds, merchantOrderNos])
          : await this.db.query<Row>(both, [orderNos, merchantIds, merchantOrderNos]);
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
