/**
 * Every exchange with a channel, recorded once for every kind: the registry wraps each configured
 * connector (`recorded`), so each call the platform makes for an order (register a payment, ask
 * about it, withdraw it, send a payout, release it, ask about it) is kept with what was sent and
 * what was answered, in the platform's terms. Connectors are handed orders and answer states:
 * neither holds a channel's settings, so no credential is ever in a record. The back office
 * shows them on the order's timeline; they are kept EXCHANGES_KEPT_MS.
 */
import type { Db, Queryable } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import type { Connector } from './connector.js';

/** How long exchanges are kept (the sweeper purges older ones). */
export const EXCHANGES_KEPT_MS = 30 * 86_400_000;
/** What a record keeps of one side of an exchange at most (a payer's code is some hundreds of bytes). */
const MAX_RECORDED = 8_192;

/** One exchange with a channel, as the back office's timeline shows it. */
export interface ChannelExchange {
  readonly at: number;
  readonly channel: string;
  readonly operation: string;
  /** What the platform sent (the order as the connector was given it). */
  readonly sent: unknown;
  /** What the channel answered, in the platform's terms (undefined: nothing final or new). */
  readonly answered?: unknown;
  /** Why the call failed (the channel unreachable, or an answer that could not be used). */
  readonly error?: string;
  readonly latencyMs: number;
}

const text = (value: unknown): string => {
  const json = JSON.stringify(value ?? null);
  return json.length > MAX_RECORDED ? `${json.slice(0, MAX_RECORDED)}…` : json;
};

/** The channel's own id of an order, when an answer carries one. */
const tradeNoOf = (answer: unknown): string | undefined => {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const direct = (answer as { channelTradeNo?: unknown }).channelTradeNo;
  if (typeof direct === 'string') return direct;
  const state = (answer as { state?: { channelTradeNo?: unknown } }).state;
  return typeof state?.channelTradeNo === 'string' ? state.channelTradeNo : undefined;
};

/**
 * `connector` with each order call recorded in `channel_exchanges` (and the channel's ids of the
 * order in `channel_order_refs`). Recording never changes the call: its answer or its error is
 * passed on as it was; a record that cannot be written is left out.
 */
