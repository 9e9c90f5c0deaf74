import {
  type Currency,
  createPaymentRequest,
  PAYMENT_STATUSES,
  type Payment,
  type PaymentMethodCode,
  type PaymentStatus,
  type Payer as WirePayer,
  SimulatePaymentRequest,
  updatePaymentRequest,
} from '@paygate/wire';
import type { z } from 'zod';
import type { Config } from '../../config.js';
import { type Db, type InTransaction, isUnavailable, prepared, type Queryable } from '../../db/db.js';
import { NonceRefused, type RequestNonce } from '../../db/request-nonce.js';
import { freshNoncesCte } from '../auth/service.js';
import { perTurnLoader } from '../../db/per-turn.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { channelsUsed, type OrderListFilters, type StatusTotal } from '../../db/paging.js';
import { type SearchAllFilters, searchAllOrders, type SearchFilters, type SearchTable } from '../../db/order-search.js';
import {
  type ClaimedPoll,
  claimDuePolls,
  openByChannelTradeNo,
  type PollClaim,
  type ServedOrder,
  servedBy,
  pollBacklog,
} from '../../db/order-polls.js';
import { duplicateOrder, type FieldError, invalidState, orderNotFound, validationFailed } from '../../errors.js';
import { channelUnavailable } from '../channels/errors.js';
import type { BookDay, BookRow } from '../orders/book.js';
import { notTheChannel } from '../orders/errors.js';
import { OrderLookups } from '../../db/order-lookups.js';
import { OrderReads } from '../orders/reads.js';
import { withQuery } from '../../http/url.js';
import { formatAmount, parseAmount } from '../../money.js';
import { type OrderRef, parseInput, returnUrl, webhookUrl } from '../../validation.js';
import { currencyInfo, scaleOf } from '../../catalog.js';
import { ChannelUnavailable, type Connector, type PayerAction } from '../channels/connector.js';
import { type ChannelRegistry, storedChannel } from '../channels/registry.js';
import { type NewEvent, writeEvents } from '../webhooks/outbox.js';
import { PAYMENT_STATES } from '../orders/states.js';
import {
  applyMove,
  type Decide,
  type Move,
  orderEvent,
  recordTransitions,
  stay,
  transition,
  type TransitionCause,
} from '../orders/transition.js';

export { PAYMENT_STATUSES, type PaymentStatus };
export const isFinalPayment = (status: PaymentStatus) => PAYMENT_STATES.final.has(status);

/** A payment order row. */
export interface PaymentRow {
  id: bigint;
  order_no: string;
  merchant_id: bigint;
  merchant_order_no: string;
  currency: Currency;
  amount_minor: bigint;
  method: PaymentMethodCode;
  webhook_url: string;
  attach: string | null;
  status: PaymentStatus;
  paid_amount_minor: bigint | null;
  channel_trade_no: string | null;
  payer_name: string | null;
  payer_document: string | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
  finalized_at: Date | null;
  /** Why a FAILED payment failed, when the channel said. */
  failure_reason: string | null;
  /** The channel serving the payment; NULL for the built-in sandbox channel. */
  channel: string | null;
  /** What the channel told the payer to do (JSON PayerAction); NULL for the sandbox channel. */
  payer_action: string | null;
  /** Where the payer is sent after paying or failing (normalized); NULL when the merchant gave none. */
  return_url: string | null;
}

/** The payer as the channel reported it; members and the object itself are omitted when unknown. */
export type Payer = WirePayer;

/** A payment order as the API returns it (the wire schema `Payment`). */
export type PaymentView = Payment;

export function payerOf(row: Pick<PaymentRow, 'payer_name' | 'payer_document'>): Payer | undefined {
  const payer: Payer = {};
  if (row.payer_name !== null) payer.name = row.payer_name;
  if (row.payer_document !== null) payer.documentNumber = row.payer_document;
  return Object.keys(payer).length > 0 ? payer : undefined;
}

/** Hooks other modules attach to payment state changes, run inside the same transaction. */
export interface PaymentHooks {
  /** The payment just became SUCCEEDED: credit the merchant (the ledger). */
  readonly onSucceeded?: (tx: Queryable, payment: PaymentRow) => Promise<void>;
  /** Many payments just became SUCCEEDED together (a bank file's credits): as `onSucceeded` for each. */
  readonly onSucceededMany?: (tx: Queryable, payments: readonly PaymentRow[], at: Date) => Promise<void>;
}

export type CreatePaymentInput = z.output<ReturnType<typeof createPaymentRequest>>;

/** What the sandbox channel (or the cashier page) reports about a payment. */
export type ChannelReport = z.output<typeof SimulatePaymentRequest>;

/** Every column of PaymentRow, listed so that prepared statements keep their shape. */
const PAYMENT_COLUMNS = `id, order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, attach,
  status, paid_amount_minor, channel_trade_no, payer_name, payer_document, expires_at, created_at, updated_at, finalized_at,
  failure_reason, channel, payer_action, return_url`;

/** A new payment's values, one per create request (see Payments.inserts). */
interface NewPayment {
  readonly datePrefix: string;
  readonly merchantId: bigint;
  readonly merchantOrderNo: string;
  readonly currency: string;
  readonly amountMinor: bigint;
  readonly method: string;
  readonly webhookUrl: string;
  readonly attach: string | null;
  readonly expiresAt: Date;
  readonly createdAt: Date;
  readonly channel: string | null;
  readonly returnUrl: string | null;
  /** The signed request's nonce when this insert records it (see INSERT_PAYMENTS_WITH_NONCES). */
  readonly nonce?: RequestNonce | undefined;
}

