import type { MerchantKey } from '@paygate/wire';
import { publicKeyFrom } from '@paygate/protocol';
import { TtlPromiseCache } from '../../cache/ttl-promise-cache.js';
import type { Environment } from '../../config.js';
import { type Db, type InTransaction, type Queryable, sqlState, UNIQUE_VIOLATION } from '../../db/db.js';
import { DomainError, validationFailed } from '../../errors.js';
import { randomToken } from '../../ids.js';

/** A merchant as the authentication layer needs it. */
export interface Merchant {
  readonly id: bigint;
  readonly name: string;
  readonly environment: Environment;
  readonly accessKey: string;
  /** Active Ed25519 public keys (one, or two during a rotation). */
  readonly publicKeys: readonly Buffer[];
}

/** Who a merchant is, without its keys. */
export interface MerchantProfile {
  readonly id: bigint;
  readonly name: string;
  readonly accessKey: string;
  readonly environment: Environment;
  /** Disabled by the operator: its API requests, portal sessions and sign-ins are refused. */
  readonly disabled: boolean;
}

/** What else happens, in the same transaction, when a merchant is disabled. */
export interface MerchantHooks {
  /** The portal ends the merchant's sessions here (enabling it again does not bring them back). */
  onDisabled?(tx: Queryable, merchantId: bigint): Promise<void>;
}

export type MerchantKeyInfo = MerchantKey;

/** At most this many active public keys per merchant (old and new during a rotation). */
export const MAX_ACTIVE_KEYS = 2;

const accessKeyPrefix = (environment: Environment) => (environment === 'sandbox' ? 'ak_test_' : 'ak_live_');

function parsePublicKey(input: string): Buffer {
  const key = publicKeyFrom(input);
  if (!key.ok) throw validationFailed([{ field: 'publicKey', message: key.error.reason }]);
  return key.value;
}

/**
 * How long a merchant's keys and status are cached for authentication: the bound within which
 * every instance sees a key added or retired, or the merchant disabled, through another instance
 * (through this instance it takes effect at once). A short time-to-live, not notifications: it
 * costs one indexed read per merchant per instance every 2 s and cannot miss an invalidation
 * across a dropped connection.
 */
export const MERCHANT_CACHE_MS = 2_000;

/** Merchants and their public keys, in one environment. */
export class Merchants {
  /**
   * Loads by access key, kept for MERCHANT_CACHE_MS; the requests that arrive while a load is under
   * way share it instead of each reading the database. Past 10,000 merchants kept, it starts over.
   */
  private readonly cache = new TtlPromiseCache<string, Merchant | undefined>({
    load: (accessKey) => this.load(accessKey),
    ttlMs: MERCHANT_CACHE_MS,
    now: () => this.now(),
    maxEntries: 10_000,
  });

  constructor(
    private readonly db: Db,
    private readonly environment: Environment,
    private readonly now: () => number = Date.now,
    private readonly hooks: MerchantHooks = {},
  ) {}

  /** Onboards a merchant with its first public key; the access key carries the environment. */
  async create(
    name: string,
    publicKeyText: string,
    also?: InTransaction<{ accessKey: string }>,
  ): Promise<{ accessKey: string; environment: Environment }> {
    // No control characters: none belongs in a name shown to people, and PostgreSQL text cannot hold NUL.
    if (name.trim().length === 0 || name.length > 200 || /\p{Cc}/u.test(name)) {
      throw validationFailed([{ field: 'name', message: 'a name of 1 to 200 characters, without control characters' }]);
    }
    const publicKey = parsePublicKey(publicKeyText);
    const accessKey = accessKeyPrefix(this.environment) + randomToken(24);
    await this.db.transaction(async (tx) => {
      const inserted = await tx.query<{ id: bigint }>(
        'INSERT INTO merchants (name, environment, access_key, created_at) VALUES ($1, $2, $3, $4) RETURNING id',
        [name.trim(), this.environment, accessKey, new Date(this.now())],
      );
      await tx.query(`INSERT INTO merchant_keys (merchant_id, public_key, status) VALUES ($1, $2, 'active')`, [
        inserted.rows[0]?.id,
        publicKey,
      ]);
      await also?.(tx, { accessKey });
    });
    return { accessKey, environment: this.environment };
  }

  /**
   * The merchant an access key names, with its active keys; `undefined` when unknown or when the
   * key belongs to the other environment.
   */
  async findByAccessKey(accessKey: string): Promise<Merchant | undefined> {
    if (!accessKey.startsWith(accessKeyPrefix(this.environment))) return undefined;
    return this.cache.get(accessKey);
  }

