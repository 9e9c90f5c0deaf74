import { createHash } from 'node:crypto';
import type { Db } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { type ApplyOutcome, applyUpdate, type ChannelServices } from './apply.js';
import { ChannelUnavailable, type Connector, type RawNotification } from './connector.js';

/**
 * Headers kept with a notification for audit: authentication, content type, and what an edge
 * terminating a callback's mTLS says of the client and its certificate; nothing else.
 */
const KEPT_HEADERS = [
  'psp-timestamp',
  'psp-nonce',
  'psp-signature',
  'content-type',
  'user-agent',
  'x-forwarded-for',
  'x-client-cert-subject',
];

/** A recorded notification as the operator API shows it. */
export interface NotificationRecord {
  id: string;
  channel: string;
  eventId: string;
  receivedAt: number;
  orderNo: string | null;
  outcome: string;
  detail: string | null;
  appliedAt: number | null;
  headers: Record<string, string>;
  /** The body as received (UTF-8). */
  body: string;
}

/** What the notification endpoint answers. */
export type ReceiveResult =
  | { readonly ok: true; readonly outcome: ApplyOutcome | 'duplicate' | 'ignored' }
  | { readonly ok: false; readonly code: 'UNAUTHORIZED' | 'VALIDATION_FAILED'; readonly reason: string };

let received = 0;

/**
 * Receives one notification: authenticate (constant time, timestamp window, nonce recorded in
 * the database so a replay is refused on every instance), record it raw (the unique (channel,
 * event id) index decides whether it was seen before), apply its updates through `applyUpdate`,
 * then mark the outcome. A repeat of an event already applied answers 200 and changes nothing; a
 * repeat of one recorded but never marked (the instance died in between) is applied again, which
 * the state machine makes harmless. An unknown order reference is kept for investigation and
 * answered 200 so the channel stops retrying.
 */
export async function receiveNotification(
  services: ChannelServices,
  connector: Connector,
  raw: RawNotification,
): Promise<ReceiveResult> {
  const now = services.now();
  const check = connector.verifyNotification(raw, now);
  if (!check.ok) return { ok: false, code: check.code, reason: check.reason };
  if (check.nonce) {
    const fresh = await services.db.query(
      `INSERT INTO channel_nonces (channel, nonce, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING nonce`,
      [connector.name, check.nonce.value, new Date(check.nonce.expiresAt)],
    );
    if (fresh.rows.length === 0) return { ok: false, code: 'UNAUTHORIZED', reason: 'replayed_nonce' };
    // Spent nonces leave once their timestamp is out of the window; now and then is enough.
    if (++received % 100 === 0) {
      await services.db.query('DELETE FROM channel_nonces WHERE expires_at < $1', [new Date(now)]);
    }
  }
  const headers = keptHeaders(raw);
  const orderNo = check.updates[0]?.reference.slice(0, 64) ?? null;
  const inserted = await services.db.query<{ id: bigint }>(
    `INSERT INTO channel_notifications (channel, event_id, received_at, headers, body, order_no)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (channel, event_id) DO NOTHING RETURNING id`,
    [connector.name, check.eventId, new Date(now), JSON.stringify(headers), raw.body, orderNo],
  );
  let id = inserted.rows[0]?.id;
  if (id === undefined) {
    const existing = await services.db.query<{ id: bigint; outcome: string }>(
      'SELECT id, outcome FROM channel_notifications WHERE channel = $1 AND event_id = $2',
      [connector.name, check.eventId],
    );
    const row = existing.rows[0];
    if (!row || row.outcome !== 'received') return { ok: true, outcome: 'duplicate' };
    id = row.id;
  }
  let outcome: ApplyOutcome = 'ignored';
  let detail: string | undefined =
    check.updates.length === 0 ? 'no change to apply (still open at the channel)' : undefined;
  for (const update of check.updates) {
    const result = await applyUpdate(services, connector.name, update);
    outcome = result.outcome;
    detail = result.detail;
  }
  await services.db.query('UPDATE channel_notifications SET outcome = $2, detail = $3, applied_at = $4 WHERE id = $1', [
    id,
    outcome,
    detail ?? null,
    new Date(services.now()),
  ]);
  return { ok: true, outcome };
}

function keptHeaders(raw: RawNotification): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = raw.headers[name];
    if (typeof value === 'string') headers[name] = value.slice(0, 512);
  }
  return headers;
}