/**
 * The hot statements of creating and reading payments, prepared once per connection.
 *
 * Payments are inserted many at once, one row per create request, as columns of arrays (text, so
 * that both drivers bind them alike): a row whose merchantOrderNo the merchant already used is
 * skipped by the unique index and missing from RETURNING. Duplicates within one statement are
 * skipped the same way; the first of them is inserted.
 */
const INSERT_PAYMENTS = prepared(
  'payments_insert_many',
  `INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, attach,
                         status, expires_at, created_at, updated_at, channel, return_url)
   SELECT prefix || lpad(nextval('order_no_seq')::text, 10, '0'), merchant_id, merchant_order_no, currency,
          amount_minor, method, webhook_url, attach, 'PENDING', expires_at, created_at, created_at, channel, return_url
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                 $9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[])
          AS new (prefix, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, attach,
                  expires_at, created_at, channel, return_url)
   ON CONFLICT (merchant_id, merchant_order_no) DO NOTHING
   RETURNING ${PAYMENT_COLUMNS}`,
);

/** The columns of RETURNING, one by one. */
const PAYMENT_COLUMN_LIST = PAYMENT_COLUMNS.split(',').map((column) => column.trim());

/**
 * INSERT_PAYMENTS with the requests' nonces, in one statement, one implicit transaction and one
 * commit: the nonces are inserted first ($13–$15, each request's first use only), and a payment
 * row only for a request whose nonce that insert returned ($16: the row's nonce, NULL for a create
 * that recorded its nonce before). A replayed create so never reaches its business row; the
 * nonce of a create refused for its business (a merchantOrderNo taken) commits all the same.
 * Answered with the payment rows (fresh_nonce NULL) and then one row per new nonce (its merchant
 * and nonce, every payment column NULL).
 */
const INSERT_PAYMENTS_WITH_NONCES = prepared(
  'payments_insert_many_with_nonces',
  `WITH ${freshNoncesCte(13)},
   made AS (
     INSERT INTO payments (order_no, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, attach,
                           status, expires_at, created_at, updated_at, channel, return_url)
     SELECT prefix || lpad(nextval('order_no_seq')::text, 10, '0'), new.merchant_id, merchant_order_no, currency,
            amount_minor, method, webhook_url, attach, 'PENDING', expires_at, created_at, created_at, channel, return_url
       FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                   $9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[], $16::text[])
            AS new (prefix, merchant_id, merchant_order_no, currency, amount_minor, method, webhook_url, attach,
                    expires_at, created_at, channel, return_url, nonce)
      WHERE new.nonce IS NULL
         OR EXISTS (SELECT FROM fresh WHERE fresh.merchant_id = new.merchant_id AND fresh.nonce = new.nonce)
     ON CONFLICT (merchant_id, merchant_order_no) DO NOTHING
     RETURNING ${PAYMENT_COLUMNS})
   SELECT ${PAYMENT_COLUMNS}, NULL::text AS fresh_nonce FROM made
   UNION ALL
   SELECT ${PAYMENT_COLUMN_LIST.map((column) => (column === 'merchant_id' ? column : 'NULL')).join(', ')}, nonce
     FROM fresh`,
);

/** A payment row of INSERT_PAYMENTS_WITH_NONCES, or (order_no NULL) a nonce it recorded. */
type InsertedOrNonce = PaymentRow & { fresh_nonce: string | null };

/** What one create of a batch is answered: its row, none (the merchantOrderNo was taken), or an error. */
type InsertAnswer = PaymentRow | undefined | Error;

/** The arrays INSERT_PAYMENTS binds for `payments`, column by column. */
function insertParams(payments: readonly NewPayment[]): unknown[] {
  const column = <T>(value: (payment: NewPayment) => T) => payments.map(value);
  return [
    column((p) => p.datePrefix),
    column((p) => p.merchantId.toString()),
    column((p) => p.merchantOrderNo),
    column((p) => p.currency),
    column((p) => p.amountMinor.toString()),
    column((p) => p.method),
    column((p) => p.webhookUrl),
    column((p) => p.attach),
    column((p) => p.expiresAt.toISOString()),
    column((p) => p.createdAt.toISOString()),
    column((p) => p.channel),
    column((p) => p.returnUrl),
  ];
}

const orderKey = (merchantId: bigint, merchantOrderNo: string) => `${merchantId}:${merchantOrderNo}`;

/** The order a batch's rows are inserted in: by merchant, then merchantOrderNo (code units). */
function byOrderKey(a: NewPayment, b: NewPayment): number {
  if (a.merchantId !== b.merchantId) return a.merchantId < b.merchantId ? -1 : 1;
  return a.merchantOrderNo < b.merchantOrderNo ? -1 : a.merchantOrderNo > b.merchantOrderNo ? 1 : 0;
}

/** The inserted rows of a batch, each given to the first create that asked for its merchantOrderNo. */
function matchInserted(batch: readonly NewPayment[], rows: readonly PaymentRow[]): (PaymentRow | undefined)[] {
  const inserted = new Map(rows.map((row) => [orderKey(row.merchant_id, row.merchant_order_no), row]));
  return batch.map((payment) => {
    const key = orderKey(payment.merchantId, payment.merchantOrderNo);
    const row = inserted.get(key);
    inserted.delete(key);
    return row;
  });
}

