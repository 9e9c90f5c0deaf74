import { randomBytes } from 'node:crypto';
import type { OrderUpdate, SqlClient } from '@paygate/merchant';

/** Something the shop sells. Each product is paid with one method in its currency. */
export interface Product {
  readonly id: string;
  readonly name: string;
  readonly currency: 'BRL' | 'MXN' | 'USD' | 'EUR';
  readonly amount: string;
  readonly method: 'PIX' | 'SPEI' | 'CARD' | 'SEPA';
}

export const PRODUCTS: readonly Product[] = [
  { id: 'coffee', name: 'Coffee beans, 1 kg', currency: 'BRL', amount: '89.90', method: 'PIX' },
  { id: 'mug', name: 'Enamel mug', currency: 'MXN', amount: '240.00', method: 'SPEI' },
  { id: 'grinder', name: 'Hand grinder', currency: 'USD', amount: '59.00', method: 'CARD' },
  { id: 'kettle', name: 'Pour-over kettle', currency: 'EUR', amount: '45.50', method: 'SEPA' },
];

/** A shop order: the shop's own record, which the platform's webhooks keep up to date. */
export interface ShopOrder {
  /** The shop's order number, sent to Paygate as merchantOrderNo. */
  readonly id: string;
  readonly productId: string;
  readonly productName: string;
  readonly currency: string;
  readonly amount: string;
  readonly method: string;
  /** NEW until the payment exists, then the payment's status. */
  readonly status: string;
  /** Paygate's order number and cashier page, once the payment exists. */
  readonly orderNo: string | null;
  readonly cashierUrl: string | null;
  readonly paidAmount: string | null;
  readonly payerName: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

interface Row {
  id: string;
  product_id: string;
  product_name: string;
  currency: string;
  amount: string;
  method: string;
  status: string;
  order_no: string | null;
  cashier_url: string | null;
  paid_amount: string | null;
  payer_name: string | null;
  created_at: string | number;
  updated_at: string | number;
}

const toOrder = (row: Row): ShopOrder => ({
  id: row.id,
  productId: row.product_id,
  productName: row.product_name,
  currency: row.currency,
  amount: row.amount,
  method: row.method,
  status: row.status,
  orderNo: row.order_no,
  cashierUrl: row.cashier_url,
  paidAmount: row.paid_amount,
  payerName: row.payer_name,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/** The shop's orders table (PostgreSQL or PGlite, through the same `query` interface the SDK's SQL store uses). */
export class ShopOrders {
  constructor(
    private readonly db: SqlClient,
    private readonly now: () => number = Date.now,
  ) {}

  async migrate(): Promise<void> {
    await this.db.query(`CREATE TABLE IF NOT EXISTS shop_orders (
      id text PRIMARY KEY,
      product_id text NOT NULL,
      product_name text NOT NULL,
      currency text NOT NULL,
      amount text NOT NULL,
      method text NOT NULL,
      status text NOT NULL,
      order_no text UNIQUE,
      cashier_url text,
      paid_amount text,
      payer_name text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    )`);
  }

  /** A NEW order for one product. */
  async create(product: Product): Promise<ShopOrder> {
    const id = `shop-${this.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    const result = await this.db.query(
      `INSERT INTO shop_orders (id, product_id, product_name, currency, amount, method, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'NEW', $7, $7) RETURNING *`,
      [id, product.id, product.name, product.currency, product.amount, product.method, this.now()],
    );
    return toOrder(result.rows[0] as Row);
  }

  /** Records the platform's payment for an order (PENDING, with its cashier page). */
  async attachPayment(id: string, payment: { orderNo: string; cashierUrl: string; status: string }): Promise<void> {
    await this.db.query(
      `UPDATE shop_orders SET order_no = $2, cashier_url = $3, status = CASE WHEN status = 'NEW' THEN $4 ELSE status END,
              updated_at = $5
        WHERE id = $1`,
      [id, payment.orderNo, payment.cashierUrl, payment.status, this.now()],
    );
  }

  /**
   * Applies a status change from the webhook inbox. Idempotent: applying the same update again
   * writes the same values (the inbox may call it again after a crash).
   */
  async applyUpdate(update: OrderUpdate): Promise<void> {
    // Payment details only for a SUCCEEDED payment: from the query API's answer when it settled a
    // conflict, else from the event.
    const event = update.event;
    const succeeded = update.status === 'SUCCEEDED';
    const paid = succeeded && event.orderType === 'PAYMENT' && event.status === 'SUCCEEDED' ? event : undefined;
    const confirmed = succeeded && update.confirmed && 'paidAmount' in update.confirmed ? update.confirmed : undefined;
    await this.db.query(
      `UPDATE shop_orders SET status = $2, paid_amount = COALESCE($3, paid_amount), payer_name = COALESCE($4, payer_name),
              updated_at = $5
        WHERE id = $1`,
      [
        update.merchantOrderNo,
        update.status,
        confirmed?.paidAmount ?? paid?.paidAmount ?? null,
        confirmed?.payer?.name ?? paid?.payer?.name ?? null,
        this.now(),
      ],
    );
  }

  async get(id: string): Promise<ShopOrder | undefined> {
    const result = await this.db.query('SELECT * FROM shop_orders WHERE id = $1', [id]);
    const row = result.rows[0] as Row | undefined;
    return row ? toOrder(row) : undefined;
  }

  async latest(limit = 20): Promise<ShopOrder[]> {
    const result = await this.db.query('SELECT * FROM shop_orders ORDER BY created_at DESC, id DESC LIMIT $1', [limit]);
    return (result.rows as Row[]).map(toOrder);
  }
}
