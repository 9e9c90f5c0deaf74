/**
 * Orders in the back office: the search across every merchant (by any identifier an order has),
 * its CSV export, and one order's whole story (its timeline). Declared once here: the search's
 * filters, the list's columns (the answer and the CSV alike), and the timeline's entries.
 */
import { z } from 'zod';
import type { Db } from '../../db/db.js';
import { allOrdersCursor, readAllOrdersCursor, SEARCH_MAX } from '../../db/order-search.js';
import { orderNotFound, validationFailed } from '../../errors.js';
import { formatAmount } from '../../money.js';
import { CURRENCIES, scaleOf } from '../../catalog.js';
import { unixMsParam } from '../../validation.js';
import { ordersOfFile, payoutBankStory } from '../channels/bank-files.js';
import { exchangesOf, ordersByChannelRef } from '../channels/exchanges.js';
import { notificationsOfOrder } from '../channels/notifications.js';
import type { Ledger } from '../ledger/service.js';
import type { Merchants } from '../merchants/service.js';
import { PAYMENT_STATES, PAYOUT_STATES } from '../orders/states.js';
import { transitionsOf } from '../orders/transition.js';
import type { PaymentRow, Payments } from '../payments/service.js';
import type { PayoutRow, Payouts } from '../payouts/service.js';
import type { Webhooks } from '../webhooks/service.js';
import { masked } from './masking.js';

/** What the order pages of the back office read. */
export interface BackofficeOrderServices {
  readonly db: Db;
  readonly payments: Payments;
  readonly payouts: Payouts;
  readonly merchants: Pick<Merchants, 'profiles' | 'findId'>;
  readonly ledger: Pick<Ledger, 'transactionsOf' | 'paymentCharges'>;
  readonly webhooks: Pick<Webhooks, 'ofOrder'>;
}

/** The search's filters (decisions.md: `GET /backoffice/api/orders?q=&type=&status=&from=&to=&cursor=`). */
export const orderSearchQuery = z.object({
  q: z.string().max(SEARCH_MAX).optional(),
  type: z.enum(['PAYMENT', 'PAYOUT']).optional(),
  status: z.string().max(20).optional(),
  merchant: z.string().max(100).optional(),
  currency: z.string().max(3).optional(),
  from: unixMsParam.optional(),
  to: unixMsParam.optional(),
  cursor: z.string().max(200).optional(),
  pageSize: z.coerce.number().int().min(1).max(100).optional(),
});
export const ORDER_SEARCH_PARAMETERS = Object.keys(orderSearchQuery.shape);
export type OrderSearch = z.output<typeof orderSearchQuery>;

/** One order as the search lists it (and the CSV export writes it, column for column). */
export interface OrderItem {
  readonly orderNo: string;
  readonly orderType: 'PAYMENT' | 'PAYOUT';
  readonly merchant: { readonly accessKey: string; readonly name: string };
  readonly merchantOrderNo: string;
  readonly status: string;
  readonly currency: string;
  readonly amount: string;
  readonly createdAt: number;
  /** Payments: the method; payouts: none. */
  readonly method: string | null;
  /** The channel serving it (null: the built-in sandbox channel). */
  readonly channel: string | null;
  readonly channelTradeNo: string | null;
  /** The payer (payments) or payee (payouts): documents and account numbers masked without `documents`. */
  readonly counterparty: {
    readonly name: string | null;
    readonly documentNumber: string | null;
    readonly accountNumber: string | null;
  };
}

/** The CSV export's columns, in order: each a header and how an item fills it. */
export const ORDER_CSV_COLUMNS: readonly [string, (item: OrderItem) => string | number | null][] = [
  ['orderNo', (i) => i.orderNo],
  ['orderType', (i) => i.orderType],
  ['merchant', (i) => i.merchant.accessKey],
  ['merchantName', (i) => i.merchant.name],
  ['merchantOrderNo', (i) => i.merchantOrderNo],
  ['status', (i) => i.status],
  ['currency', (i) => i.currency],
  ['amount', (i) => i.amount],
  ['createdAt', (i) => new Date(i.createdAt).toISOString()],
  ['method', (i) => i.method],
  ['channel', (i) => i.channel],
  ['channelTradeNo', (i) => i.channelTradeNo],
  ['counterpartyName', (i) => i.counterparty.name],
  ['counterpartyDocument', (i) => i.counterparty.documentNumber],
  ['counterpartyAccount', (i) => i.counterparty.accountNumber],
];