  private async load(accessKey: string): Promise<Merchant | undefined> {
    const result = await this.db.query<{
      id: bigint;
      name: string;
      environment: Environment;
      public_key: Uint8Array | null;
    }>(
      `SELECT m.id, m.name, m.environment, k.public_key
         FROM merchants m LEFT JOIN merchant_keys k ON k.merchant_id = m.id AND k.status = 'active'
        WHERE m.access_key = $1 AND m.environment = $2 AND m.disabled_at IS NULL
        ORDER BY k.id`,
      [accessKey, this.environment],
    );
    const first = result.rows[0];
    if (!first) return undefined;
    return {
      id: first.id,
      name: first.name,
      environment: first.environment,
      accessKey,
      publicKeys: result.rows.flatMap((row) => (row.public_key ? [Buffer.from(row.public_key)] : [])),
    };
  }

  async list(): Promise<
    { accessKey: string; name: string; environment: Environment; createdAt: number; disabled: boolean }[]
  > {
    const result = await this.db.query<{
      access_key: string;
      name: string;
      environment: Environment;
      created_at: Date;
      disabled_at: Date | null;
    }>(
      'SELECT access_key, name, environment, created_at, disabled_at FROM merchants WHERE environment = $1 ORDER BY id',
      [this.environment],
    );
    return result.rows.map((r) => ({
      accessKey: r.access_key,
      name: r.name,
      environment: r.environment,
      createdAt: r.created_at.getTime(),
      disabled: r.disabled_at !== null,
    }));
  }

  /**
   * Disables or enables a merchant. A disabled merchant's requests fail authentication like an
   * unknown access key's (every instance within MERCHANT_CACHE_MS); its portal sessions end in the
   * same transaction and its users cannot sign in (every instance at once: the portal reads the
   * merchant on each request). Its orders, balances and pending webhooks are untouched.
   */
  async setDisabled(
    accessKey: string,
    disabled: boolean,
    also?: InTransaction,
  ): Promise<{ accessKey: string; disabled: boolean }> {
    await this.db.transaction(async (tx) => {
      const result = await tx.query<{ id: bigint }>(
        `UPDATE merchants SET disabled_at = CASE WHEN $3 THEN coalesce(disabled_at, $4) END
          WHERE access_key = $1 AND environment = $2 RETURNING id`,
        [accessKey, this.environment, disabled, new Date(this.now())],
      );
      const merchant = result.rows[0];
      if (!merchant) throw new DomainError('NOT_FOUND', 'no such merchant');
      if (disabled) await this.hooks.onDisabled?.(tx, merchant.id);
      await also?.(tx);
    });
    this.cache.delete(accessKey);
    return { accessKey, disabled };
  }

  /** The id of this environment's merchant with `accessKey`; NOT_FOUND when there is none. */
  async idOf(accessKey: string): Promise<bigint> {
    const id = await this.findId(accessKey);
    if (id === undefined) throw new DomainError('NOT_FOUND', 'no such merchant');
    return id;
  }

  /** The id of this environment's merchant with `accessKey`, disabled or not; `undefined` when unknown. */
  async findId(accessKey: string): Promise<bigint | undefined> {
    const result = await this.db.query<{ id: bigint }>(
      'SELECT id FROM merchants WHERE access_key = $1 AND environment = $2',
      [accessKey, this.environment],
    );
    return result.rows[0]?.id;
  }