const findPayment = (column: 'order_no' | 'merchant_order_no') =>
  prepared(
    `payments_by_${column}_for_update`,
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE merchant_id = $1 AND ${column} = $2 FOR UPDATE`,
  );
/** A payment locked for a change, inside a transaction. */
const LOCK_PAYMENT = {
  order_no: findPayment('order_no'),
  merchant_order_no: findPayment('merchant_order_no'),
} as const;

/** Payments as their list and count read them. */
const PAYMENT_ORDERS: SearchTable = {
  table: 'payments',
  columns: PAYMENT_COLUMNS,
  statuses: PAYMENT_STATUSES,
  nameColumn: 'payer_name',
  documentColumn: 'payer_document',
};

/** Payment orders: create, read, list, cancel, update, and the channel's state changes. */
export class Payments {
  private readonly createSchema;
  private readonly updateSchema;
  private readonly reportSchema = SimulatePaymentRequest;
  private readonly reads: OrderReads<PaymentRow, PaymentView>;
  /** Reads by either reference outside a transaction, batched per turn of the event loop. */
  private readonly lookups: OrderLookups<PaymentRow>;

  /**
   * Inserts the creates that arrive in one turn of the event loop with one statement, one
   * transaction and one commit (under load most of what a create costs the database), answering
   * each with its row, or undefined when its merchantOrderNo was taken. The rows go in sorted by
   * merchant and merchantOrderNo, so that two batches racing for the same numbers take their
   * index locks in the same order and cannot deadlock. If a batch fails for anything but an
   * unavailable database, each of its creates is tried alone: one create cannot fail another.
   */
  private readonly inserts = perTurnLoader<NewPayment, PaymentRow | undefined>(async (payments) => {
    try {
      return await this.insertBatch(payments);
    } catch (error) {
      if (payments.length === 1 || isUnavailable(error)) throw error;
      return Promise.all(
        payments.map((payment) =>
          this.insertBatch([payment]).then(
            ([answer]) => answer,
            (failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))),
          ),
        ),
      );
    }
  });

  /**
   * One statement for a batch of creates; with the nonces of those that carry one still to record,
   * INSERT_PAYMENTS_WITH_NONCES. Sent sorted, matched back by key in the callers' order: the sort
   * is stable, so the first create of a merchantOrderNo is first in both orders and is the one given
   * its row. Within a batch, a second use of a nonce is a replay and is not sent.
   */
  private async insertBatch(batch: readonly NewPayment[]): Promise<InsertAnswer[]> {
    const sorted = [...batch].sort(byOrderKey);
    const recording = batch.filter((payment) => payment.nonce?.pending === true);
    if (recording.length === 0) {
      return matchInserted(batch, (await this.db.query<PaymentRow>(INSERT_PAYMENTS, insertParams(sorted))).rows);
    }
    const nonceKey = (nonce: RequestNonce) => `${nonce.merchantId}:${nonce.nonce}`;
    const replays = new Set<NewPayment>();
    const first = new Map<string, RequestNonce>();
    for (const payment of recording) {
      const nonce = payment.nonce as RequestNonce;
      if (first.has(nonceKey(nonce))) replays.add(payment);
      else first.set(nonceKey(nonce), nonce);
    }
    const sent = sorted.filter((payment) => !replays.has(payment));
    const nonces = [...first.values()].sort((a, b) => (nonceKey(a) < nonceKey(b) ? -1 : 1));
    const result = await this.db.query<InsertedOrNonce>(INSERT_PAYMENTS_WITH_NONCES, [
      ...insertParams(sent),
      nonces.map((nonce) => nonce.merchantId.toString()),
      nonces.map((nonce) => nonce.nonce),
      nonces.map((nonce) => nonce.expiresAt.toISOString()),
      sent.map((payment) => (payment.nonce?.pending ? payment.nonce.nonce : null)),
    ]);
    const fresh = new Set(
      result.rows.filter((row) => row.order_no === null).map((row) => `${row.merchant_id}:${row.fresh_nonce}`),
    );
    const rows = matchInserted(
      batch,
      result.rows.filter((row) => row.order_no !== null),
    );
    return batch.map((payment, i) => {
      const nonce = payment.nonce?.pending ? payment.nonce : undefined;
      if (!nonce) return rows[i];
      const won = !replays.has(payment) && fresh.has(nonceKey(nonce));
      nonce.decided(won);
      return won ? rows[i] : new NonceRefused();
    });
  }

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'environment' | 'webhookAllowPrivate' | 'publicUrl' | 'paymentExpiryMs'>,
    private readonly hooks: PaymentHooks = {},
    private readonly now: () => number = Date.now,
    /** Routing to channels; without it every payment is the built-in sandbox channel's. */
    private readonly channels?: Pick<ChannelRegistry, 'routePayment' | 'get'>,
  ) {
    this.createSchema = createPaymentRequest(webhookUrl(config), returnUrl(config));
    this.updateSchema = updatePaymentRequest(webhookUrl(config));
    this.reads = new OrderReads(db, PAYMENT_ORDERS, (row: PaymentRow) => this.view(row));
    this.lookups = new OrderLookups(db, 'payments', PAYMENT_COLUMNS);
  }

  view(row: PaymentRow): PaymentView {
    const scale = scaleOf(row.currency);
    const payerAction: PayerAction =
      row.payer_action !== null
        ? (JSON.parse(row.payer_action) as PayerAction)
        : { kind: 'redirect', url: `${this.config.publicUrl}/cashier/${row.order_no}` };
    const view: PaymentView = {
      orderNo: row.order_no,
      merchantOrderNo: row.merchant_order_no,
      status: row.status,
      currency: row.currency,
      amount: formatAmount(row.amount_minor, scale),
      paymentMethod: { code: row.method },
      webhookUrl: row.webhook_url,
      cashierUrl: payerAction.url,
      payerAction,
      createdAt: row.created_at.getTime(),
      updatedAt: row.updated_at.getTime(),
      expiresAt: row.expires_at.getTime(),
    };
    if (row.attach !== null) view.attach = row.attach;
    if (row.return_url !== null) view.returnUrl = row.return_url;
    if (row.paid_amount_minor !== null) view.paidAmount = formatAmount(row.paid_amount_minor, scale);
    if (row.channel_trade_no !== null) view.channelTradeNo = row.channel_trade_no;
    const payer = payerOf(row);
    if (payer) view.payer = payer;
    if (row.finalized_at !== null) view.finalizedAt = row.finalized_at.getTime();
    const transfer = bankTransferOf(payerAction);
    if (transfer) view.bankTransfer = transfer;
    return view;
  }

  /** Validates a create request's fields: shape, then currency, method and amount together. */
  private parseCreate(input: unknown): CreatePaymentInput & { amountMinor: bigint } {
    const parsed = parseInput(this.createSchema, input);
    const errors: FieldError[] = [];
    const currency = currencyInfo(parsed.currency);
    if (!currency) errors.push({ field: 'currency', message: 'not a supported currency' });
    else if (!currency.methods.includes(parsed.paymentMethod.code)) {
      errors.push({ field: 'paymentMethod.code', message: `not a payment method for ${parsed.currency}` });
    }
    const amountMinor = currency ? parseAmount(parsed.amount, currency.scale) : undefined;
    if (currency && amountMinor === undefined) {
      errors.push({
        field: 'amount',
        message: `a positive decimal string with at most ${currency.scale} fraction digits, no sign or exponent`,
      });
    }
    if (errors.length > 0) throw validationFailed(errors);
    return { ...parsed, amountMinor: amountMinor as bigint };
  }

  /** The channel serving a valid create's currency and method; none is VALIDATION_FAILED naming the field. */
  private route(currency: string, method: string): Connector | undefined {
    if (!this.channels) return undefined;
    const connector = this.channels.routePayment(currency, method);
    if (connector) return connector;
    const served = currencyInfo(currency)?.methods.some((code) => this.channels?.routePayment(currency, code));
    throw validationFailed([
      served
        ? { field: 'paymentMethod.code', message: `no channel serves ${method} payments in ${currency}` }
        : { field: 'currency', message: `no channel serves payments in ${currency}` },
    ]);
  }

  /**
   * Registers a channel-routed payment at its channel and keeps what the payer must do. When the
   * channel cannot be reached, a payment created by this request is removed again (nothing is
   * half made) and the create answers CHANNEL_UNAVAILABLE; the merchant retries it.
   */
  private async register(row: PaymentRow, connector: Connector, created: boolean): Promise<PaymentRow> {
    let answer: Awaited<ReturnType<Connector['createPayment']>>;
    try {
      answer = await connector.createPayment({
        orderNo: row.order_no,
        merchantRef: `${row.merchant_id}/${row.merchant_order_no}`,
        currency: row.currency,
        amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
        method: row.method,
        expiresAt: row.expires_at.getTime(),
        // The channel's page sends the payer back with the order's numbers; its status the shop
        // reads with the query API (the payer may return before the channel's notification).
        ...(row.return_url !== null
          ? {
              returnUrl: withQuery(row.return_url, {
                orderNo: row.order_no,
                merchantOrderNo: row.merchant_order_no,
              }),
            }
          : {}),
      });
    } catch (error) {
      if (!(error instanceof ChannelUnavailable)) throw error;
      if (created) await this.db.query(`DELETE FROM payments WHERE id = $1 AND status = 'PENDING'`, [row.id]);
      throw channelUnavailable(connector.name);
    }
    const result = await this.db.query<PaymentRow>(
      `UPDATE payments SET payer_action = $2, channel_trade_no = COALESCE(channel_trade_no, $3)
        WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
      [row.id, JSON.stringify(answer.payerAction), answer.channelTradeNo ?? null],
    );
    return result.rows[0] ?? row;
  }

  /**
   * Creates a payment order, deduplicated by merchantOrderNo alone: the same fields again return
   * the existing order (`created: false`), different fields are DUPLICATE_ORDER. Race-free: the
   * unique index decides, not a prior read.
   */
  async create(
    merchantId: bigint,
    input: unknown,
    /** The signed request's nonce, recorded by the create's own statement (see RequestNonce). */
    nonce?: RequestNonce,
  ): Promise<{ payment: PaymentView; created: boolean }> {
    const order = this.parseCreate(input);
    const connector = this.route(order.currency, order.paymentMethod.code);
    const channel = connector ? storedChannel(connector) : null;
    const now = new Date(this.now());
    const datePrefix = `P${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
    const row = await this.inserts.load({
      datePrefix,
      merchantId,
      merchantOrderNo: order.merchantOrderNo,
      currency: order.currency,
      amountMinor: order.amountMinor,
      method: order.paymentMethod.code,
      webhookUrl: order.webhookUrl,
      attach: order.attach ?? null,
      expiresAt: new Date(now.getTime() + this.config.paymentExpiryMs),
      createdAt: now,
      channel,
      returnUrl: order.returnUrl ?? null,
      nonce,
    });
    if (row) {
      const registered = connector && channel !== null ? await this.register(row, connector, true) : row;
      return { payment: this.view(registered), created: true };
    }

    const existing = await this.find(merchantId, { merchantOrderNo: order.merchantOrderNo });
    const same =
      existing.currency === order.currency &&
      existing.amount_minor === order.amountMinor &&
      existing.method === order.paymentMethod.code &&
      existing.webhook_url === order.webhookUrl &&
      existing.attach === (order.attach ?? null) &&
      existing.return_url === (order.returnUrl ?? null);
    if (!same) throw duplicateOrder();
    // A retry of a create whose registration at the channel did not finish registers it now (idempotent there).
    if (connector && existing.channel !== null && existing.payer_action === null && existing.status === 'PENDING') {
      return { payment: this.view(await this.register(existing, connector, false)), created: false };
    }
    return { payment: this.view(existing), created: false };
  }

  /** The merchant's payment `ref` names, read outside a transaction (batched per turn). */
  private async find(merchantId: bigint, ref: OrderRef): Promise<PaymentRow> {
    const row = await this.lookups.find(merchantId, ref);
    if (!row) throw orderNotFound();
    return row;
  }

  /** The merchant's payment `ref` names, locked FOR UPDATE inside `tx`, the transaction that changes it. */
  private async lock(tx: Queryable, merchantId: bigint, ref: OrderRef): Promise<PaymentRow> {
    const [column, value] =
      ref.orderNo !== undefined
        ? (['order_no', ref.orderNo] as const)
        : (['merchant_order_no', ref.merchantOrderNo] as const);
    const row = (await tx.query<PaymentRow>(LOCK_PAYMENT[column], [merchantId, value])).rows[0];
    if (!row) throw orderNotFound();
    return row;
  }

  async get(merchantId: bigint, ref: OrderRef): Promise<PaymentView> {
    return this.view(await this.find(merchantId, ref));
  }

  /** The embedded database only: vacuums payments (status changes leave the old row versions behind) when it has dead rows (see vacuumTable). */
  vacuum(): Promise<Vacuumed[]> {
    return vacuumTables(this.db, ['payments']);
  }

  /** Raw row by order number, for other modules (cashier page, portal). */
  async row(merchantId: bigint, ref: OrderRef): Promise<PaymentRow> {
    return this.find(merchantId, ref);
  }

  /** Newest first, filtered by status and creation time (Unix ms, inclusive), with a cursor. */
  list(merchantId: bigint, filters: OrderListFilters): Promise<{ items: PaymentView[]; nextCursor: string | null }> {
    return this.reads.list(merchantId, filters);
  }

  /** Many merchants' succeeded orders created in [from, to], by currency (the back office's merchant list). */
  volumes(merchantIds: readonly bigint[], range: { from: number; to: number }) {
    return this.reads.volumes(merchantIds, range);
  }

  /**
   * The back office's search across every merchant (db/order-search.ts, searchAllOrders): rows
   * newest first, at most `filters.limit`, for the caller to merge with the other order kind's.
   */
  searchAll(filters: SearchAllFilters): Promise<PaymentRow[]> {
    return searchAllOrders<PaymentRow>(this.db, PAYMENT_ORDERS, filters);
  }

  /**
   * The portal's search: payments an order number, merchant order number, payer name or document
   * number, or amount finds (db/order-search.ts), within the list filters, newest first.
   */
  search(
    merchantId: bigint,
    filters: SearchFilters,
  ): Promise<{ items: PaymentView[]; nextCursor: string | null; total: number }> {
    return this.reads.search(merchantId, filters);
  }

  /** How many payments `list` would page through with these filters. */
  count(merchantId: bigint, filters: Omit<OrderListFilters, 'pageSize' | 'cursor'>): Promise<number> {
    return this.reads.count(merchantId, filters);
  }

  /** Payments created in [from, to] by status and currency: count and amount (the portal's overview). */
  totals(merchantId: bigint, range: { from: number; to: number }): Promise<StatusTotal[]> {
    return this.reads.totals(merchantId, range);
  }

  /**
   * PENDING → CANCELED, with its event. A payment routed to a channel is withdrawn there first
   * (outside the transaction: no lock is held across the call): a channel that cannot be reached
   * refuses the cancel with CHANNEL_UNAVAILABLE and nothing changes; a payer who paid or declined
   * at the channel first wins, the payment takes that state and the cancel is INVALID_STATE.
   */
  async cancel(
    merchantId: bigint,
    ref: OrderRef,
    also?: InTransaction<{ orderNo: string }>,
    /** The signed request's nonce: recorded by the cancel's transaction, or before the channel is called. */
    nonce?: RequestNonce,
    /** Who cancels: the merchant's API, or a person in the portal. */
    cause: Extract<TransitionCause, 'merchant_api' | 'portal'> = 'merchant_api',
  ): Promise<PaymentView> {
    await this.withdrawAtChannel(merchantId, ref, nonce);
    const row = await this.transition(
      merchantId,
      ref,
      async (row, tx) => {
        if (row.status === 'CANCELED') return stay(row);
        // Recorded before the move is applied, in its transaction: a refused move rolls it back.
        await also?.(tx, { orderNo: row.order_no });
        return this.move(row, 'CANCELED', cause, () => ({}), 'be canceled');
      },
      nonce,
    );
    return this.view(row);
  }

  private async withdrawAtChannel(merchantId: bigint, ref: OrderRef, nonce: RequestNonce | undefined): Promise<void> {
    const row = await this.find(merchantId, ref);
    if (row.channel === null || row.status !== 'PENDING') return;
    const connector = this.channels?.get(row.channel);
    if (!connector) throw channelUnavailable(row.channel);
    if (!connector.cancelPayment) return;
    // The channel is told nothing by a request whose nonce is not recorded.
    await nonce?.settle();
    let outcome: Awaited<ReturnType<NonNullable<Connector['cancelPayment']>>>;
    try {
      outcome = await connector.cancelPayment({ orderNo: row.order_no, channelTradeNo: row.channel_trade_no });
    } catch (error) {
      if (error instanceof ChannelUnavailable) throw channelUnavailable(connector.name);
      throw error;
    }
    if (outcome.kind === 'final') {
      const { state } = outcome;
      await this.applyChannelReport(
        merchantId,
        {
          orderNo: row.order_no,
          status: state.status,
          paidAmount: state.status === 'SUCCEEDED' ? state.paidAmount : undefined,
          channelTradeNo: state.channelTradeNo,
          payer: state.payer,
          failureReason: state.status === 'FAILED' ? state.failureReason : undefined,
        },
        row.channel,
      );
    }
  }

  /** Changes attach and/or webhookUrl while the payment is not final. */
  async update(merchantId: bigint, input: unknown): Promise<PaymentView> {
    const u = parseInput(this.updateSchema, input);
    const ref = (u.orderNo !== undefined ? { orderNo: u.orderNo } : { merchantOrderNo: u.merchantOrderNo }) as OrderRef;
    return this.db.transaction(async (tx) => {
      const row = await this.lock(tx, merchantId, ref);
      if (isFinalPayment(row.status)) throw invalidState(`a ${row.status} payment cannot be updated`);
      const result = await tx.query<PaymentRow>(
        `UPDATE payments SET attach = $2, webhook_url = $3, updated_at = $4 WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
        [row.id, u.attach ?? row.attach, u.webhookUrl ?? row.webhook_url, new Date(this.now())],
      );
      return this.view(result.rows[0] as PaymentRow);
    });
  }

  /**
   * Applies what the channel reports: `channel` names the reporting channel (null: the built-in
   * sandbox channel, i.e. the sandbox helpers and the cashier page); a report about an order another
   * channel serves is INVALID_STATE. Repeating the current state changes nothing; a final
   * order never moves again; payer details are taken only from here and frozen once final.
   * `locked` is told the order's status as its row lock found it, before anything is applied.
   */
  async applyChannelReport(
    merchantId: bigint,
    input: unknown,
    channel: string | null = null,
    locked?: (status: string) => void,
    also?: InTransaction<{ orderNo: string; from: string; to: string }>,
  ): Promise<PaymentView> {
    const report = parseInput(this.reportSchema, input) as ChannelReport;
    const row = await this.transition(merchantId, { orderNo: report.orderNo }, async (row, tx) => {
      locked?.(row.status);
      if (row.channel !== channel) throw notTheChannel('payment', row.channel, channel);
      if (row.status === report.status) return stay(row);
      // The report's fields are checked once the move is known to be allowed.
      // The built-in channel's reports are the sandbox's helpers (and its cashier page).
      const cause = report.status === 'EXPIRED' ? 'expiry' : channel === null ? 'sandbox' : 'channel';
      const move = this.move(row, report.status, cause, () => reportChanges(row, report));
      await also?.(tx, { orderNo: row.order_no, from: row.status, to: report.status });
      return move;
    });
    return this.view(row);
  }

  /**
   * The credit transfers a bank file brings for payments by bank transfer (kind sepa-sftp), inside
   * the file's transaction `tx`, in the file's order, together: for each, the first of `orderNos`
   * (the payments its creditor references name) that is a payment of `channel`; SUCCEEDED, with
   * `paidAmount` the credit's amount, `channelTradeNo` the bank's reference and the payer's name,
   * when it is PENDING (a payment an earlier credit of the list settled is final), not past its
   * expiry, and the credit is its amount in its currency. Otherwise nothing changes and the answer
   * says why (decisions.md: the credit is then kept for the operator). Every row is locked in one
   * statement (in id order); the moves are written in one UPDATE, their transitions, ledger
   * credits and events together. Answers each credit's outcome, in order.
   */
  async settleBankCredits(
    tx: Queryable,
    channel: string,
    credits: readonly {
      readonly orderNos: readonly string[];
      readonly amountMinor: bigint;
      readonly currency: string;
      readonly channelTradeNo?: string | undefined;
      readonly payerName?: string | undefined;
    }[],
  ): Promise<
    {
      readonly outcome: 'matched' | 'unknown_reference' | 'other_amount' | 'payment_final' | 'expired';
      readonly orderNo?: string;
    }[]
  > {
    if (credits.length === 0) return [];
    const found = await tx.query<PaymentRow>(
      `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE order_no = ANY($1::text[]) AND channel = $2 ORDER BY id FOR UPDATE`,
      [[...new Set(credits.flatMap((credit) => credit.orderNos))], channel],
    );
    const byOrder = new Map(found.rows.map((row) => [row.order_no, row]));
    const now = new Date(this.now());
    const settled = new Set<string>();
    const moves: { row: PaymentRow; paid: bigint; channelTradeNo: string; payerName: string | null }[] = [];
    const outcomes = credits.map((credit) => {
      const row = credit.orderNos.map((orderNo) => byOrder.get(orderNo)).find((candidate) => candidate !== undefined);
      if (!row) return { outcome: 'unknown_reference' as const };
      const orderNo = row.order_no;
      if (row.status !== 'PENDING' || settled.has(orderNo)) return { outcome: 'payment_final' as const, orderNo };
      if (row.expires_at.getTime() <= now.getTime()) return { outcome: 'expired' as const, orderNo };
      if (credit.currency !== row.currency || credit.amountMinor !== row.amount_minor) {
        return { outcome: 'other_amount' as const, orderNo };
      }
      if (!PAYMENT_STATES.moves[row.status].includes('SUCCEEDED'))
        return { outcome: 'payment_final' as const, orderNo };
      settled.add(orderNo);
      const name = credit.payerName?.trim();
      moves.push({
        row,
        paid: credit.amountMinor,
        channelTradeNo: credit.channelTradeNo ?? row.channel_trade_no ?? channelTradeNo(),
        payerName: name ? name.slice(0, 200) : row.payer_name,
      });
      return { outcome: 'matched' as const, orderNo };
    });
    if (moves.length === 0) return outcomes;
    const updated = await tx.query<PaymentRow>(
      `UPDATE payments p SET status = 'SUCCEEDED', paid_amount_minor = t.paid, channel_trade_no = t.channel_trade_no,
              payer_name = t.payer_name, updated_at = $5, finalized_at = $5
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS t(id, paid, channel_trade_no, payer_name)
        WHERE p.id = t.id
        RETURNING ${PAYMENT_COLUMNS.split(',')
          .map((column) => `p.${column.trim()}`)
          .join(', ')}`,
      [
        moves.map((move) => move.row.id.toString()),
        moves.map((move) => move.paid.toString()),
        moves.map((move) => move.channelTradeNo),
        moves.map((move) => move.payerName),
        now,
      ],
    );
    await recordTransitions(
      tx,
      moves.map((move) => ({
        orderType: 'PAYMENT' as const,
        orderNo: move.row.order_no,
        merchantId: move.row.merchant_id,
        from: move.row.status,
        to: 'SUCCEEDED',
        cause: 'bank_file' as const,
      })),
      now,
    );
    if (this.hooks.onSucceededMany) await this.hooks.onSucceededMany(tx, updated.rows, now);
    else for (const row of updated.rows) await this.hooks.onSucceeded?.(tx, row);
    await writeEvents(tx, updated.rows.map(paymentEvent), now);
    return outcomes;
  }

  /** A state change of one payment through the shared helper: its row locked, the move checked against PAYMENT_STATES. */
  private transition(
    merchantId: bigint,
    ref: OrderRef,
    decide: Decide<PaymentRow, PaymentStatus>,
    nonce?: RequestNonce,
  ): Promise<PaymentRow> {
    return transition(this.db, PAYMENT_STATES, (tx) => this.lock(tx, merchantId, ref), decide, this.now, { nonce });
  }

  /**
   * The move of a locked row to `status` with the columns `changes` gives; a final status also
   * writes its event (and, for SUCCEEDED, runs the ledger hook) in the same transaction.
   */
  private move(
    row: PaymentRow,
    status: PaymentStatus,
    cause: TransitionCause,
    changes: () => Partial<PaymentRow>,
    refusal?: string,
  ): Move<PaymentRow, PaymentStatus> {
    return {
      kind: 'move',
      to: status,
      cause,
      ...(refusal === undefined ? {} : { refusal }),
      update: async (tx, now) => {
        const set = changes();
        const final = isFinalPayment(status);
        const result = await tx.query<PaymentRow>(
          `UPDATE payments SET status = $2, paid_amount_minor = $3, channel_trade_no = $4, payer_name = $5, payer_document = $6,
                  updated_at = $7, finalized_at = $8, failure_reason = $9
            WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
          [
            row.id,
            status,
            set.paid_amount_minor ?? row.paid_amount_minor,
            set.channel_trade_no ?? row.channel_trade_no,
            set.payer_name ?? row.payer_name,
            set.payer_document ?? row.payer_document,
            now,
            final ? now : null,
            set.failure_reason ?? row.failure_reason,
          ],
        );
        return result.rows[0] as PaymentRow;
      },
      post: async (tx, updated) => {
        if (status === 'SUCCEEDED') await this.hooks.onSucceeded?.(tx, updated);
      },
      event: paymentEvent,
    };
  }

  /**
   * Expires PENDING payments of the built-in sandbox channel whose time is up, at most `limit`
   * per call; returns how many. A payment routed to another channel expires through polling
   * (channels/polling.ts), which withdraws it at its channel first: the payer may have paid there.
   */
  async expireDue(limit = 100): Promise<number> {
    return this.db.transaction(async (tx) => {
      // SKIP LOCKED: several sweepers (one per instance) share the work instead of queueing on it.
      const due = await tx.query<PaymentRow>(
        `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE status = 'PENDING' AND expires_at <= $1 AND channel IS NULL
          ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [new Date(this.now()), limit],
      );
      for (const row of due.rows) {
        await applyMove(
          tx,
          PAYMENT_STATES,
          row,
          this.move(row, 'EXPIRED', 'expiry', () => ({})),
          new Date(this.now()),
        );
      }
      return due.rows.length;
    });
  }

  /** The merchant id owning a payment order number (cashier page). */
  async ownerOf(orderNo: string): Promise<bigint | undefined> {
    const result = await this.db.query<{ merchant_id: bigint }>(
      'SELECT merchant_id FROM payments WHERE order_no = $1',
      [orderNo],
    );
    return result.rows[0]?.merchant_id;
  }

  /** The merchant, channel and state of an order number (channel updates); `undefined` when there is no such order. */
  servedBy(orderNo: string): Promise<ServedOrder | undefined> {
    return servedBy(this.db, 'payments', orderNo);
  }

  /** The channels the merchant's orders went through, how many and the last when (the back office). */
  channelsUsed(merchantId: bigint) {
    return channelsUsed(this.db, 'payments', merchantId);
  }

  /** What polling waits for at `channel` (the back office's channel health). */
  pollBacklog(channel: string) {
    return pollBacklog(this.db, 'payments', channel, this.now());
  }

  /** An open (PENDING or PROCESSING) payment of `channel` by the channel's id of it (a pix-api txid). */
  openByChannelTradeNo(channel: string, channelTradeNo: string): Promise<string | undefined> {
    return openByChannelTradeNo(this.db, 'payments', channel, channelTradeNo);
  }

  /** Claims channel-routed payments due for a status query at their channel (db/order-polls.ts says when). */
  claimDuePolls(claim: PollClaim): Promise<ClaimedPoll[]> {
    return claimDuePolls(this.db, 'payments', claim);
  }
}