const paymentItem = (row: PaymentRow): Omit<OrderItem, 'merchant'> => ({
  orderNo: row.order_no,
  orderType: 'PAYMENT',
  merchantOrderNo: row.merchant_order_no,
  status: row.status,
  currency: row.currency,
  amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
  createdAt: row.created_at.getTime(),
  method: row.method,
  channel: row.channel,
  channelTradeNo: row.channel_trade_no,
  counterparty: { name: row.payer_name, documentNumber: row.payer_document, accountNumber: null },
});

const payoutItem = (row: PayoutRow): Omit<OrderItem, 'merchant'> => ({
  orderNo: row.order_no,
  orderType: 'PAYOUT',
  merchantOrderNo: row.merchant_order_no,
  status: row.status,
  currency: row.currency,
  amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
  createdAt: row.created_at.getTime(),
  method: null,
  channel: row.channel,
  channelTradeNo: row.channel_trade_no,
  counterparty: {
    name: row.payee_name,
    documentNumber: row.payee_document,
    accountNumber: row.payee_account_number,
  },
});

/**
 * Every merchant's orders the search finds, newest first, a page at a time: both order kinds
 * searched (each by its indexes) and merged by creation time and order number. The text also
 * finds the orders a channel's own id of them names (a Pix txid) and the payouts of the bank
 * file a MsgId names.
 */
export async function searchOrders(
  services: BackofficeOrderServices,
  search: OrderSearch,
  documents: boolean,
): Promise<{ items: OrderItem[]; nextCursor?: string }> {
  const pageSize = search.pageSize ?? 50;
  const q = search.q?.trim() ?? '';
  if (search.currency !== undefined && !CURRENCIES.has(search.currency)) {
    throw validationFailed([{ field: 'currency', message: `one of ${[...CURRENCIES.keys()].join(', ')}` }]);
  }
  let merchantId: bigint | undefined;
  if (search.merchant !== undefined) {
    merchantId = await services.merchants.findId(search.merchant);
    if (merchantId === undefined) throw validationFailed([{ field: 'merchant', message: 'no such merchant' }]);
  }
  const kinds = (['PAYMENT', 'PAYOUT'] as const).filter((kind) => search.type === undefined || search.type === kind);
  const statusesOf = (kind: 'PAYMENT' | 'PAYOUT') =>
    Object.keys(kind === 'PAYMENT' ? PAYMENT_STATES.moves : PAYOUT_STATES.moves);
  const searched = kinds.filter((kind) => search.status === undefined || statusesOf(kind).includes(search.status));
  if (searched.length === 0) {
    const statuses = [...new Set(kinds.flatMap(statusesOf))];
    throw validationFailed([{ field: 'status', message: `one of ${statuses.join(', ')}` }]);
  }
  // Identifiers other records hold: a channel's own id of an order, a bank file's MsgId.
  const orderNos =
    q === ''
      ? []
      : [...new Set((await Promise.all([ordersByChannelRef(services.db, q), ordersOfFile(services.db, q)])).flat())];
  const filters = {
    q,
    orderNos,
    merchantId,
    status: search.status,
    currency: search.currency,
    from: search.from,
    to: search.to,
    after: search.cursor === undefined ? undefined : readAllOrdersCursor(search.cursor),
    limit: pageSize + 1,
  };
  // Both kinds at once (on PostgreSQL, two connections of the pool).
  const [payments, payouts] = await Promise.all([
    searched.includes('PAYMENT') ? services.payments.searchAll(filters) : [],
    searched.includes('PAYOUT') ? services.payouts.searchAll(filters) : [],
  ]);
  const found: Omit<OrderItem, 'merchant'>[] = [];
  const merchantOf = new Map<string, bigint>();
  for (const row of payments) {
    found.push(paymentItem(row));
    merchantOf.set(row.order_no, row.merchant_id);
  }
  for (const row of payouts) {
    found.push(payoutItem(row));
    merchantOf.set(row.order_no, row.merchant_id);
  }
  found.sort((a, b) => b.createdAt - a.createdAt || (a.orderNo < b.orderNo ? 1 : a.orderNo > b.orderNo ? -1 : 0));
  const page = found.slice(0, pageSize);
  const profiles = await services.merchants.profiles([
    ...new Set(page.map((item) => merchantOf.get(item.orderNo) as bigint)),
  ]);
  const items = page.map((item) => {
    const profile = profiles.get(merchantOf.get(item.orderNo) as bigint);
    return masked({ ...item, merchant: { accessKey: profile?.accessKey ?? '', name: profile?.name ?? '' } }, documents);
  });
  const last = page.at(-1);
  return found.length > pageSize && last
    ? { items, nextCursor: allOrdersCursor(last.createdAt, last.orderNo) }
    : { items };
}

