import type { PortalAuditEntry } from '@paygate/wire';
import type { Db, Queryable } from '../../db/db.js';
import { canonicalJson, entryHash, GENESIS_HASH } from './chain.js';

/**
 * Who made a change: a portal user (by email), an operator (by email when signed in to the back
 * office; without one for the host's token-based command line), or the platform itself.
 */
export type AuditActor =
  | { readonly kind: 'user'; readonly email: string }
  | { readonly kind: 'operator'; readonly email?: string }
  | { readonly kind: 'system' };

/** Where a change came from: its actor, and the request that carried it, if any. */
export interface AuditContext {
  readonly actor: AuditActor;
  /** The client address. */
  readonly ip?: string | undefined;
  readonly requestId?: string | undefined;
}

/** One change to record. */
export interface AuditRecord {
  /** What was done, as `noun.verb` (`key.added`, `person.removed`, `signin.failed`). */
  readonly action: string;
  /** The merchant's access key, or null for a platform-wide change. */
  readonly merchant: string | null;
  /** What it was done to: a key id, an order number, an event id, an email. */
  readonly object?: string | undefined;
  /** Anything else worth keeping (kept as canonical JSON). */
  readonly detail?: Readonly<Record<string, unknown>> | undefined;
}

/** Filters of a listing; all optional. */
export interface AuditFilters {
  readonly merchant?: string | undefined;
  readonly actorKind?: AuditActor['kind'] | undefined;
  readonly actorEmail?: string | undefined;
  readonly action?: string | undefined;
  /** Unix ms, inclusive. */
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  /** At most this many, the newest ones (still answered oldest first). */
  readonly limit?: number | undefined;
}

/** The outcome of walking the chain. */
export type AuditVerification =
  | { readonly ok: true; readonly checked: number }
  | {
      readonly ok: false;
      readonly checked: number;
      /** The first entry that breaks the chain: its hash is not that of its fields, or its prev_hash not its predecessor's. */
      readonly broken: { readonly id: string; readonly at: string; readonly action: string; readonly reason: string };
    };

interface AuditRow {
  id: bigint;
  at: Date;
  actor_kind: AuditActor['kind'];
  actor_email: string | null;
  action: string;
  merchant: string | null;
  object: string | null;
  detail: string | null;
  ip: string | null;
  request_id: string | null;
  prev_hash: Uint8Array;
  hash: Uint8Array;
}

/** Any fixed number: serializes the writers of the trail so each entry chains to the one before. */
const AUDIT_LOCK = 3_808_001;
/** Entries `verify` reads per statement. */
const VERIFY_BATCH = 1_000;

const fieldsOf = (row: Omit<AuditRow, 'prev_hash' | 'hash'>) => ({
  id: row.id,
  at: row.at,
  actorKind: row.actor_kind,
  actorEmail: row.actor_email,
  action: row.action,
  merchant: row.merchant,
  object: row.object,
  detail: row.detail,
  ip: row.ip,
  requestId: row.request_id,
});

/**
 * The audit trail: an append-only, hash-chained table of every change. Writers call `record`
 * inside the transaction that makes the change, so the entry and the change commit together or
 * not at all.
 */