  /** The id of the merchant with `accessKey` in any environment (sandbox rejection records); `undefined` when unknown. */
  async idOfAnyEnvironment(accessKey: string): Promise<bigint | undefined> {
    const result = await this.db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [accessKey]);
    return result.rows[0]?.id;
  }

  /** A merchant's name, access key and environment by id, disabled or not (portal sessions, cashier page). */
  async profile(id: bigint, db: Queryable = this.db): Promise<MerchantProfile | undefined> {
    const result = await db.query<{
      name: string;
      access_key: string;
      environment: Environment;
      disabled_at: Date | null;
    }>('SELECT name, access_key, environment, disabled_at FROM merchants WHERE id = $1', [id]);
    const row = result.rows[0];
    return (
      row && {
        id,
        name: row.name,
        accessKey: row.access_key,
        environment: row.environment,
        disabled: row.disabled_at !== null,
      }
    );
  }

  /** Many merchants' profiles by id, in one statement (the back office's lists name each order's merchant). */
  async profiles(ids: readonly bigint[], db: Queryable = this.db): Promise<Map<bigint, MerchantProfile>> {
    if (ids.length === 0) return new Map();
    const result = await db.query<{
      id: bigint;
      name: string;
      access_key: string;
      environment: Environment;
      disabled_at: Date | null;
    }>('SELECT id, name, access_key, environment, disabled_at FROM merchants WHERE id = ANY($1::bigint[])', [
      ids.map(String),
    ]);
    return new Map(
      result.rows.map((row) => [
        row.id,
        {
          id: row.id,
          name: row.name,
          accessKey: row.access_key,
          environment: row.environment,
          disabled: row.disabled_at !== null,
        },
      ]),
    );
  }

  /** This environment's merchants with their ids, in creation order, a page at a time (the back office). */
  async page(
    after: bigint | undefined,
    limit: number,
  ): Promise<(MerchantProfile & { createdAt: number; disabledAt: number | null })[]> {
    const result = await this.db.query<{
      id: bigint;
      name: string;
      access_key: string;
      environment: Environment;
      created_at: Date;
      disabled_at: Date | null;
    }>(
      `SELECT id, name, access_key, environment, created_at, disabled_at FROM merchants
        WHERE environment = $1 AND ($2::bigint IS NULL OR id > $2) ORDER BY id LIMIT $3`,
      [this.environment, after ?? null, limit],
    );
    return result.rows.map((row) => ({
      id: row.id,
      name: row.name,
      accessKey: row.access_key,
      environment: row.environment,
      disabled: row.disabled_at !== null,
      createdAt: row.created_at.getTime(),
      disabledAt: row.disabled_at?.getTime() ?? null,
    }));
  }

  async keys(accessKey: string): Promise<MerchantKeyInfo[]> {
    const id = await this.idOf(accessKey);
    const result = await this.db.query<{
      id: bigint;
      public_key: Uint8Array;
      status: 'active' | 'retired';
      created_at: Date;
      retired_at: Date | null;
    }>('SELECT id, public_key, status, created_at, retired_at FROM merchant_keys WHERE merchant_id = $1 ORDER BY id', [
      id,
    ]);
    return result.rows.map((r) => ({
      id: r.id.toString(),
      publicKey: Buffer.from(r.public_key).toString('base64'),
      status: r.status,
      createdAt: r.created_at.getTime(),
      retiredAt: r.retired_at?.getTime() ?? null,
    }));
  }

  /** Adds an active public key; refused when two are active already (retire one first). */
  async addKey(
    accessKey: string,
    publicKeyText: string,
    also?: InTransaction<{ keyId: string }>,
  ): Promise<MerchantKeyInfo[]> {
    const publicKey = parsePublicKey(publicKeyText);
    const id = await this.idOf(accessKey);
    try {
      await this.db.transaction(async (tx) => {
        // Lock the merchant so two concurrent additions cannot both see one active key.
        await tx.query('SELECT id FROM merchants WHERE id = $1 FOR UPDATE', [id]);
        const active = await tx.query(`SELECT 1 FROM merchant_keys WHERE merchant_id = $1 AND status = 'active'`, [id]);
        if (active.rows.length >= MAX_ACTIVE_KEYS) {
          throw new DomainError(
            'INVALID_STATE',
            `a merchant has at most ${MAX_ACTIVE_KEYS} active keys; retire one first`,
          );
        }
        const added = await tx.query<{ id: bigint }>(
          `INSERT INTO merchant_keys (merchant_id, public_key, status) VALUES ($1, $2, 'active') RETURNING id`,
          [id, publicKey],
        );
        await also?.(tx, { keyId: String(added.rows[0]?.id) });
      });
    } catch (error) {
      if (sqlState(error) === UNIQUE_VIOLATION) throw new DomainError('CONFLICT', 'this public key was added before');
      throw error;
    }
    this.cache.delete(accessKey);
    return this.keys(accessKey);
  }

  /** Retires one of the merchant's keys (by id or base64 public key); the last active key cannot go. */
  async retireKey(accessKey: string, key: string, also?: InTransaction<{ keyId: string }>): Promise<MerchantKeyInfo[]> {
    const id = await this.idOf(accessKey);
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT id FROM merchants WHERE id = $1 FOR UPDATE', [id]);
      const active = await tx.query<{ id: bigint; public_key: Uint8Array }>(
        `SELECT id, public_key FROM merchant_keys WHERE merchant_id = $1 AND status = 'active'`,
        [id],
      );
      const target = active.rows.find(
        (r) => r.id.toString() === key || Buffer.from(r.public_key).toString('base64') === key,
      );
      if (!target) throw new DomainError('NOT_FOUND', 'no such active key');
      if (active.rows.length === 1) throw new DomainError('INVALID_STATE', 'the last active key cannot be retired');
      await tx.query(`UPDATE merchant_keys SET status = 'retired', retired_at = $2 WHERE id = $1`, [
        target.id,
        new Date(this.now()),
      ]);
      await also?.(tx, { keyId: target.id.toString() });
    });
    this.cache.delete(accessKey);
    return this.keys(accessKey);
  }
}