/** One entry of an order's timeline, oldest first (decisions.md: `{"at", "kind", …}`). */
export type TimelineEntry =
  | {
      readonly at: number;
      readonly kind: 'status';
      readonly from: string | null;
      readonly to: string;
      /** merchant_api, portal, channel, bank_file, sandbox, operator, expiry; null where not recorded (orders from before 2026-12). */
      readonly cause: string | null;
    }
  | {
      readonly at: number;
      readonly kind: 'event';
      readonly eventId: string;
      readonly status: string;
      readonly deliveryStatus: string;
      readonly webhookUrl: string;
      /** The event's body as sent; without `documents`, its JSON with the payer's document masked. */
      readonly body: string;
    }
  | {
      readonly at: number;
      readonly kind: 'webhook';
      readonly eventId: string;
      readonly attempt: number;
      readonly httpStatus: number | null;
      readonly error?: string;
      readonly latencyMs: number;
      readonly responseExcerpt: string | null;
    }
  | {
      readonly at: number;
      readonly kind: 'ledger';
      readonly transactionId: string;
      readonly transactionKind: string;
      readonly reference: string;
      readonly entries: readonly { account: string; owner: string; currency: string; amount: string }[];
    }
  | {
      readonly at: number;
      readonly kind: 'channel';
      readonly direction: 'sent';
      readonly channel: string;
      readonly operation: string;
      readonly sent: unknown;
      readonly answered?: unknown;
      readonly error?: string;
      readonly latencyMs: number;
    }
  | {
      readonly at: number;
      readonly kind: 'channel';
      readonly direction: 'received';
      readonly channel: string;
      readonly operation: 'notification';
      readonly eventId: string;
      readonly outcome: string;
      readonly detail: string | null;
      /** The notification's body as received (left out without `documents`: it may name the payer). */
      readonly body?: string;
    }
  | {
      readonly at: number;
      readonly kind: 'bank_file';
      readonly channel: string;
      readonly msgId: string;
      readonly name: string;
      readonly state: string;
      readonly groupStatus: string | null;
      readonly transactions: number;
      readonly controlSum: string;
    }
  | {
      readonly at: number;
      readonly kind: 'bank_status';
      readonly msgId: string;
      readonly status: string | null;
      readonly reason: string | null;
      readonly returnReference: string | null;
    };

/**
 * One order's whole story: the order as the merchant's query answers it, its merchant, and its
 * timeline (every state change with its cause, every exchange with the channel and notification
 * from it, every event and delivery attempt, every ledger transaction, and for a payout sent by
 * file the bank file and the bank's status of it), oldest first. ORDER_NOT_FOUND for no such order.
 */