export function recorded(connector: Connector, db: Db, now: () => number): Connector {
  const record = async (orderNo: string, operation: string, sent: unknown, started: number, outcome: Outcome) => {
    const at = now();
    try {
      await db.query(
        `INSERT INTO channel_exchanges (channel, order_no, operation, sent, answered, error, latency_ms, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          connector.name,
          orderNo,
          operation,
          text(sent),
          outcome.ok ? text(outcome.answer) : null,
          outcome.ok ? null : outcome.error.slice(0, 1_000),
          Math.max(0, Math.round(performance.now() - started)),
          new Date(at),
        ],
      );
      const tradeNo = outcome.ok ? tradeNoOf(outcome.answer) : undefined;
      if (tradeNo !== undefined && tradeNo !== orderNo) {
        await db.query('INSERT INTO channel_order_refs (ref, order_no) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
          tradeNo,
          orderNo,
        ]);
      }
    } catch {
      // The story of an order is kept for people: it never fails the call it describes.
    }
  };
  const around =
    <A extends { orderNo: string }, R>(operation: string, call: (arg: A) => Promise<R>) =>
    async (arg: A): Promise<R> => {
      const started = performance.now();
      try {
        const answer = await call(arg);
        await record(arg.orderNo, operation, arg, started, { ok: true, answer });
        return answer;
      } catch (error) {
        await record(arg.orderNo, operation, arg, started, { ok: false, error: (error as Error).message });
        throw error;
      }
    };
  // Connectors are plain objects (each kind's factory builds one): the copy keeps every member,
  // a kind's own ones included (sepa-sftp's file loop), and replaces the order calls.
  return {
    ...connector,
    createPayment: around('createPayment', connector.createPayment.bind(connector)),
    queryPayment: around('queryPayment', connector.queryPayment.bind(connector)),
    createPayout: around('createPayout', connector.createPayout.bind(connector)),
    releasePayout: around('releasePayout', connector.releasePayout.bind(connector)),
    queryPayout: around('queryPayout', connector.queryPayout.bind(connector)),
    ...(connector.cancelPayment
      ? { cancelPayment: around('cancelPayment', connector.cancelPayment.bind(connector)) }
      : {}),
  };
}

type Outcome = { readonly ok: true; readonly answer: unknown } | { readonly ok: false; readonly error: string };

/** An order's exchanges with its channel, oldest first. */
export async function exchangesOf(db: Queryable, orderNo: string): Promise<ChannelExchange[]> {
  const rows = await db.query<{
    at: Date;
    channel: string;
    operation: string;
    sent: string;
    answered: string | null;
    error: string | null;
    latency_ms: number;
  }>(
    'SELECT at, channel, operation, sent, answered, error, latency_ms FROM channel_exchanges WHERE order_no = $1 ORDER BY id',
    [orderNo],
  );
  return rows.rows.map((r) => ({
    at: r.at.getTime(),
    channel: r.channel,
    operation: r.operation,
    sent: parseRecorded(r.sent),
    ...(r.answered === null ? {} : { answered: parseRecorded(r.answered) }),
    ...(r.error === null ? {} : { error: r.error }),
    latencyMs: r.latency_ms,
  }));
}

const parseRecorded = (value: string): unknown => {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

/**
 * Of `orderNos`, those whose registration at `channel` failed: a payment create that answered
 * CHANNEL_UNAVAILABLE removes the order it made, yet a channel that was slow, not down, may have
 * made the charge after the platform stopped waiting. Reconciliation tells such a charge from one
 * the platform never asked for (as long as the exchanges are kept, EXCHANGES_KEPT_MS).
 */
export async function failedRegistrations(
  db: Queryable,
  channel: string,
  orderNos: readonly string[],
): Promise<Set<string>> {
  if (orderNos.length === 0) return new Set();
  const rows = await db.query<{ order_no: string }>(
    `SELECT DISTINCT order_no FROM channel_exchanges
      WHERE channel = $1 AND operation = 'createPayment' AND error IS NOT NULL AND order_no = ANY($2::text[])`,
    [channel, orderNos],
  );
  return new Set(rows.rows.map((r) => r.order_no));
}

/** The orders a channel's own id names (a Pix charge's txid). */
export async function ordersByChannelRef(db: Queryable, ref: string): Promise<string[]> {
  const rows = await db.query<{ order_no: string }>(
    'SELECT order_no FROM channel_order_refs WHERE ref = $1 LIMIT 100',
    [ref],
  );
  return rows.rows.map((r) => r.order_no);
}

/** A channel's exchanges since `since`: for its health (calls, errors, the last success and error in that time). */
export async function exchangeHealth(
  db: Queryable,
  channel: string,
  since: number,
): Promise<{ calls: number; errors: number; lastSuccessAt: number | null; lastErrorAt: number | null }> {
  const rows = await db.query<{ calls: bigint; errors: bigint; last_ok: Date | null; last_error: Date | null }>(
    `SELECT count(*)::bigint AS calls, count(error)::bigint AS errors,
            max(at) FILTER (WHERE error IS NULL) AS last_ok, max(at) FILTER (WHERE error IS NOT NULL) AS last_error
       FROM channel_exchanges WHERE channel = $1 AND at >= $2`,
    [channel, new Date(since)],
  );
  const row = rows.rows[0];
  return {
    calls: Number(row?.calls ?? 0),
    errors: Number(row?.errors ?? 0),
    lastSuccessAt: row?.last_ok?.getTime() ?? null,
    lastErrorAt: row?.last_error?.getTime() ?? null,
  };
}

/** Deletes exchanges older than EXCHANGES_KEPT_MS; answers how many. */
export async function purgeExchanges(db: Queryable, now: number): Promise<number> {
  const purged = await db.query('DELETE FROM channel_exchanges WHERE at < $1', [new Date(now - EXCHANGES_KEPT_MS)]);
  return purged.rowCount;
}

/** The embedded database only: vacuums the exchanges (purged as they age) when they have dead rows. */
export function vacuumExchanges(db: Db): Promise<Vacuumed[]> {
  return vacuumTables(db, ['channel_exchanges']);
}