/** The columns a channel report sets on the payment it moves; a field the report may not carry is VALIDATION_FAILED. */
function reportChanges(row: PaymentRow, report: ChannelReport): Partial<PaymentRow> {
  const changes: Partial<PaymentRow> = {};
  const scale = scaleOf(row.currency);
  if (report.status === 'SUCCEEDED') {
    const paid = report.paidAmount === undefined ? row.amount_minor : parseAmount(report.paidAmount, scale);
    if (paid === undefined)
      throw validationFailed([
        { field: 'paidAmount', message: `a positive amount with at most ${scale} fraction digits` },
      ]);
    changes.paid_amount_minor = paid;
  } else if (report.paidAmount !== undefined) {
    throw validationFailed([{ field: 'paidAmount', message: 'only a SUCCEEDED report carries paidAmount' }]);
  }
  if (report.status !== 'EXPIRED') {
    changes.channel_trade_no = report.channelTradeNo ?? row.channel_trade_no ?? channelTradeNo();
  }
  if (report.failureReason !== undefined) {
    if (report.status !== 'FAILED') {
      throw validationFailed([{ field: 'failureReason', message: 'only a FAILED report carries failureReason' }]);
    }
    changes.failure_reason = report.failureReason;
  }
  if (report.payer?.name !== undefined) changes.payer_name = report.payer.name;
  if (report.payer?.documentNumber !== undefined) changes.payer_document = report.payer.documentNumber;
  return changes;
}

