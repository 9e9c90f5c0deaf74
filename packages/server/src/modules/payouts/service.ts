import { randomBytes } from 'node:crypto';
import {
  createPayoutRequest,
  type Currency,
  type Payee,
  PAYOUT_CHANNEL_STATUSES,
  PAYOUT_STATUSES,
  type Payout,
  type PayoutReceipt,
  type PayoutStatus,
  ReturnPayoutRequest,
  SimulatePayoutRequest,
  updatePayoutRequest,
} from '@paygate/wire';
import type { Config } from '../../config.js';
import { type Db, type InTransaction, prepared, type Queryable, sqlState, UNIQUE_VIOLATION } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { channelsUsed, type OrderListFilters, type StatusTotal } from '../../db/paging.js';
import { type SearchAllFilters, searchAllOrders, type SearchFilters, type SearchTable } from '../../db/order-search.js';
import {
  type ClaimedPoll,
  claimDuePolls,
  type PollClaim,
  type ServedOrder,
  servedBy,
  pollBacklog,
} from '../../db/order-polls.js';
import {
  DomainError,
  duplicateOrder,
  type FieldError,
  invalidState,
  orderNotFound,
  validationFailed,
} from '../../errors.js';
import { channelUnavailable } from '../channels/errors.js';
import { ulid } from '../../ids.js';
import { formatAmount, parseAmount } from '../../money.js';
import { type OrderRef, parseInput, webhookUrl } from '../../validation.js';
import { currencyInfo, scaleOf } from '../../catalog.js';
import { type ChannelPayoutOrder, ChannelUnavailable } from '../channels/connector.js';
import { type ChannelRegistry, storedChannel } from '../channels/registry.js';
import { type NewEvent, writeEvents } from '../webhooks/outbox.js';
import { insufficientBalance } from './errors.js';
import type { RequestNonce } from '../../db/request-nonce.js';
import { isInsufficientBalance, type Ledger } from '../ledger/service.js';
import { PAYOUT_STATES } from '../orders/states.js';
import {
  applyMove,
  type Decide,
  orderEvent,
  recordTransitions,
  stay,
  transition,
  type TransitionCause,
} from '../orders/transition.js';
import type { BookDay, BookRow } from '../orders/book.js';
import { notTheChannel } from '../orders/errors.js';
import { OrderLookups } from '../../db/order-lookups.js';
import { OrderReads } from '../orders/reads.js';
import { type FeeSchedule, payoutFee } from '../../fees.js';

export { PAYOUT_STATUSES, type PayoutStatus };

/** What a channel may report about a payout (REFUNDED comes only by a return, `returnPayout`). */
export const CHANNEL_STATUSES = PAYOUT_CHANNEL_STATUSES;

/** How long the REFUNDED event is retried (merchant-payment-api.md, Delivery rules 4). */
const REFUND_EVENT_TTL_MS = 24 * 3_600_000;

/** A payout order row. */
export interface PayoutRow {
  id: bigint;
  order_no: string;
  merchant_id: bigint;
  merchant_order_no: string;
  currency: Currency;
  amount_minor: bigint;
  fee_minor: bigint;
  webhook_url: string;
  attach: string | null;
  payee_name: string;
  payee_account_number: string;
  payee_bank_code: string | null;
  payee_document: string | null;
  status: PayoutStatus;
  channel_trade_no: string | null;
  refund_no: string | null;
  refund_amount_minor: bigint | null;
  refunded_at: Date | null;
  created_at: Date;
  updated_at: Date;
  confirmed_at: Date | null;
  finalized_at: Date | null;
  /** The channel paying it out; NULL for the built-in sandbox channel. */
  channel: string | null;
}

/**
 * A payout order as queries and lists return it (the wire schema `Payout`). It never carries
 * payee details: those come only from the receipt.
 */
export type PayoutView = Payout;
export type { Payee, PayoutReceipt };

/** Every column of PayoutRow, listed so that prepared statements keep their shape. */
const PAYOUT_COLUMNS = `id, order_no, merchant_id, merchant_order_no, currency, amount_minor, fee_minor, webhook_url, attach,
  payee_name, payee_account_number, payee_bank_code, payee_document, status, channel_trade_no, refund_no,
  refund_amount_minor, refunded_at, created_at, updated_at, confirmed_at, finalized_at, channel`;

const readPayout = (column: 'order_no' | 'merchant_order_no', lock: boolean) =>
  prepared(
    `payouts_by_${column}${lock ? '_for_update' : ''}`,
    `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE merchant_id = $1 AND ${column} = $2${lock ? ' FOR UPDATE' : ''}`,
  );
