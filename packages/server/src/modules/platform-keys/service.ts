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
import { MasterKeyError, type SecretSealer } from '../../crypto/master-key.js';
import { type Db, type InTransaction, type Queryable, sqlState, UNIQUE_VIOLATION } from '../../db/db.js';
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
  id: string;
  key_id: string;
  kind: PlatformKeyKind;
  status: PlatformKeyStatus;
  public_key: Uint8Array;
  secret_sealed: Uint8Array;
  /** The id of the master key it is sealed under (NULL only before the first start after 0016). */
  sealed_under: string | null;
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

/** Any fixed number: serializes the master-key check and re-seal across instances. */
const MASTER_KEY_LOCK = 727_016;

/** Where an environment's seals stand: which master keys they need, and which this process holds. */
export interface MasterKeyStatus {
  /** The key this process seals under (`PAYGATE_MASTER_KEY`). */
  readonly currentKeyId: string;
  /** The master keys with a key check in the database: two while a rotation is under way. */
  readonly checkedKeyIds: readonly string[];
  /** How many platform keys (retired ones included) are sealed under each master key. */
  readonly sealedUnder: Readonly<Record<string, number>>;
}

/** What a re-seal did. */
export interface MasterKeyReseal {
  readonly currentKeyId: string;
  /** The platform keys re-sealed under the current master key. */
  readonly resealed: readonly string[];
  /** The master keys whose key check was removed: they open nothing any more. */
  readonly retiredMasterKeyIds: readonly string[];
}

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
    /** Where the current master key came from, for the line a refused start prints. */
    private readonly masterKeySource = 'PAYGATE_MASTER_KEY',
  ) {}

  /** Opens a row's private key under the master key it was sealed under. */
  private openSecret(row: PlatformKeyRow): Buffer {
    return this.sealer.open(Buffer.from(row.secret_sealed), row.key_id, row.sealed_under ?? this.sealer.currentKeyId);
  }

  /**
   * Refuses to go on (MasterKeyError, one line) unless this process holds every master key the
   * environment's platform keys are sealed under, each proven by its key check; records the key
   * check of the current key. Keys sealed before key checks existed are opened once to learn
   * their master key. Runs at every start, before anything is served: a wrong master key (say a
   * sandbox data directory that lost its master.key while the keys live in PostgreSQL) would
   * otherwise fail every request that needs a platform key.
   */
  async verifyMasterKey(): Promise<void> {
    // Most starts only need to read: every key check opens, the current key's is there and every
    // platform key names its master key. Only a first start under a new key (or with keys from
    // before key checks) writes, under the lock below; so an instance can still start on a
    // database that takes only reads (a standby during a failover) and say it is not ready.
    if (await this.masterKeyVerifiedByReading()) return;
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MASTER_KEY_LOCK]);
      const checks = await tx.query<{ key_id: string; check_sealed: Uint8Array }>(
        'SELECT key_id, check_sealed FROM master_key_checks WHERE environment = $1 ORDER BY created_at',
        [this.environment],
      );
      const unopened = checks.rows
        .filter((check) => !this.sealer.opensKeyCheck(check.key_id, Buffer.from(check.check_sealed)))
        .map((check) => check.key_id);
      if (unopened.length > 0) throw this.wrongKey(unopened);
      const unlabelled = await tx.query<PlatformKeyRow>(
        'SELECT * FROM platform_keys WHERE environment = $1 AND sealed_under IS NULL ORDER BY id FOR UPDATE',
        [this.environment],
      );
      for (const row of unlabelled.rows) {
        const under = this.sealer.heldKeyIds.find((keyId) => {
          try {
            this.sealer.open(Buffer.from(row.secret_sealed), row.key_id, keyId);
            return true;
          } catch {
            return false;
          }
        });
        if (under === undefined) throw this.wrongKey(['the master key they were sealed under']);
        await tx.query('UPDATE platform_keys SET sealed_under = $2 WHERE id = $1', [row.id, under]);
      }
      const unheld = await tx.query<{ sealed_under: string }>(
        'SELECT DISTINCT sealed_under FROM platform_keys WHERE environment = $1 AND sealed_under IS NOT NULL',
        [this.environment],
      );
      const missing = unheld.rows.map((row) => row.sealed_under).filter((keyId) => !this.sealer.holds(keyId));
      if (missing.length > 0) throw this.wrongKey(missing);
      await tx.query(
        `INSERT INTO master_key_checks (environment, key_id, check_sealed) VALUES ($1, $2, $3)
         ON CONFLICT (environment, key_id) DO NOTHING`,
        [this.environment, this.sealer.currentKeyId, this.sealer.keyCheck()],
      );
    });
  }

  /**
   * {@link verifyMasterKey} without writing: true when nothing needs recording, false when the
   * writing pass must run; throws the wrong-key refusal it can already tell.
   */
  private async masterKeyVerifiedByReading(): Promise<boolean> {
    const checks = await this.db.query<{ key_id: string; check_sealed: Uint8Array }>(
      'SELECT key_id, check_sealed FROM master_key_checks WHERE environment = $1 ORDER BY created_at',
      [this.environment],
    );
    const unopened = checks.rows
      .filter((check) => !this.sealer.opensKeyCheck(check.key_id, Buffer.from(check.check_sealed)))
      .map((check) => check.key_id);
    if (unopened.length > 0) throw this.wrongKey(unopened);
    if (!checks.rows.some((check) => check.key_id === this.sealer.currentKeyId)) return false;
    const sealedUnder = await this.db.query<{ sealed_under: string | null }>(
      'SELECT DISTINCT sealed_under FROM platform_keys WHERE environment = $1',
      [this.environment],
    );
    if (sealedUnder.rows.some((row) => row.sealed_under === null)) return false;
    const missing = sealedUnder.rows
      .map((row) => row.sealed_under as string)
      .filter((keyId) => !this.sealer.holds(keyId));
    if (missing.length > 0) throw this.wrongKey(missing);
    return true;
  }

  private wrongKey(needed: readonly string[]): MasterKeyError {
    return new MasterKeyError(
      `the master key ${this.sealer.currentKeyId} (from ${this.masterKeySource}) does not open the ${this.environment} ` +
        `platform keys in this database, which are sealed under ${needed.join(' and ')}: start with that key in ` +
        'PAYGATE_MASTER_KEY (during a rotation, the old one in PAYGATE_MASTER_KEY_PREVIOUS); a new master key cannot ' +
        'open them, and nothing was changed',
    );
  }

  /** Which master keys the environment's platform keys are sealed under. */
  async masterKeyStatus(): Promise<MasterKeyStatus> {
    const checks = await this.db.query<{ key_id: string }>(
      'SELECT key_id FROM master_key_checks WHERE environment = $1 ORDER BY created_at, key_id',
      [this.environment],
    );
    const counts = await this.db.query<{ sealed_under: string | null; keys: number }>(
      `SELECT sealed_under, count(*)::int AS keys FROM platform_keys WHERE environment = $1
       GROUP BY sealed_under ORDER BY sealed_under`,
      [this.environment],
    );
    return {
      currentKeyId: this.sealer.currentKeyId,
      checkedKeyIds: checks.rows.map((row) => row.key_id),
      sealedUnder: Object.fromEntries(counts.rows.map((row) => [row.sealed_under ?? 'unknown', row.keys])),
    };
  }

  /**
   * Re-seals every platform private key of the environment (retired ones too) under the current
   * master key, in one transaction, and removes the key checks of every other master key: from
   * then on a process holding only an old key refuses to start. The decrypted keys do not change,
   * so nothing in flight is disturbed. Refused (changing nothing) when a key is sealed under a
   * master key this instance does not hold.
   */
  async resealUnderCurrentKey(also?: InTransaction<MasterKeyReseal>): Promise<MasterKeyReseal> {
    const current = this.sealer.currentKeyId;
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MASTER_KEY_LOCK]);
      const stale = await tx.query<PlatformKeyRow>(
        `SELECT * FROM platform_keys WHERE environment = $1 AND sealed_under IS DISTINCT FROM $2 ORDER BY id FOR UPDATE`,
        [this.environment, current],
      );
      for (const row of stale.rows) {
        if (row.sealed_under === null || !this.sealer.holds(row.sealed_under)) {
          throw new DomainError(
            'INVALID_STATE',
            `platform key ${row.key_id} is sealed under master key ${row.sealed_under ?? 'unknown'}, which this instance ` +
              'does not hold: restart it with that key in PAYGATE_MASTER_KEY_PREVIOUS first',
          );
        }
        const secret = this.openSecret(row);
        const { sealed } = this.sealer.seal(secret, row.key_id);
        await tx.query('UPDATE platform_keys SET secret_sealed = $2, sealed_under = $3 WHERE id = $1', [
          row.id,
          sealed,
          current,
        ]);
      }
      await tx.query(
        `INSERT INTO master_key_checks (environment, key_id, check_sealed) VALUES ($1, $2, $3)
         ON CONFLICT (environment, key_id) DO NOTHING`,
        [this.environment, current, this.sealer.keyCheck()],
      );
      const retired = await tx.query<{ key_id: string }>(
        'DELETE FROM master_key_checks WHERE environment = $1 AND key_id <> $2 RETURNING key_id',
        [this.environment, current],
      );
      const done = {
        currentKeyId: current,
        resealed: stale.rows.map((row) => row.key_id),
        retiredMasterKeyIds: retired.rows.map((row) => row.key_id).sort(),
      };
      await also?.(tx, done);
      return done;
    });
  }

  private prefix(kind: PlatformKeyKind): string {
    return `${kind === 'body' ? 'bk' : 'wk'}_${this.environment === 'sandbox' ? 'test' : 'live'}_`;
  }

  private async insertActive(tx: Queryable, kind: PlatformKeyKind): Promise<string> {
    const keyId = this.prefix(kind) + randomToken(16);
    const pair = kind === 'body' ? generateBoxKeyPair() : generateSigningKey();
    // Body keys keep the 32-byte X25519 secret; webhook keys keep the 64-byte Ed25519 key.
    const { sealed, sealedUnder } = this.sealer.seal(pair.secretKey, keyId);
    await tx.query(
      `INSERT INTO platform_keys (key_id, kind, environment, public_key, secret_sealed, sealed_under, status)
       VALUES ($1, $2, $3, $4, $5, $6, 'active')`,
      [keyId, kind, this.environment, pair.publicKey, sealed, sealedUnder],
    );
    return keyId;
  }

  /**
   * Checks the master key (verifyMasterKey) and creates an active key of each kind if there is
   * none (safe when instances start together).
   */
  async ensure(also?: InTransaction<{ keyId: string; kind: PlatformKeyKind }>): Promise<void> {
    await this.verifyMasterKey();
    for (const kind of ['body', 'webhook'] as const) {
      try {
        await this.db.transaction(async (tx) => {
          const existing = await tx.query(
            `SELECT 1 FROM platform_keys WHERE kind = $1 AND environment = $2 AND status = 'active'`,
            [kind, this.environment],
          );
          if (existing.rows.length === 0) await also?.(tx, { keyId: await this.insertActive(tx, kind), kind });
        });
      } catch (error) {
        // Another instance created it first: the partial unique index allows one active key.
        if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
      }
    }
  }

  /** Makes a new key of `kind` active; the previous active key stays enabled (still accepted). */
  async rotate(kind: PlatformKeyKind, also?: InTransaction<{ keyId: string }>): Promise<PlatformKeyInfo> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE platform_keys SET status = 'enabled' WHERE kind = $1 AND environment = $2 AND status = 'active'`,
        [kind, this.environment],
      );
      const keyId = await this.insertActive(tx, kind);
      await also?.(tx, { keyId });
    });
    this.signerCache.clear();
    const active = (await this.list()).find((key) => key.kind === kind && key.status === 'active');
    if (!active) throw new Error('rotation left no active key');
    return active;
  }

  /** Retires a key that is not the active one: bodies sealed to it no longer open, it is no longer published. */
  async retire(keyId: string, also?: InTransaction): Promise<PlatformKeyInfo> {
    const row = await this.db.transaction(async (tx) => {
      const result = await tx.query<PlatformKeyRow>(
        `UPDATE platform_keys SET status = 'retired', retired_at = $3
         WHERE key_id = $1 AND environment = $2 AND status = 'enabled' RETURNING *`,
        [keyId, this.environment, new Date(this.now())],
      );
      const retired = result.rows[0];
      if (!retired) {
        throw new DomainError('INVALID_STATE', 'only an enabled, non-active key of this environment can be retired');
      }
      await also?.(tx);
      return retired;
    });
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
      const opened = boxKeyPairFrom(this.openSecret(row));
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
    const key = signingKeyFrom(this.openSecret(row));
    if (!key.ok) throw new Error(`webhook key ${row.key_id} does not load: ${key.error.reason}`);
    return { keyid: row.key_id, key: key.value };
  }
}