/** The event a payment's final state announces. */
function paymentEvent(row: PaymentRow): NewEvent {
  return orderEvent('PAYMENT', row, {
    paidAmount:
      row.status === 'SUCCEEDED' && row.paid_amount_minor !== null
        ? formatAmount(row.paid_amount_minor, scaleOf(row.currency))
        : undefined,
    channelTradeNo: row.channel_trade_no ?? undefined,
    payer: payerOf(row),
    attach: row.attach ?? undefined,
  });
}

/**
 * A payment by bank transfer's account, beneficiary and reference (decisions.md, "Payments by
 * bank transfer"), from what its channel told the payer to do (kind sepa-sftp: `bank`).
 */
function bankTransferOf(action: PayerAction): PaymentView['bankTransfer'] {
  if (action.kind !== 'bank') return undefined;
  const { iban, bic, beneficiary, reference } = action.bankDetails;
  if (iban === undefined || beneficiary === undefined || reference === undefined) return undefined;
  return { iban, ...(bic !== undefined ? { bic } : {}), beneficiary, reference };
}

function channelTradeNo(): string {
  return `CH${Date.now().toString(36).toUpperCase()}${Math.floor(Math.random() * 1e6)
    .toString()
    .padStart(6, '0')}`;
}

/** The order numbers of a channel's payments by the channel's ids of them (reconciliation without a file). */
export async function paymentsByChannelTradeNo(
  q: Queryable,
  channel: string,
  channelTradeNos: readonly string[],
): Promise<Map<string, string>> {
  const result = await q.query<{ order_no: string; channel_trade_no: string }>(
    'SELECT order_no, channel_trade_no FROM payments WHERE channel = $1 AND channel_trade_no = ANY($2::text[])',
    [channel, channelTradeNos],
  );
  return new Map(result.rows.map((row) => [row.channel_trade_no, row.order_no]));
}

/** The channel's payments of a day as charges (channel reconciliation). */
export async function paymentBook(q: Queryable, day: BookDay): Promise<BookRow[]> {
  const result = await q.query<BookRow>(
    `SELECT 'charge' AS type, order_no AS reference, status, currency, amount_minor, paid_amount_minor AS paid_minor,
            (finalized_at >= $2 AND finalized_at < $3 AND status IN ('SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED')) AS in_day
       FROM payments WHERE channel = $1 AND (order_no = ANY($4::text[]) OR (finalized_at >= $2 AND finalized_at < $3 AND status IN ('SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED')))`,
    [day.channel, day.from, day.to, day.references],
  );
  return result.rows;
}
