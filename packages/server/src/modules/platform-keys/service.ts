import {
  type BoxKeyPair,
  boxKeyPairFrom,
  generateBoxKeyPair,
  generateSigningKey,
  type SigningKey,
  signingKeyFrom,
} from '@paygate/protocol';
import { TtlPromiseCache } from '../../cache/ttl-promise-cache.js';
import type { Environment } from '../../config.js';
import type { SecretSealer } from '../../crypto/master-key.js';
import { type Db, type Queryable, sqlState, UNIQUE_VIOLATION } from '../../db/db.js';
import { DomainError } from '../../errors.js';
import { randomToken } from '../../ids.js';

export type PlatformKeyKind = 'body' | 'webhook';
export type PlatformKeyStatus = 'active' | 'enabled' | 'retired';

/** A platform key as operators and merchants see it: never the private part. */
export interface PlatformKeyInfo {
  readonly keyId: string;
  readonly kind: PlatformKeyKind;
  readonly status: PlatformKeyStatus;
  readonly publicKey: string;
  readonly createdAt: number;
  readonly retiredAt: number | null;
}

interface PlatformKeyRow {
  key_id: string;
  kind: PlatformKeyKind;
  status: PlatformKeyStatus;
  public_key: Uint8Array;
  secret_sealed: Uint8Array;
  created_at: Date;
  retired_at: Date | null;
}

const toInfo = (row: PlatformKeyRow): PlatformKeyInfo => ({
  keyId: row.key_id,
  kind: row.kind,
  status: row.status,
  publicKey: Buffer.from(row.public_key).toString('base64'),
  createdAt: row.created_at.getTime(),
  retiredAt: row.retired_at?.getTime() ?? null,
});

/**
 * How long a decrypted key stays cached before the database is asked again: the bound within
 * which every instance signs with a rotated webhook key and stops opening envelopes sealed to a
 * retired body key (the instance that made the change does so at once).
 */
export const PLATFORM_KEY_CACHE_MS = 5_000;
/** Body keys kept at most (known and unknown keyIds); past this the cache starts afresh. */
export const BODY_KEY_CACHE_ENTRIES = 1_000;

/** The active webhook signing key and its keyid. */
export interface WebhookSigner {
  readonly keyid: string;
  readonly key: SigningKey;
}

/**
 * The platform's body (X25519) and webhook (Ed25519) keys for one environment: several may be
 * usable at once, exactly one of each kind is active for new use. Private keys are stored sealed
 * under the master key and decrypted only into memory.
 */
export class PlatformKeys {
  /**
   * Decrypted keys, kept for PLATFORM_KEY_CACHE_MS; the requests or deliveries that arrive while a
   * key is being read and decrypted share that work.
   */
  private readonly bodyCache = new TtlPromiseCache<string, BoxKeyPair | undefined>({
    load: (keyId) => this.loadBodyKeyPair(keyId),
    ttlMs: PLATFORM_KEY_CACHE_MS,
    now: () => this.now(),
    // The keyId comes from a merchant's envelope, unknown ones included: bounded, so that a
    // merchant sending made-up keyIds cannot grow it (an environment has a handful of keys).
    maxEntries: BODY_KEY_CACHE_ENTRIES,
  });
  /** The active webhook signing key, under the one key `active`. */
  private readonly signerCache = new TtlPromiseCache<'active', WebhookSigner>({
    load: () => this.loadWebhookSigner(),
    ttlMs: PLATFORM_KEY_CACHE_MS,
    now: () => this.now(),
  });

  constructor(
    private readonly db: Db,
    private readonly environment: Environment,
    private readonly sealer: SecretSealer,
    private readonly now: () => number = Date.now,
  ) {}

  private prefix(kind: PlatformKeyKind): string {
    return `${kind === 'body' ? 'bk' : 'wk'}_${this.environment === 'sandbox' ? 'test' : 'live'}_`;
  }

  private async insertActive(tx: Queryable, kind: PlatformKeyKind): Promise<void> {
    const keyId = this.prefix(kind) + randomToken(16);
    const pair = kind === 'body' ? generateBoxKeyPair() : generateSigningKey();
    // Body keys keep the 32-byte X25519 secret; webhook keys keep the 64-byte Ed25519 key.
    const sealed = this.sealer.seal(pair.secretKey, keyId);
    await tx.query(
      `INSERT INTO platform_keys (key_id, kind, environment, public_key, secret_sealed, status)
       VALUES ($1, $2, $3, $4, $5, 'active')`,
      [keyId, kind, this.environment, pair.publicKey, sealed],
    );
  }

