import { PaygateConfigError } from '../errors.js';
import type { ClaimResult, EventClaim, InboxStore, OrderKey, OrderStatus, TrackedOrder } from './store.js';

/**
 * The one thing {@link SqlInboxStore} needs from a database: run one statement with `$1…`
 * parameters and return its rows. A `pg` `Pool` or `Client` and a PGlite instance fit as they are.
 */
export interface SqlClient {
  /** Runs one statement with `$1…` parameters; resolves its rows (with `RETURNING`, the affected ones). */
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Options of {@link SqlInboxStore}. */
export interface SqlInboxStoreOptions {
  /** Prefix of the two table names (default `paygate_inbox_`): `<prefix>events`, `<prefix>orders`. */
  readonly tablePrefix?: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,40}$/;

/**
 * An {@link InboxStore} in PostgreSQL (or PGlite): two tables, every operation one atomic
 * statement (or a statement and a read), so several processes can share it. Call
 * {@link SqlInboxStore.migrate} once at start-up to create the tables.
 */
export class SqlInboxStore implements InboxStore {
  readonly #db: SqlClient;
  readonly #events: string;
  readonly #orders: string;

  /** A store over `db`; call {@link SqlInboxStore.migrate} before first use. */
  constructor(db: SqlClient, options: SqlInboxStoreOptions = {}) {
    const prefix = options.tablePrefix ?? 'paygate_inbox_';
    if (!IDENTIFIER.test(`${prefix}events`)) {
      throw new PaygateConfigError('tablePrefix: lowercase letters, digits and underscores, starting with a letter');
    }
    this.#db = db;
    this.#events = `${prefix}events`;
    this.#orders = `${prefix}orders`;
  }

  /** Creates the tables if they do not exist. */
  async migrate(): Promise<void> {
    await this.#db.query(
      `CREATE TABLE IF NOT EXISTS ${this.#events} (
         event_id text PRIMARY KEY,
         order_type text NOT NULL,
         order_no text NOT NULL,
         state text NOT NULL CHECK (state IN ('processing', 'done')),
         lease_until bigint,
         claim_token text,
         claims integer NOT NULL DEFAULT 1,
         received_at bigint NOT NULL,
         completed_at bigint
       )`,
    );
    // Tables made by an earlier version of this store lack the claim token.
    await this.#db.query(`ALTER TABLE ${this.#events} ADD COLUMN IF NOT EXISTS claim_token text`);
    await this.#db.query(
      `CREATE TABLE IF NOT EXISTS ${this.#orders} (
         order_type text NOT NULL,
         order_no text NOT NULL,
         merchant_order_no text NOT NULL,
         status text NOT NULL,
         updated_at bigint NOT NULL,
         PRIMARY KEY (order_type, order_no)
       )`,
    );
  }

  async claimEvent(eventId: string, claim: EventClaim): Promise<ClaimResult> {
    // One statement decides: a new event is inserted; an unfinished claim whose lease ran out is
    // taken over; anything else is left alone and returns no row.
    const claimed = await this.#db.query(
      `INSERT INTO ${this.#events} (event_id, order_type, order_no, state, lease_until, claim_token, received_at)
       VALUES ($1, $2, $3, 'processing', $4, $6, $5)
       ON CONFLICT (event_id) DO UPDATE
         SET lease_until = EXCLUDED.lease_until, claim_token = EXCLUDED.claim_token, claims = ${this.#events}.claims + 1
         WHERE ${this.#events}.state = 'processing' AND ${this.#events}.lease_until < $5
       RETURNING event_id`,
      [eventId, claim.order.orderType, claim.order.orderNo, claim.nowMs + claim.leaseMs, claim.nowMs, claim.token],
    );
    if (claimed.rows.length > 0) return 'claimed';
    const existing = await this.#db.query(`SELECT state FROM ${this.#events} WHERE event_id = $1`, [eventId]);
    return (existing.rows[0] as { state?: string } | undefined)?.state === 'done' ? 'done' : 'busy';
  }

  async completeEvent(eventId: string, nowMs: number): Promise<void> {
    await this.#db.query(
      `UPDATE ${this.#events} SET state = 'done', lease_until = NULL, completed_at = $2 WHERE event_id = $1`,
      [eventId, nowMs],
    );
  }

  async releaseEvent(eventId: string, token: string): Promise<void> {
    await this.#db.query(
      `DELETE FROM ${this.#events} WHERE event_id = $1 AND state = 'processing' AND claim_token = $2`,
      [eventId, token],
    );
  }

  async orderStatus(order: OrderKey): Promise<OrderStatus | undefined> {
    const result = await this.#db.query(`SELECT status FROM ${this.#orders} WHERE order_type = $1 AND order_no = $2`, [
      order.orderType,
      order.orderNo,
    ]);
    return (result.rows[0] as { status?: OrderStatus } | undefined)?.status;
  }

  async setOrderStatus(
    order: TrackedOrder,
    expected: OrderStatus | undefined,
    next: OrderStatus,
    nowMs: number,
  ): Promise<boolean> {
    const result =
      expected === undefined
        ? await this.#db.query(
            `INSERT INTO ${this.#orders} (order_type, order_no, merchant_order_no, status, updated_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (order_type, order_no) DO NOTHING RETURNING order_no`,
            [order.orderType, order.orderNo, order.merchantOrderNo, next, nowMs],
          )
        : await this.#db.query(
            `UPDATE ${this.#orders} SET status = $4, updated_at = $5
              WHERE order_type = $1 AND order_no = $2 AND status = $3 RETURNING order_no`,
            [order.orderType, order.orderNo, expected, next, nowMs],
          );
    return result.rows.length > 0;
  }
}