/** What recording a hint came to: the charges it names, to be asked about (`settleHint`). */
export type HintReceipt =
  | { readonly ok: true; readonly id: bigint; readonly tradeNos: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/**
 * Records a callback that is only a hint (a connector with `readHint`, kind pix-api) raw, once
 * per distinct body (its SHA-256 is the event id: a provider's repeat is recorded once). Nothing
 * in it is trusted: `settleHint` asks the channel about each charge it names. A body that is
 * not such a callback is recorded too, as `ignored` with the reason.
 */
export async function recordHint(
  services: ChannelServices,
  connector: Connector,
  raw: RawNotification,
): Promise<HintReceipt> {
  const check = connector.readHint?.(raw.body) ?? { ok: false as const, reason: 'the channel takes no hints' };
  const eventId = `hint:${createHash('sha256').update(raw.body).digest('base64url')}`;
  const now = new Date(services.now());
  const inserted = await services.db.query<{ id: bigint }>(
    `INSERT INTO channel_notifications (channel, event_id, received_at, headers, body, outcome, detail, applied_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (channel, event_id) DO NOTHING RETURNING id`,
    [
      connector.name,
      eventId,
      now,
      JSON.stringify(keptHeaders(raw)),
      raw.body,
      check.ok ? 'received' : 'ignored',
      check.ok ? null : check.reason,
      check.ok ? null : now,
    ],
  );
  if (!check.ok) return check;
  let id = inserted.rows[0]?.id;
  if (id === undefined) {
    const existing = await services.db.query<{ id: bigint }>(
      'SELECT id FROM channel_notifications WHERE channel = $1 AND event_id = $2',
      [connector.name, eventId],
    );
    id = existing.rows[0]?.id ?? 0n;
  }
  return { ok: true, id, tradeNos: check.tradeNos };
}

/**
 * Settles what a recorded hint names, from the channel's answers alone: only charges of this
 * platform's own open orders on that channel are asked about (any other id, a forged one
 * included, costs one indexed read and no call to the channel), each through `queryPayment`
 * (which asks at most once at a time per charge), and the answer goes through `applyUpdate`
 * like any notification. A channel that does not answer leaves the order to polling.
 */
export async function settleHint(
  services: ChannelServices,
  connector: Connector,
  receipt: Extract<HintReceipt, { ok: true }>,
): Promise<ApplyOutcome | 'ignored'> {
  let outcome: ApplyOutcome | 'ignored' = 'ignored';
  let detail: string | undefined = 'no open charge of this platform named';
  let orderNo: string | undefined;
  for (const tradeNo of receipt.tradeNos) {
    const open = await services.payments.openByChannelTradeNo(connector.name, tradeNo);
    if (open === undefined) continue;
    orderNo ??= open;
    let state;
    try {
      state = await connector.queryPayment({ orderNo: open, channelTradeNo: tradeNo });
    } catch (error) {
      if (!(error instanceof ChannelUnavailable)) throw error;
      detail = `${error.message}; polling settles it`;
      continue;
    }
    if (!state) {
      detail = 'still open at the channel';
      continue;
    }
    const result = await applyUpdate(services, connector.name, {
      ...state,
      kind: 'payment',
      reference: open,
      eventId: `cob:${tradeNo}:${state.status}`,
    });
    outcome = result.outcome;
    detail = result.detail;
  }
  await services.db.query(
    `UPDATE channel_notifications SET outcome = $2, detail = $3, applied_at = $4, order_no = COALESCE(order_no, $5)
      WHERE id = $1`,
    [receipt.id, outcome, detail ?? null, new Date(services.now()), orderNo ?? null],
  );
  return outcome;
}

/** The newest `limit` notifications of a channel, newest first (operator API, `paygate channels notifications`). */
export async function listNotifications(
  services: ChannelServices,
  channel: string,
  limit = 100,
): Promise<NotificationRecord[]> {
  const result = await services.db.query<{
    id: bigint;
    channel: string;
    event_id: string;
    received_at: Date;
    headers: string;
    body: Uint8Array;
    order_no: string | null;
    outcome: string;
    detail: string | null;
    applied_at: Date | null;
  }>(
    `SELECT id, channel, event_id, received_at, headers, body, order_no, outcome, detail, applied_at
       FROM channel_notifications WHERE channel = $1 ORDER BY id DESC LIMIT $2`,
    [channel, limit],
  );
  return result.rows.map((row) => ({
    id: row.id.toString(),
    channel: row.channel,
    eventId: row.event_id,
    receivedAt: row.received_at.getTime(),
    orderNo: row.order_no,
    outcome: row.outcome,
    detail: row.detail,
    appliedAt: row.applied_at?.getTime() ?? null,
    headers: JSON.parse(row.headers) as Record<string, string>,
    body: Buffer.from(row.body).toString('utf8'),
  }));
}

/**
 * The embedded database only: vacuums the channel nonces (purged as they expire) and the
 * notifications (each updated once applied) when they have dead rows (see vacuumTable).
 */
export function vacuumNotifications(db: Db): Promise<Vacuumed[]> {
  return vacuumTables(db, ['channel_nonces', 'channel_notifications']);
}

/** The notifications a channel sent about one order, oldest first (the order's story). */
export async function notificationsOfOrder(
  db: Pick<Db, 'query'>,
  orderNo: string,
): Promise<
  { channel: string; eventId: string; receivedAt: number; outcome: string; detail: string | null; body: string }[]
> {
  const rows = await db.query<{
    channel: string;
    event_id: string;
    received_at: Date;
    outcome: string;
    detail: string | null;
    body: Uint8Array;
  }>(
    `SELECT channel, event_id, received_at, outcome, detail, body FROM channel_notifications
      WHERE order_no = $1 ORDER BY id LIMIT 500`,
    [orderNo],
  );
  return rows.rows.map((r) => ({
    channel: r.channel,
    eventId: r.event_id,
    receivedAt: r.received_at.getTime(),
    outcome: r.outcome,
    detail: r.detail,
    body: Buffer.from(r.body).toString('utf8').slice(0, 8_192),
  }));
}