  /** Creates an active key of each kind if there is none (safe when instances start together). */
  async ensure(): Promise<void> {
    for (const kind of ['body', 'webhook'] as const) {
      try {
        await this.db.transaction(async (tx) => {
          const existing = await tx.query(
            `SELECT 1 FROM platform_keys WHERE kind = $1 AND environment = $2 AND status = 'active'`,
            [kind, this.environment],
          );
          if (existing.rows.length === 0) await this.insertActive(tx, kind);
        });
      } catch (error) {
        // Another instance created it first: the partial unique index allows one active key.
        if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
      }
    }
  }

  /** Makes a new key of `kind` active; the previous active key stays enabled (still accepted). */
  async rotate(kind: PlatformKeyKind): Promise<PlatformKeyInfo> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE platform_keys SET status = 'enabled' WHERE kind = $1 AND environment = $2 AND status = 'active'`,
        [kind, this.environment],
      );
      await this.insertActive(tx, kind);
    });
    this.signerCache.clear();
    const active = (await this.list()).find((key) => key.kind === kind && key.status === 'active');
    if (!active) throw new Error('rotation left no active key');
    return active;
  }

  /** Retires a key that is not the active one: bodies sealed to it no longer open, it is no longer published. */
  async retire(keyId: string): Promise<PlatformKeyInfo> {
    const result = await this.db.query<PlatformKeyRow>(
      `UPDATE platform_keys SET status = 'retired', retired_at = $3
       WHERE key_id = $1 AND environment = $2 AND status = 'enabled' RETURNING *`,
      [keyId, this.environment, new Date(this.now())],
    );
    const row = result.rows[0];
    if (!row) {
      throw new DomainError('INVALID_STATE', 'only an enabled, non-active key of this environment can be retired');
    }
    this.bodyCache.delete(keyId);
    return toInfo(row);
  }

  async list(): Promise<PlatformKeyInfo[]> {
    const result = await this.db.query<PlatformKeyRow>(
      'SELECT * FROM platform_keys WHERE environment = $1 ORDER BY kind, created_at, id',
      [this.environment],
    );
    return result.rows.map(toInfo);
  }

  /** The body key merchants seal new requests to. */
  async activeBodyKey(): Promise<PlatformKeyInfo> {
    const key = (await this.list()).find((k) => k.kind === 'body' && k.status === 'active');
    if (!key) throw new Error('no active body key: call ensure() at start-up');
    return key;
  }

  /** Webhook public keys a merchant may still see signatures from (active and enabled). */
  async publishedWebhookKeys(): Promise<(PlatformKeyInfo & { status: 'active' | 'enabled' })[]> {
    return (await this.list()).filter(
      (k): k is PlatformKeyInfo & { status: 'active' | 'enabled' } => k.kind === 'webhook' && k.status !== 'retired',
    );
  }

  /** The body key pair for a key id, or `undefined` when unknown, retired or of the other environment. */
  bodyKeyPair(keyId: string): Promise<BoxKeyPair | undefined> {
    return this.bodyCache.get(keyId);
  }

  private async loadBodyKeyPair(keyId: string): Promise<BoxKeyPair | undefined> {
    const result = await this.db.query<PlatformKeyRow>(
      `SELECT * FROM platform_keys WHERE key_id = $1 AND kind = 'body' AND environment = $2 AND status <> 'retired'`,
      [keyId, this.environment],
    );
    const row = result.rows[0];
    let pair: BoxKeyPair | undefined;
    if (row) {
      const opened = boxKeyPairFrom(this.sealer.open(Buffer.from(row.secret_sealed), row.key_id));
      pair = opened.ok ? opened.value : undefined;
    }
    return pair;
  }

  /** The active webhook signing key and its keyid. */
  webhookSigner(): Promise<WebhookSigner> {
    return this.signerCache.get('active');
  }

  private async loadWebhookSigner(): Promise<WebhookSigner> {
    const result = await this.db.query<PlatformKeyRow>(
      `SELECT * FROM platform_keys WHERE kind = 'webhook' AND environment = $1 AND status = 'active'`,
      [this.environment],
    );
    const row = result.rows[0];
    if (!row) throw new Error('no active webhook key: call ensure() at start-up');
    const key = signingKeyFrom(this.sealer.open(Buffer.from(row.secret_sealed), row.key_id));
    if (!key.ok) throw new Error(`webhook key ${row.key_id} does not load: ${key.error.reason}`);
    return { keyid: row.key_id, key: key.value };
  }
}