/** A payout read inside a transaction, locked FOR UPDATE when the transaction changes it. */
const READ_PAYOUT = {
  order_no: [readPayout('order_no', false), readPayout('order_no', true)],
  merchant_order_no: [readPayout('merchant_order_no', false), readPayout('merchant_order_no', true)],
} as const;

/** Payouts as their list and count read them. */
const PAYOUT_ORDERS: SearchTable = {
  table: 'payouts',
  columns: PAYOUT_COLUMNS,
  statuses: PAYOUT_STATUSES,
  nameColumn: 'payee_name',
  documentColumn: 'payee_document',
  accountColumn: 'payee_account_number',
};

/** Payout orders: create (reserving amount + fee), confirm, update, read, and the channel's moves. */
export class Payouts {
  private readonly createSchema;
  private readonly updateSchema;
  private readonly reportSchema = SimulatePayoutRequest;
  private readonly returnSchema = ReturnPayoutRequest;
  private readonly reads: OrderReads<PayoutRow, PayoutView>;
  /** Reads by either reference outside a transaction, batched per turn of the event loop. */
  private readonly lookups: OrderLookups<PayoutRow>;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'environment' | 'webhookAllowPrivate' | 'fees' | 'channelPollAfterMs'>,
    private readonly ledger: Ledger,
    private readonly now: () => number = Date.now,
    /** Routing to channels; without it every payout is the built-in sandbox channel's. */
    private readonly channels?: Pick<ChannelRegistry, 'routePayout' | 'get'>,
    /** A merchant's fee schedule (its own plan over the platform's table). */
    private readonly feeSchedule: (q: Queryable, merchantId: bigint) => Promise<FeeSchedule> = async () =>
      this.config.fees,
  ) {
    this.createSchema = createPayoutRequest(webhookUrl(config));
    this.updateSchema = updatePayoutRequest(webhookUrl(config));
    this.reads = new OrderReads(db, PAYOUT_ORDERS, (row: PayoutRow) => this.view(row));
    this.lookups = new OrderLookups(db, 'payouts', PAYOUT_COLUMNS);
  }

  /** The embedded database only: vacuums payouts (status changes leave the old row versions behind) when it has dead rows (see vacuumTable). */
  vacuum(): Promise<Vacuumed[]> {
    return vacuumTables(this.db, ['payouts']);
  }

  view(row: PayoutRow): PayoutView {
    const scale = scaleOf(row.currency);
    const view: PayoutView = {
      orderNo: row.order_no,
      merchantOrderNo: row.merchant_order_no,
      status: row.status,
      currency: row.currency,
      amount: formatAmount(row.amount_minor, scale),
      fee: formatAmount(row.fee_minor, scale),
      webhookUrl: row.webhook_url,
      createdAt: row.created_at.getTime(),
      updatedAt: row.updated_at.getTime(),
    };
    if (row.attach !== null) view.attach = row.attach;
    if (row.channel_trade_no !== null) view.channelTradeNo = row.channel_trade_no;
    Object.assign(view, refundFields(row));
    if (row.confirmed_at !== null) view.confirmedAt = row.confirmed_at.getTime();
    if (row.finalized_at !== null) view.finalizedAt = row.finalized_at.getTime();
    return view;
  }

  receiptOf(row: PayoutRow): PayoutReceipt {
    const scale = scaleOf(row.currency);
    const payee: Payee = { name: row.payee_name, accountNumber: row.payee_account_number };
    if (row.payee_bank_code !== null) payee.bankCode = row.payee_bank_code;
    if (row.payee_document !== null) payee.documentNumber = row.payee_document;
    const receipt: PayoutReceipt = {
      orderNo: row.order_no,
      merchantOrderNo: row.merchant_order_no,
      status: row.status,
      currency: row.currency,
      amount: formatAmount(row.amount_minor, scale),
      fee: formatAmount(row.fee_minor, scale),
      total: formatAmount(row.amount_minor + row.fee_minor, scale),
      payee,
      createdAt: row.created_at.getTime(),
    };
    if (row.channel_trade_no !== null) receipt.channelTradeNo = row.channel_trade_no;
    Object.assign(receipt, refundFields(row));
    if (row.confirmed_at !== null) receipt.confirmedAt = row.confirmed_at.getTime();
    if (row.finalized_at !== null) receipt.finalizedAt = row.finalized_at.getTime();
    return receipt;
  }

  private parseCreate(input: unknown) {
    const parsed = parseInput(this.createSchema, input);
    const errors: FieldError[] = [];
    const currency = currencyInfo(parsed.currency);
    if (!currency) errors.push({ field: 'currency', message: 'not a supported currency' });
    const amountMinor = currency ? parseAmount(parsed.amount, currency.scale) : undefined;
    if (currency && amountMinor === undefined) {
      errors.push({
        field: 'amount',
        message: `a positive decimal string with at most ${currency.scale} fraction digits, no sign or exponent`,
      });
    }
    const connector = currency && this.channels ? this.channels.routePayout(currency.code) : undefined;
    if (currency && this.channels && !connector) {
      errors.push({ field: 'currency', message: `no channel serves payouts in ${currency.code}` });
    }
    // The channel's own payee rules (kind sepa-sftp: an IBAN, a BIC, a name of 1–70 characters),
    // before anything is reserved; a payee it normalizes (an IBAN's spaces) is stored as it says.
    // An account number as people write it (an IBAN in groups of four): kept without its spaces.
    let payee = { ...parsed.payee, accountNumber: parsed.payee.accountNumber.replace(/ /g, '') };
    const checked = connector?.validatePayee?.(payee);
    if (checked && !checked.ok) errors.push(...checked.errors);
    else if (checked?.ok) payee = { ...payee, ...checked.payee };
    if (errors.length > 0) throw validationFailed(errors);
    return { ...parsed, payee, amountMinor: amountMinor as bigint };
  }

  /**
   * Creates a PENDING payout and moves amount + fee from the merchant's available balance to
   * reserved, in one transaction: either both happen or nothing is written (INSUFFICIENT_BALANCE).
   * Deduplicated by merchantOrderNo alone, like payments: the same fields return the existing order
   * and move no money; different fields are DUPLICATE_ORDER.
   */
  async create(
    merchantId: bigint,
    input: unknown,
    /** The signed request's nonce, recorded first in the create's transaction (see RequestNonce). */
    nonce?: RequestNonce,
  ): Promise<{ payout: PayoutView; created: boolean }> {
    const order = this.parseCreate(input);
    const connector = this.channels?.routePayout(order.currency);
    const channel = connector ? storedChannel(connector) : null;
    const fee = payoutFee(await this.feeSchedule(this.db, merchantId), order.currency, order.amountMinor);
    const now = new Date(this.now());
    const datePrefix = `W${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
    try {
      return await this.db.transaction(
        async (tx) => {
          // The unique index decides between concurrent creates: a second one waits here for the
          // first to commit or roll back, then either finds its row or inserts its own.
          const inserted = await tx.query<PayoutRow>(
            `INSERT INTO payouts (order_no, merchant_id, merchant_order_no, currency, amount_minor, fee_minor, webhook_url, attach,
                                payee_name, payee_account_number, payee_bank_code, payee_document, status, created_at, updated_at,
                                channel)
           VALUES ($1 || lpad(nextval('order_no_seq')::text, 10, '0'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'PENDING', $13, $13, $14)
           ON CONFLICT (merchant_id, merchant_order_no) DO NOTHING
           RETURNING ${PAYOUT_COLUMNS}`,
            [
              datePrefix,
              merchantId,
              order.merchantOrderNo,
              order.currency,
              order.amountMinor,
              fee,
              order.webhookUrl,
              order.attach ?? null,
              order.payee.name,
              order.payee.accountNumber,
              order.payee.bankCode ?? null,
              order.payee.documentNumber ?? null,
              now,
              channel,
            ],
          );
          const row = inserted.rows[0];
          if (row) {
            await this.ledger.reservePayout(tx, row, now);
            return { payout: this.view(row), created: true };
          }
          const existing = await this.findIn(tx, merchantId, { merchantOrderNo: order.merchantOrderNo }, false);
          const same =
            existing.currency === order.currency &&
            existing.amount_minor === order.amountMinor &&
            existing.webhook_url === order.webhookUrl &&
            existing.attach === (order.attach ?? null) &&
            existing.payee_name === order.payee.name &&
            existing.payee_account_number === order.payee.accountNumber &&
            existing.payee_bank_code === (order.payee.bankCode ?? null) &&
            existing.payee_document === (order.payee.documentNumber ?? null);
          if (!same) throw duplicateOrder();
          return { payout: this.view(existing), created: false };
        },
        { nonce },
      );
    } catch (error) {
      // The CHECK on the available balance refused the reserve; the rollback took the order with it.
      if (isInsufficientBalance(error)) {
        // Read after the rollback, for the answer only: the CHECK decided, not this figure.
        const available = (await this.ledger.balances(merchantId)).get(order.currency)?.available ?? 0n;
        throw insufficientBalance({ currency: order.currency, available, amount: order.amountMinor, fee });
      }
      throw withoutPayee(error);
    }
  }

  /** The merchant's payout `ref` names, read outside a transaction (batched per turn). */
  private async find(merchantId: bigint, ref: OrderRef): Promise<PayoutRow> {
    const row = await this.lookups.find(merchantId, ref);
    if (!row) throw orderNotFound();
    return row;
  }

  /** The merchant's payout `ref` names, read inside `tx`; locked FOR UPDATE when `tx` changes it. */
  private async findIn(tx: Queryable, merchantId: bigint, ref: OrderRef, lock: boolean): Promise<PayoutRow> {
    const [column, value] =
      ref.orderNo !== undefined
        ? (['order_no', ref.orderNo] as const)
        : (['merchant_order_no', ref.merchantOrderNo] as const);
    const row = (await tx.query<PayoutRow>(READ_PAYOUT[column][lock ? 1 : 0], [merchantId, value])).rows[0];
    if (!row) throw orderNotFound();
    return row;
  }

  async get(merchantId: bigint, ref: OrderRef): Promise<PayoutView> {
    return this.view(await this.find(merchantId, ref));
  }

  async receipt(merchantId: bigint, ref: OrderRef): Promise<PayoutReceipt> {
    return this.receiptOf(await this.find(merchantId, ref));
  }

  /** Raw row, for other modules (portal). */
  async row(merchantId: bigint, ref: OrderRef): Promise<PayoutRow> {
    return this.find(merchantId, ref);
  }

  /** Newest first, filtered by status and creation time (Unix ms, inclusive), with a cursor. */
  list(merchantId: bigint, filters: OrderListFilters): Promise<{ items: PayoutView[]; nextCursor: string | null }> {
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
  searchAll(filters: SearchAllFilters): Promise<PayoutRow[]> {
    return searchAllOrders<PayoutRow>(this.db, PAYOUT_ORDERS, filters);
  }

  /**
   * The portal's search: payouts an order number, merchant order number, payee name or document
   * number, or amount finds (db/order-search.ts), within the list filters, newest first.
   */
  search(
    merchantId: bigint,
    filters: SearchFilters,
  ): Promise<{ items: PayoutView[]; nextCursor: string | null; total: number }> {
    return this.reads.search(merchantId, filters);
  }

  /** How many payouts `list` would page through with these filters. */
  count(merchantId: bigint, filters: Omit<OrderListFilters, 'pageSize' | 'cursor'>): Promise<number> {
    return this.reads.count(merchantId, filters);
  }

  /** Payouts created in [from, to] by status and currency: count and amount (the portal's overview). */
  totals(merchantId: bigint, range: { from: number; to: number }): Promise<StatusTotal[]> {
    return this.reads.totals(merchantId, range);
  }

  /**
   * PENDING → PROCESSING: the merchant hands the payout to the channel. Confirming a payout that
   * was already confirmed, or that the channel already took (PROCESSING), returns it unchanged: a
   * retried confirm is not an error.
   */
  async confirm(
    merchantId: bigint,
    ref: OrderRef,
    /** The signed request's nonce: recorded by the confirm's transaction, or before the channel is called. */
    nonce?: RequestNonce,
  ): Promise<PayoutView> {
    const sent = await this.sendToChannel(merchantId, ref, nonce);
    try {
      const row = await this.transition(
        merchantId,
        ref,
        undefined,
        (row) =>
          row.confirmed_at !== null || row.status === 'PROCESSING'
            ? stay(row)
            : {
                kind: 'move',
                to: 'PROCESSING',
                cause: 'merchant_api',
                refusal: 'be confirmed',
                update: (tx, now) =>
                  this.set(
                    tx,
                    row,
                    `status = 'PROCESSING', confirmed_at = $2, updated_at = $2, channel_trade_no = COALESCE(channel_trade_no, $3)`,
                    [now, sent?.channelTradeNo ?? null],
                  ),
              },
        nonce,
      );
      return this.view(row);
    } catch (error) {
      // Sent, but the platform will not pay it out (the order became final meanwhile): withdraw it at the channel.
      if (sent && error instanceof DomainError && error.code === 'INVALID_STATE') {
        await sent.connector.releasePayout(sent.order).catch(() => false);
      }
      throw error;
    }
  }

  /**
   * A channel-routed PENDING payout is sent to its channel before the confirm commits, so the
   * channel knows it when the confirm answers (idempotent there on orderNo: a retried confirm
   * sends it again harmlessly). A channel that cannot be reached leaves the payout PENDING and
   * the confirm answers CHANNEL_UNAVAILABLE: nothing changes, the merchant retries the confirm.
   * A timeout cannot tell whether the channel took it, so the payout is also marked for polling
   * (next_poll_at): if the channel has it after all, polling moves it on as the channel says
   * (channels/polling.ts); if not, it stays PENDING.
   */
  private async sendToChannel(merchantId: bigint, ref: OrderRef, nonce: RequestNonce | undefined) {
    if (!this.channels) return undefined;
    const row = await this.find(merchantId, ref);
    if (row.channel === null || row.status !== 'PENDING' || row.confirmed_at !== null) return undefined;
    const connector = this.channels.get(row.channel);
    if (!connector) throw channelUnavailable(row.channel);
    // The channel is told nothing by a request whose nonce is not recorded.
    await nonce?.settle();
    const payee = {
      name: row.payee_name,
      accountNumber: row.payee_account_number,
      bankCode: row.payee_bank_code ?? undefined,
      documentNumber: row.payee_document ?? undefined,
    };
    const order = { orderNo: row.order_no, channelTradeNo: row.channel_trade_no };
    try {
      const answer = await connector.createPayout({
        orderNo: row.order_no,
        currency: row.currency,
        amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
        payee,
      });
      return { connector, order: { ...order, channelTradeNo: answer.channelTradeNo ?? null }, ...answer };
    } catch (error) {
      if (!(error instanceof ChannelUnavailable)) throw error;
      await this.db.query(
        `UPDATE payouts SET next_poll_at = $2 WHERE id = $1 AND status = 'PENDING' AND next_poll_at IS NULL`,
        [row.id, new Date(this.now() + this.config.channelPollAfterMs)],
      );
      throw channelUnavailable(connector.name);
    }
  }

  /** Changes attach and/or webhookUrl while the payout is PENDING (before it reaches the channel). */
  async update(merchantId: bigint, input: unknown): Promise<PayoutView> {
    const u = parseInput(this.updateSchema, input);
    const ref = (u.orderNo !== undefined ? { orderNo: u.orderNo } : { merchantOrderNo: u.merchantOrderNo }) as OrderRef;
    return this.db.transaction(async (tx) => {
      const row = await this.findIn(tx, merchantId, ref, true);
      if (row.status !== 'PENDING') throw invalidState(`a ${row.status} payout cannot be updated`);
      const result = await tx.query<PayoutRow>(
        'UPDATE payouts SET attach = $2, webhook_url = $3, updated_at = $4 WHERE id = $1 RETURNING *',
        [row.id, u.attach ?? row.attach, u.webhookUrl ?? row.webhook_url, new Date(this.now())],
      );
      return this.view(result.rows[0] as PayoutRow);
    });
  }

  /**
   * Applies what the channel reports (`channel`: the reporting channel; null for the sandbox
   * helpers; a report about an order another channel serves is INVALID_STATE). SUCCEEDED settles the reserve (the amount
   * to the channel, the fee to the platform); FAILED releases it back to available; both write
   * their event in the same transaction. Repeating the current state changes nothing, and a late
   * SUCCEEDED after REFUNDED changes nothing either (it returns the REFUNDED order): the return
   * already happened upstream and must not be overwritten. `locked` is told the order's status as
   * its row lock found it, before anything is applied.
   */
  async applyChannelReport(
    merchantId: bigint,
    input: unknown,
    channel: string | null = null,
    locked?: (status: string) => void,
    also?: InTransaction<{ orderNo: string; from: string; to: string }>,
    within?: Queryable,
  ): Promise<PayoutView> {
    const report = parseInput(this.reportSchema, input);
    const row = await this.transition(merchantId, { orderNo: report.orderNo }, within, async (row, tx) => {
      locked?.(row.status);
      if (row.channel !== channel) throw notTheChannel('payout', row.channel, channel);
      if (row.status === report.status) return stay(row);
      if (row.status === 'REFUNDED' && report.status === 'SUCCEEDED') return stay(row);
      const final = report.status !== 'PROCESSING';
      await also?.(tx, { orderNo: row.order_no, from: row.status, to: report.status });
      return {
        kind: 'move',
        to: report.status,
        cause: causeOf(channel, within),
        update: (tx, now) =>
          this.set(tx, row, 'status = $2, channel_trade_no = $3, updated_at = $4, finalized_at = $5', [
            report.status,
            report.channelTradeNo ?? row.channel_trade_no ?? (final ? channelTradeNo(now) : null),
            now,
            final ? now : null,
          ]),
        post: (tx, updated, now) =>
          report.status === 'SUCCEEDED'
            ? this.ledger.settlePayout(tx, updated, now)
            : report.status === 'FAILED'
              ? this.ledger.releasePayout(tx, updated, now)
              : Promise.resolve(),
        event: payoutEvent,
      };
    });
    return this.view(row);
  }

  /**
   * Applies many reports of one channel at once, inside the caller's transaction (a bank file
   * settling thousands of payouts): each exactly as `applyChannelReport` decides it — a repeat or
   * a late SUCCEEDED after REFUNDED changes nothing, a move the state table has not is refused —
   * with every row locked in one statement (in id order), the moves written in one UPDATE, their
   * settles and releases posted together and their events written together. Only SUCCEEDED and
   * FAILED (the final reports a file brings). Answers each order's outcome.
   */
  async applyChannelReports(
    tx: Queryable,
    channel: string,
    reports: readonly {
      readonly orderNo: string;
      readonly status: 'SUCCEEDED' | 'FAILED';
      readonly channelTradeNo?: string;
    }[],
  ): Promise<Map<string, 'applied' | 'unchanged' | 'ignored' | 'unknown_order' | 'wrong_channel'>> {
    const outcomes = new Map<string, 'applied' | 'unchanged' | 'ignored' | 'unknown_order' | 'wrong_channel'>();
    if (reports.length === 0) return outcomes;
    const locked = await tx.query<PayoutRow>(
      `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE order_no = ANY($1::text[]) ORDER BY id FOR UPDATE`,
      [reports.map((report) => report.orderNo)],
    );
    const rows = new Map(locked.rows.map((row) => [row.order_no, row]));
    const moves: { row: PayoutRow; from: string; status: 'SUCCEEDED' | 'FAILED'; channelTradeNo: string | null }[] = [];
    for (const report of reports) {
      const row = rows.get(report.orderNo);
      if (!row) outcomes.set(report.orderNo, 'unknown_order');
      else if (row.channel !== channel) outcomes.set(report.orderNo, 'wrong_channel');
      else if (row.status === report.status || (row.status === 'REFUNDED' && report.status === 'SUCCEEDED')) {
        outcomes.set(report.orderNo, 'unchanged');
      } else if (!PAYOUT_STATES.moves[row.status].includes(report.status)) outcomes.set(report.orderNo, 'ignored');
      else {
        outcomes.set(report.orderNo, 'applied');
        // The order moves once: a second report of it in the same batch finds it moved.
        const from = row.status;
        row.status = report.status;
        moves.push({ row, from, status: report.status, channelTradeNo: report.channelTradeNo ?? row.channel_trade_no });
      }
    }
    if (moves.length === 0) return outcomes;
    const now = new Date(this.now());
    const updated = await tx.query<PayoutRow>(
      `UPDATE payouts p SET status = t.status, channel_trade_no = COALESCE(t.channel_trade_no, p.channel_trade_no),
              updated_at = $4, finalized_at = $4
         FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t(id, status, channel_trade_no)
        WHERE p.id = t.id
        RETURNING ${PAYOUT_COLUMNS.split(',')
          .map((column) => `p.${column.trim()}`)
          .join(', ')}`,
      [
        moves.map((move) => move.row.id.toString()),
        moves.map((move) => move.status),
        moves.map((move) => move.channelTradeNo ?? channelTradeNo(now)),
        now,
      ],
    );
    await this.ledger.settleOrReleasePayouts(
      tx,
      updated.rows.map((row) => ({ ...row, status: row.status as 'SUCCEEDED' | 'FAILED' })),
      now,
    );
    await recordTransitions(
      tx,
      moves.map((move) => ({
        orderType: 'PAYOUT' as const,
        orderNo: move.row.order_no,
        merchantId: move.row.merchant_id,
        from: move.from,
        to: move.status,
        cause: 'bank_file' as const,
      })),
      now,
    );
    await writeEvents(tx, updated.rows.map(payoutEvent), now);
    return outcomes;
  }

  /**
   * The channel returned a SUCCEEDED payout (sandbox helper): credit the merchant the full
   * principal (the payout fee is not returned: the platform did the work), move the order to
   * REFUNDED with refundNo, refundAmount and refundTime, and write the REFUNDED event with its
   * own eventId, retried for 24 h. Applied once per order and once per refundNo: a repeat of
   * either credits nothing and returns the order that refund applied to.
   */
  async returnPayout(
    merchantId: bigint,
    input: unknown,
    channel: string | null = null,
    also?: InTransaction<{ orderNo: string; from: string; to: string }>,
    within?: Queryable,
  ): Promise<PayoutView> {
    const request = parseInput(this.returnSchema, input);
    const refundNo = request.refundNo ?? `RF${ulid(this.now())}`;
    try {
      const row = await this.transition(merchantId, { orderNo: request.orderNo }, within, async (row, tx) => {
        if (row.channel !== channel) throw notTheChannel('payout', row.channel, channel);
        if (row.status === 'REFUNDED') return stay(row);
        const applied = request.refundNo === undefined ? undefined : await this.refunded(tx, merchantId, refundNo);
        if (applied) return stay(applied);
        await also?.(tx, { orderNo: row.order_no, from: row.status, to: 'REFUNDED' });
        return {
          kind: 'move',
          to: 'REFUNDED',
          cause: causeOf(channel, within),
          refusal: 'be returned',
          update: (tx, now) =>
            this.set(
              tx,
              row,
              `status = 'REFUNDED', refund_no = $2, refund_amount_minor = $3, refunded_at = $4, updated_at = $4`,
              [refundNo, row.amount_minor, now],
            ),
          post: async (tx, updated, now) => {
            const posting = await this.ledger.refundPayout(tx, updated, refundNo, now);
            if (!posting.posted) throw new Error(`refund of ${updated.order_no} was posted without moving the order`);
          },
          event: payoutEvent,
        };
      });
      return this.view(row);
    } catch (error) {
      // A concurrent return of another order with the same refundNo committed first (the unique
      // index on the merchant's refund numbers decided); this order's row lock rules out a
      // concurrent return of the same order.
      if (sqlState(error) === UNIQUE_VIOLATION && within === undefined) {
        const applied = await this.refunded(this.db, merchantId, refundNo);
        if (applied) return this.view(applied);
      }
      throw error;
    }
  }

  /**
   * A state change of one payout through the shared helper: its row locked, the move checked
   * against PAYOUT_STATES. In a transaction of its own, or `within` the caller's (a bank file
   * applied as a whole: every change of the file commits together or none does).
   */
  private async transition(
    merchantId: bigint,
    ref: OrderRef,
    within: Queryable | undefined,
    decide: Decide<PayoutRow, PayoutStatus>,
    nonce?: RequestNonce,
  ): Promise<PayoutRow> {
    if (within === undefined) {
      return transition(this.db, PAYOUT_STATES, (tx) => this.findIn(tx, merchantId, ref, true), decide, this.now, {
        nonce,
      });
    }
    const row = await this.findIn(within, merchantId, ref, true);
    const step = await decide(row, within);
    if (step.kind === 'stay') return step.row;
    return applyMove(within, PAYOUT_STATES, row, step, new Date(this.now()));
  }

  /** Sets `assignments` ($1 is the row id, the values follow from $2) and returns the updated row. */
  private async set(tx: Queryable, row: PayoutRow, assignments: string, values: unknown[]): Promise<PayoutRow> {
    const result = await tx.query<PayoutRow>(`UPDATE payouts SET ${assignments} WHERE id = $1 RETURNING *`, [
      row.id,
      ...values,
    ]);
    return result.rows[0] as PayoutRow;
  }

  /** The payout a refundNo was applied to, if any. */
  private async refunded(q: Queryable, merchantId: bigint, refundNo: string): Promise<PayoutRow | undefined> {
    const result = await q.query<PayoutRow>('SELECT * FROM payouts WHERE merchant_id = $1 AND refund_no = $2', [
      merchantId,
      refundNo,
    ]);
    return result.rows[0];
  }

  /**
   * When the oldest confirmed payout of `channel` not yet in a batch was confirmed (channels that
   * send payouts in files, kind sepa-sftp: it opens the next batch); undefined when there is none.
   */
  async oldestUnbatched(channel: string): Promise<Date | undefined> {
    const result = await this.db.query<{ confirmed_at: Date | null }>(
      `SELECT min(confirmed_at) AS confirmed_at FROM payouts
        WHERE channel = $1 AND status = 'PROCESSING' AND channel_batch IS NULL`,
      [channel],
    );
    return result.rows[0]?.confirmed_at ?? undefined;
  }

  /** How many confirmed payouts of `channel` wait for a batch, and the oldest one's confirmation; undefined for none. */
  async unbatched(channel: string): Promise<{ readonly count: number; readonly oldest: Date } | undefined> {
    const result = await this.db.query<{ count: bigint; oldest: Date | null }>(
      `SELECT count(*) AS count, min(confirmed_at) AS oldest FROM payouts
        WHERE channel = $1 AND status = 'PROCESSING' AND channel_batch IS NULL`,
      [channel],
    );
    const row = result.rows[0];
    return row?.oldest ? { count: Number(row.count), oldest: row.oldest } : undefined;
  }

  /**
   * Assigns `batch` to every confirmed payout of `channel` not yet in a batch and confirmed by
   * `until`, inside the caller's transaction, and returns them (oldest first) with their payee.
   * The UPDATE's row locks decide between two instances closing a batch at once: the second
   * waits for the first, then finds those rows batched and leaves them, so no payout is ever in
   * two batches; a rollback (a file that failed its checks) leaves them unbatched.
   */
  async assignBatch(
    tx: Queryable,
    channel: string,
    until: Date,
    batch: string,
  ): Promise<(ChannelPayoutOrder & { readonly merchantId: bigint; readonly amountMinor: bigint })[]> {
    const result = await tx.query<PayoutRow>(
      `UPDATE payouts SET channel_batch = $3
        WHERE channel = $1 AND status = 'PROCESSING' AND channel_batch IS NULL AND confirmed_at <= $2
        RETURNING ${PAYOUT_COLUMNS}`,
      [channel, until, batch],
    );
    return result.rows
      .sort((a, b) => (a.confirmed_at?.getTime() ?? 0) - (b.confirmed_at?.getTime() ?? 0) || Number(a.id - b.id))
      .map((row) => ({
        orderNo: row.order_no,
        merchantId: row.merchant_id,
        currency: row.currency,
        amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
        amountMinor: row.amount_minor,
        payee: {
          name: row.payee_name,
          accountNumber: row.payee_account_number,
          bankCode: row.payee_bank_code ?? undefined,
          documentNumber: row.payee_document ?? undefined,
        },
      }));
  }

  /** The merchant, channel and state of an order number (channel updates); `undefined` when there is no such order. */
  servedBy(orderNo: string): Promise<ServedOrder | undefined> {
    return servedBy(this.db, 'payouts', orderNo);
  }

  /** The channels the merchant's orders went through, how many and the last when (the back office). */
  channelsUsed(merchantId: bigint) {
    return channelsUsed(this.db, 'payouts', merchantId);
  }

  /** What polling waits for at `channel` (the back office's channel health). */
  pollBacklog(channel: string) {
    return pollBacklog(this.db, 'payouts', channel, this.now());
  }

  /** A PENDING payout its channel never got (polling found nothing there): no more polls of it. */
  async stopPolling(id: bigint): Promise<void> {
    await this.db.query(`UPDATE payouts SET next_poll_at = NULL WHERE id = $1 AND status = 'PENDING'`, [id]);
  }

  /** Claims channel-routed payouts due for a status query at their channel (db/order-polls.ts says when). */
  claimDuePolls(claim: PollClaim): Promise<ClaimedPoll[]> {
    return claimDuePolls(this.db, 'payouts', claim);
  }
}

/**
 * The event a payout's final state announces: no payee identity (merchant-payment-api.md, Payout
 * order). REFUNDED carries the refund and is retried for 24 h.
 */
function payoutEvent(row: PayoutRow): NewEvent {
  if (row.status !== 'REFUNDED') {
    return orderEvent('PAYOUT', row, {
      channelTradeNo: row.channel_trade_no ?? undefined,
      attach: row.attach ?? undefined,
    });
  }
  const refunded = row.refunded_at as Date;
  return orderEvent('PAYOUT', row, refundFields(row), new Date(refunded.getTime() + REFUND_EVENT_TTL_MS));
}

function refundFields(row: PayoutRow): Pick<PayoutView, 'refundNo' | 'refundAmount' | 'refundTime'> {
  if (row.status !== 'REFUNDED' || row.refund_no === null || row.refund_amount_minor === null || !row.refunded_at)
    return {};
  return {
    refundNo: row.refund_no,
    refundAmount: formatAmount(row.refund_amount_minor, scaleOf(row.currency)),
    refundTime: row.refunded_at.getTime(),
  };
}

/**
 * Strips statement parameters and the failing row from a database error before it travels on:
 * unexpected errors are logged whole, and a payout's parameters and row hold the payee's account
 * details, which never go into a log. The SQL text (parameterized) and SQLSTATE stay.
 */
function withoutPayee(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) {
    for (const key of ['params', 'parameters', 'detail']) {
      if (key in error) delete (error as Record<string, unknown>)[key];
    }
  }
  return error;
}

function channelTradeNo(now: Date): string {
  return `CHW${now.getTime().toString(36).toUpperCase()}${randomBytes(3).toString('hex').toUpperCase()}`;
}

/** The channel's payouts of a day as transfers, and its returns (channel reconciliation). */
export async function payoutBook(q: Queryable, day: BookDay): Promise<BookRow[]> {
  const result = await q.query<BookRow>(
    `SELECT 'transfer' AS type, order_no AS reference, status, currency, amount_minor, NULL::bigint AS paid_minor,
            (finalized_at >= $2 AND finalized_at < $3 AND status IN ('SUCCEEDED', 'FAILED', 'REFUNDED')) AS in_day
       FROM payouts WHERE channel = $1 AND (order_no = ANY($4::text[]) OR (finalized_at >= $2 AND finalized_at < $3 AND status IN ('SUCCEEDED', 'FAILED', 'REFUNDED')))
     UNION ALL
     SELECT 'return', order_no, status, currency, refund_amount_minor, NULL, (refunded_at >= $2 AND refunded_at < $3)
       FROM payouts WHERE channel = $1 AND status = 'REFUNDED' AND (order_no = ANY($4::text[]) OR (refunded_at >= $2 AND refunded_at < $3))`,
    [day.channel, day.from, day.to, day.references],
  );
  return result.rows;
}

/**
 * Who moves a payout on a channel's report: the sandbox's helpers (the built-in channel), a bank
 * file (applied `within` the file's transaction), or the channel (a notification, polling, a sync).
 */
function causeOf(channel: string | null, within: Queryable | undefined): TransitionCause {
  if (within !== undefined) return 'bank_file';
  return channel === null ? 'sandbox' : 'channel';
}