export class Audit {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Appends an entry inside `tx`. The trail's lock (held to the end of `tx`) orders the writers:
   * the entry before is read after it is taken, so concurrent transactions chain one after the
   * other, never both onto the same predecessor.
   */
  async record(tx: Queryable, context: AuditContext, record: AuditRecord): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_LOCK]);
    const last = await tx.query<{ id: bigint; hash: Uint8Array }>(
      'SELECT id, hash FROM audit_entries ORDER BY id DESC LIMIT 1',
    );
    const previous = last.rows[0];
    const prevHash = previous?.hash ?? GENESIS_HASH;
    const row = {
      id: (previous?.id ?? 0n) + 1n,
      at: new Date(this.now()),
      actor_kind: context.actor.kind,
      actor_email: context.actor.kind === 'system' ? null : (context.actor.email ?? null),
      action: record.action,
      merchant: record.merchant,
      object: record.object ?? null,
      detail: record.detail === undefined ? null : canonicalJson(record.detail),
      ip: context.ip ?? null,
      request_id: context.requestId ?? null,
    };
    await tx.query(
      `INSERT INTO audit_entries (id, at, actor_kind, actor_email, action, merchant, object, detail, ip, request_id, prev_hash, hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        row.id,
        row.at,
        row.actor_kind,
        row.actor_email,
        row.action,
        row.merchant,
        row.object,
        row.detail,
        row.ip,
        row.request_id,
        prevHash,
        entryHash(prevHash, fieldsOf(row)),
      ],
    );
  }

  /** Records `record` in a transaction of its own (a change that has none, such as a refused sign-in). */
  recordAlone(context: AuditContext, record: AuditRecord): Promise<void> {
    return this.db.transaction((tx) => this.record(tx, context, record));
  }

  /** Entries matching `filters`, oldest first (the newest `limit` of them when a limit is given). */
  async list(filters: AuditFilters = {}): Promise<PortalAuditEntry[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where.push(clause.replace('?', `$${params.length}`));
    };
    if (filters.merchant !== undefined) add('merchant = ?', filters.merchant);
    if (filters.actorKind !== undefined) add('actor_kind = ?', filters.actorKind);
    if (filters.actorEmail !== undefined) add('actor_email = ?', filters.actorEmail);
    if (filters.action !== undefined) add('action = ?', filters.action);
    if (filters.from !== undefined) add('at >= ?', new Date(filters.from));
    if (filters.to !== undefined) add('at <= ?', new Date(filters.to));
    let limit = '';
    if (filters.limit !== undefined) {
      params.push(filters.limit);
      limit = ` LIMIT $${params.length}`;
    }
    const result = await this.db.query<AuditRow>(
      `SELECT * FROM audit_entries ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC${limit}`,
      params,
    );
    return result.rows.reverse().map(view);
  }

  /**
   * Walks the whole trail in order: each entry's id follows the one before, its prev_hash is the
   * hash of the entry before (zeros for the first), and its hash is that of its own fields.
   * Answers the number of entries checked, or the first that breaks the chain.
   */
  async verify(): Promise<AuditVerification> {
    let checked = 0;
    let prevHash: Uint8Array = GENESIS_HASH;
    let prevId = 0n;
    for (;;) {
      const batch = await this.db.query<AuditRow>('SELECT * FROM audit_entries WHERE id > $1 ORDER BY id LIMIT $2', [
        prevId,
        VERIFY_BATCH,
      ]);
      for (const row of batch.rows) {
        const reason =
          row.id !== prevId + 1n
            ? `entry ${prevId + 1n} is missing (the trail jumps from ${prevId} to ${row.id})`
            : !Buffer.from(row.prev_hash).equals(prevHash)
              ? `its prev_hash is not the hash of entry ${prevId}`
              : !Buffer.from(row.hash).equals(entryHash(prevHash, fieldsOf(row)))
                ? 'its hash is not that of its fields (the entry was changed)'
                : undefined;
        if (reason !== undefined) {
          return {
            ok: false,
            checked,
            broken: { id: row.id.toString(), at: row.at.toISOString(), action: row.action, reason },
          };
        }
        checked++;
        prevHash = row.hash;
        prevId = row.id;
      }
      if (batch.rows.length < VERIFY_BATCH) return { ok: true, checked };
    }
  }
}

function view(row: AuditRow): PortalAuditEntry {
  return {
    id: row.id.toString(),
    at: row.at.toISOString(),
    actor: row.actor_email === null ? { kind: row.actor_kind } : { kind: row.actor_kind, email: row.actor_email },
    action: row.action,
    merchant: row.merchant,
    ...(row.object === null ? {} : { object: row.object }),
    ...(row.detail === null ? {} : { detail: JSON.parse(row.detail) as Record<string, unknown> }),
    ...(row.ip === null ? {} : { ip: row.ip }),
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
  };
}