export async function orderStory(services: BackofficeOrderServices, orderNo: string, documents: boolean) {
  const kind = /^P[0-9]{18}$/.test(orderNo) ? 'PAYMENT' : /^W[0-9]{18}$/.test(orderNo) ? 'PAYOUT' : undefined;
  if (kind === undefined) throw orderNotFound();
  const served =
    kind === 'PAYMENT' ? await services.payments.servedBy(orderNo) : await services.payouts.servedBy(orderNo);
  if (!served) throw orderNotFound();
  const merchantId = served.merchantId;
  const profile = (await services.merchants.profiles([merchantId])).get(merchantId);
  const merchant = {
    accessKey: profile?.accessKey ?? '',
    name: profile?.name ?? '',
    disabled: profile?.disabled ?? false,
  };

  const timeline: TimelineEntry[] = [];
  let order: Record<string, unknown>;
  let extra: Record<string, unknown>;
  let createdAt: number;
  let fallback: TimelineEntry[] = [];
  if (kind === 'PAYMENT') {
    const row = await services.payments.row(merchantId, { orderNo });
    const view = services.payments.view(row);
    order = { ...view };
    createdAt = view.createdAt;
    extra = {
      charges: await services.ledger.paymentCharges(row),
      failureReason: row.status === 'FAILED' ? row.failure_reason : null,
      channel: row.channel,
    };
    if (row.finalized_at !== null) {
      fallback = [{ at: row.finalized_at.getTime(), kind: 'status', from: null, to: row.status, cause: null }];
    }
  } else {
    const row = await services.payouts.row(merchantId, { orderNo });
    const view = services.payouts.view(row);
    order = { ...view };
    createdAt = view.createdAt;
    const bank = await payoutBankStory(services.db, orderNo);
    extra = { receipt: services.payouts.receiptOf(row), channel: row.channel, ...(bank ? { bankFile: bank } : {}) };
    if (bank) {
      timeline.push({
        at: bank.uploadedAt ?? bank.createdAt,
        kind: 'bank_file',
        channel: bank.channel,
        msgId: bank.msgId,
        name: bank.name,
        state: bank.state,
        groupStatus: bank.groupStatus,
        transactions: bank.transactions,
        controlSum: bank.controlSum,
      });
      if (bank.bankStatus !== null || bank.returnReference !== null) {
        timeline.push({
          at: bank.bankStatusAt ?? bank.acknowledgedAt ?? bank.createdAt,
          kind: 'bank_status',
          msgId: bank.msgId,
          status: bank.bankStatus,
          reason: bank.bankReason,
          returnReference: bank.returnReference,
        });
      }
    }
    fallback = [
      ...(row.confirmed_at === null
        ? []
        : [
            { at: row.confirmed_at.getTime(), kind: 'status', from: 'PENDING', to: 'PROCESSING', cause: null } as const,
          ]),
      ...(row.finalized_at === null
        ? []
        : [{ at: row.finalized_at.getTime(), kind: 'status', from: null, to: row.status, cause: null } as const]),
    ];
  }

  // Created by the merchant's API (the only way an order comes to be), then every recorded move.
  timeline.push({ at: createdAt, kind: 'status', from: null, to: 'PENDING', cause: 'merchant_api' });
  const moves = await transitionsOf(services.db, orderNo);
  if (moves.length === 0) timeline.push(...fallback);
  for (const move of moves)
    timeline.push({ at: move.at, kind: 'status', from: move.from, to: move.to, cause: move.cause });

  for (const exchange of await exchangesOf(services.db, orderNo)) {
    timeline.push({
      at: exchange.at,
      kind: 'channel',
      direction: 'sent',
      channel: exchange.channel,
      operation: exchange.operation,
      sent: exchange.sent,
      ...(exchange.answered === undefined ? {} : { answered: exchange.answered }),
      ...(exchange.error === undefined ? {} : { error: exchange.error }),
      latencyMs: exchange.latencyMs,
    });
  }
  for (const notification of await notificationsOfOrder(services.db, orderNo)) {
    timeline.push({
      at: notification.receivedAt,
      kind: 'channel',
      direction: 'received',
      channel: notification.channel,
      operation: 'notification',
      eventId: notification.eventId,
      outcome: notification.outcome,
      detail: notification.detail,
      ...(documents ? { body: notification.body } : {}),
    });
  }
  const events = await services.webhooks.ofOrder(merchantId, kind, orderNo);
  for (const event of events) {
    timeline.push({
      at: event.createdAt,
      kind: 'event',
      eventId: event.eventId,
      status: event.status,
      deliveryStatus: event.deliveryStatus,
      webhookUrl: event.webhookUrl,
      body: documents ? event.body : maskedBody(event.body),
    });
    for (const attempt of event.attemptLog) {
      timeline.push({
        at: attempt.startedAt,
        kind: 'webhook',
        eventId: event.eventId,
        attempt: attempt.attempt,
        httpStatus: attempt.statusCode,
        ...(attempt.error === null ? {} : { error: attempt.error }),
        latencyMs: attempt.latencyMs,
        responseExcerpt: attempt.responseExcerpt,
      });
    }
  }
  for (const transaction of await services.ledger.transactionsOf(orderNo)) {
    timeline.push({
      at: transaction.at,
      kind: 'ledger',
      transactionId: transaction.transactionId,
      transactionKind: transaction.kind,
      reference: transaction.reference,
      entries: transaction.entries,
    });
  }
  // Oldest first; entries of one instant keep the order they were gathered in (the state first).
  const ordered = timeline
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at - b.entry.at || a.index - b.index);
  return masked(
    {
      ...order,
      orderType: kind,
      merchant,
      ...extra,
      timeline: ordered.map(({ entry }) => entry),
    },
    documents,
  );
}

/** An event body with its documents masked (for the roles that see them masked): its JSON rewritten. */
function maskedBody(body: string): string {
  try {
    return JSON.stringify(masked(JSON.parse(body) as unknown, false));
  } catch {
    return body;
  }
}
