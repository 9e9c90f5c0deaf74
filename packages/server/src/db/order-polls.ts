import type { Queryable } from './db.js';

/** An order as the channel layer looks it up by order number (notifications, `syncOrder`). */
export interface ServedOrder {
  readonly merchantId: bigint;
  /** The channel that serves it; null for the built-in sandbox channel. */
  readonly channel: string | null;
  readonly status: string;
  readonly channelTradeNo: string | null;
}

/** An order number's merchant, channel and state (`undefined`: no such order). */
export async function servedBy(
  db: Queryable,
  table: 'payments' | 'payouts',
  orderNo: string,
): Promise<ServedOrder | undefined> {
  const result = await db.query<{
    merchant_id: bigint;
    channel: string | null;
    status: string;
    channel_trade_no: string | null;
  }>(`SELECT merchant_id, channel, status, channel_trade_no FROM ${table} WHERE order_no = $1`, [orderNo]);
  const row = result.rows[0];
  return (
    row && {
      merchantId: row.merchant_id,
      channel: row.channel,
      status: row.status,
      channelTradeNo: row.channel_trade_no,
    }
  );
}

/** The order number of an open (PENDING or PROCESSING) order of `channel` with that channel id. */
export async function openByChannelTradeNo(
  db: Queryable,
  table: 'payments' | 'payouts',
  channel: string,
  channelTradeNo: string,
): Promise<string | undefined> {
  const result = await db.query<{ order_no: string }>(
    `SELECT order_no FROM ${table} WHERE channel = $1 AND channel_trade_no = $2 AND status IN ('PENDING', 'PROCESSING')`,
    [channel, channelTradeNo],
  );
  return result.rows[0]?.order_no;
}

/** A channel-routed order claimed for a status query at its channel. */
export interface ClaimedPoll {
  id: bigint;
  order_no: string;
  merchant_id: bigint;
  channel: string;
  channel_trade_no: string | null;
  status: string;
  /** Payments: PENDING and past its expiry, so it is withdrawn at its channel instead of queried. */
  expired: boolean;
}

/** When orders are due for a poll and how far their next poll is pushed out. */
export interface PollClaim {
  readonly now: Date;
  /** PAYGATE_CHANNEL_POLL_AFTER: first poll this long after the order reached its channel; the backoff's first step. */
  readonly pollAfterMs: number;
  readonly maxBackoffMs: number;
  readonly limit: number;
  /** Payouts: how long after it SUCCEEDED a payout is still asked about (a return may come later). */
  readonly returnWindowMs: number;
}

/**
 * Claims due orders of one order table and pushes their next poll out, in one statement: SKIP
 * LOCKED lets several workers share the work, and the new next_poll_at is both the lease (another
 * worker does not take the order meanwhile) and the per-order backoff, doubling with each
 * attempt from `pollAfterMs` up to `maxBackoffMs`. An order is first due `pollAfterMs` after it
 * reached its channel (payments: created; payouts: confirmed). Called by the module owning
 * `table` (payments, payouts), which names its own table.
 *
 * Payments: a PENDING payment is also due at its expiry (the backoff never carries its next poll
 * past it), when it is withdrawn at its channel rather than queried. Payouts: a PENDING payout
 * is polled only when a confirm could not tell whether the channel took it (next_poll_at set by
 * the confirm that met a channel down): the channel's answer decides. A SUCCEEDED payout is
 * still polled for `returnWindowMs` after it succeeded: a return can come days later, and its
 * notification may never come.
 */
export async function claimDuePolls(
  db: Queryable,
  table: 'payments' | 'payouts',
  claim: PollClaim,
): Promise<ClaimedPoll[]> {
  const payments = table === 'payments';
  const backoff = `$1::timestamptz + LEAST($2::float8 * power(2, LEAST(poll_attempts, 30)), $3::float8) * interval '1 millisecond'`;
  const next = payments
    ? `CASE WHEN status = 'PENDING' AND expires_at > $1 THEN LEAST(${backoff}, expires_at) ELSE ${backoff} END`
    : backoff;
  const firstDue = payments
    ? `LEAST(created_at + $2::float8 * interval '1 millisecond', CASE WHEN status = 'PENDING' THEN expires_at END)`
    : `COALESCE(confirmed_at, finalized_at) + $2::float8 * interval '1 millisecond'`;
  const open = payments
    ? `status IN ('PENDING', 'PROCESSING')`
    : `(status = 'PROCESSING' OR (status = 'PENDING' AND next_poll_at IS NOT NULL)
        OR (status = 'SUCCEEDED' AND finalized_at > $1::timestamptz - $5::float8 * interval '1 millisecond'))`;
  const expired = payments ? `(status = 'PENDING' AND expires_at <= $1)` : 'false';
  const result = await db.query<ClaimedPoll>(
    `UPDATE ${table} SET poll_attempts = poll_attempts + 1, next_poll_at = ${next}
      WHERE id IN (
        SELECT id FROM ${table}
         WHERE ${open} AND channel IS NOT NULL
           AND COALESCE(next_poll_at, ${firstDue}) <= $1::timestamptz
         ORDER BY COALESCE(next_poll_at, ${firstDue}) LIMIT $4
           FOR UPDATE SKIP LOCKED)
      RETURNING id, order_no, merchant_id, channel, channel_trade_no, status, ${expired} AS expired`,
    [claim.now, claim.pollAfterMs, claim.maxBackoffMs, claim.limit, ...(payments ? [] : [claim.returnWindowMs])],
  );
  return result.rows;
}

/**
 * What polling waits for at `channel`: its open orders (PENDING or PROCESSING) that polling will
 * ask about, how many are due now, and the next and the oldest of them (the back office's
 * channel health).
 */
export async function pollBacklog(
  db: Queryable,
  table: 'payments' | 'payouts',
  channel: string,
  now: number,
): Promise<{ open: number; due: number; nextPollAt: number | null; oldestOpenSince: number | null }> {
  const result = await db.query<{ open: bigint; due: bigint; next: Date | null; oldest: Date | null }>(
    `SELECT count(*)::bigint AS open, count(*) FILTER (WHERE next_poll_at <= $2)::bigint AS due,
            min(next_poll_at) AS next, min(created_at) AS oldest
       FROM ${table} WHERE channel = $1 AND status IN ('PENDING', 'PROCESSING') AND next_poll_at IS NOT NULL`,
    [channel, new Date(now)],
  );
  const row = result.rows[0];
  return {
    open: Number(row?.open ?? 0),
    due: Number(row?.due ?? 0),
    nextPollAt: row?.next?.getTime() ?? null,
    oldestOpenSince: row?.oldest?.getTime() ?? null,
  };
}
