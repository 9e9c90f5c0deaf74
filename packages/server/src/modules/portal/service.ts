import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Config, Environment } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { DomainError } from '../../errors.js';
import type { Merchants } from '../merchants/service.js';
import { parseInput } from '../../validation.js';
import { portalErrors } from './errors.js';
import { dummyHash, hashPassword, verifyPassword } from './passwords.js';

/** Sign-in throttling: this many failures in a row for one email lock it for `LOCK_MS`. */
export const MAX_FAILURES_PER_EMAIL = 5;
/** Failures from one client address within `LOCK_MS` before it is throttled, whatever the email. */
export const MAX_FAILURES_PER_IP = 30;
export const LOCK_MS = 15 * 60_000;
/** A session ends this long after sign-in at the latest. */
export const SESSION_MAX_MS = 12 * 3_600_000;
/** …or after this long without a request. */
export const SESSION_IDLE_MS = 2 * 3_600_000;
/** How long sign-in attempts are kept (see PortalAccounts.purge). */
export const LOGIN_ATTEMPTS_KEPT_MS = 24 * 3_600_000;
/** last_seen_at is written at most this often per session. */
const TOUCH_MS = 60_000;
/** How long an operator's setup link works. */
export const INVITATION_MS = 72 * 3_600_000;
export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 256;

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const newToken = () => randomBytes(32).toString('base64url');

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** No control characters (PostgreSQL text cannot hold NUL; none belongs in an address anyway). */
const NO_CONTROL_CHARACTERS = /^\P{Cc}*$/u;

const email = z
  .string()
  .transform(normalizeEmail)
  .pipe(
    z
      .string()
      .max(254)
      .regex(NO_CONTROL_CHARACTERS, 'an email address')
      .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an email address'),
  );

const newPassword = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `at most ${MAX_PASSWORD_LENGTH} characters`);

// Inputs of the methods below, built once here: zod compiles an object schema's parser on its
// first parse, so a schema built inside a method would be compiled again on every call.
/** `invite`'s email (wrapped in an object so an error names the field `email`). */
const inviteInput = z.object({ email });
/** `acceptInvitation`'s body: the setup link's token and the new password. */
const setupInput = z.object({ token: z.string().min(1).max(200), password: newPassword });
/** `signIn`'s body: only bounded, not checked as an address or a password rule (a wrong one just fails). */
const signInInput = z.object({
  email: z.string().max(254).regex(NO_CONTROL_CHARACTERS, 'no control characters').transform(normalizeEmail),
  password: z.string().max(1024),
});

/** The merchant a session acts for. */
export interface PortalMerchant {
  readonly id: bigint;
  readonly name: string;
  readonly accessKey: string;
  readonly environment: Environment;
}

/** A valid session, as the routes see it. The raw token never leaves the cookie. */
export interface PortalSession {
  readonly sessionId: bigint;
  readonly userId: bigint;
  readonly email: string;
  readonly merchant: PortalMerchant;
  readonly expiresAt: number;
  /** The CSRF token state-changing requests must echo in `X-CSRF-Token`. */
  readonly csrfToken: string;
}

export interface Invitation {
  readonly email: string;
  readonly accessKey: string;
  /** One-time secret of the setup link; only its SHA-256 is stored. */
  readonly setupToken: string;
  readonly expiresAt: number;
  /** Whether the user existed already (a new link then works like a password reset). */
  readonly existing: boolean;
}

export interface PortalUserInfo {
  readonly email: string;
  readonly activated: boolean;
  readonly invitationExpiresAt: number | null;
  readonly createdAt: number;
}

/**
 * The CSRF token of a session: an HMAC of the session token, so it needs no storage, is stable
 * for the session's life, and cannot be computed without the (HttpOnly) session cookie.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('paygate-portal-csrf').digest('base64url');
}

/** Constant-time comparison of two short strings. */
export function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * Merchant portal accounts: users invited by an operator, sign-in with scrypt passwords and
 * per-email lockout plus per-address throttling, and sessions stored by their token's SHA-256.
 */
export class PortalAccounts {
  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'environment'>,
    /** Merchants are read through their module: the merchants table is not this module's. */
    private readonly merchants: Pick<Merchants, 'idOf' | 'findId' | 'profile'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Invites `email` to the merchant with `accessKey` and returns a one-time setup token. An
   * existing user of the same merchant gets a fresh token (their password keeps working until
   * the link is used); an email that belongs to another merchant is refused.
   */
  async invite(accessKey: string, emailInput: string): Promise<Invitation> {
    const address = parseInput(inviteInput, { email: emailInput }).email;
    const merchantId = await this.merchants.idOf(accessKey);
    const token = newToken();
    const now = new Date(this.now());
    const expiresAt = new Date(now.getTime() + INVITATION_MS);
    const result = await this.db.query<{ merchant_id: bigint; existing: boolean }>(
      `INSERT INTO portal_users (merchant_id, environment, email, invite_token_hash, invite_expires_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (environment, email) DO UPDATE
          SET invite_token_hash = EXCLUDED.invite_token_hash, invite_expires_at = EXCLUDED.invite_expires_at,
              updated_at = EXCLUDED.updated_at
        WHERE portal_users.merchant_id = EXCLUDED.merchant_id
       RETURNING merchant_id, (xmax <> 0) AS existing`,
      [merchantId, this.config.environment, address, sha256(token), expiresAt, now],
    );
    const row = result.rows[0];
    if (!row) throw new DomainError('CONFLICT', 'this email is a portal user of another merchant');
    return { email: address, accessKey, setupToken: token, expiresAt: expiresAt.getTime(), existing: row.existing };
  }

  async users(accessKey: string): Promise<PortalUserInfo[]> {
    const merchantId = await this.merchants.findId(accessKey);
    if (merchantId === undefined) return [];
    const result = await this.db.query<{
      email: string;
      password_hash: string | null;
      invite_expires_at: Date | null;
      created_at: Date;
    }>(
      'SELECT email, password_hash, invite_expires_at, created_at FROM portal_users WHERE merchant_id = $1 ORDER BY id',
      [merchantId],
    );
    return result.rows.map((r) => ({
      email: r.email,
      activated: r.password_hash !== null,
      invitationExpiresAt: r.invite_expires_at?.getTime() ?? null,
      createdAt: r.created_at.getTime(),
    }));
  }

  /** Sets the password through a setup link; the link then stops working and old sessions end. */
  async acceptInvitation(input: unknown): Promise<{ email: string }> {
    const { token, password } = parseInput(setupInput, input);
    const now = new Date(this.now());
    const hash = await hashPassword(password);
    return this.db.transaction(async (tx) => {
      const updated = await tx.query<{ id: bigint; email: string }>(
        `UPDATE portal_users SET password_hash = $2, invite_token_hash = NULL, invite_expires_at = NULL, updated_at = $3
          WHERE invite_token_hash = $1 AND invite_expires_at > $3 AND environment = $4
          RETURNING id, email`,
        [sha256(token), hash, now, this.config.environment],
      );
      const user = updated.rows[0];
      if (!user) throw new DomainError('INVITATION_INVALID', portalErrors.INVITATION_INVALID.message);
      await tx.query('UPDATE portal_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL', [
        user.id,
        now,
      ]);
      return { email: user.email };
    });
  }

  /**
   * Signs in. The attempt is recorded as a failure before the password is checked (and turned
   * into a success after), under a per-email lock, so parallel guesses cannot slip past the
   * lockout. Attempts while locked are refused without being checked or recorded.
   */
  async signIn(input: unknown, ip: string): Promise<{ token: string; session: PortalSession }> {
    const credentials = parseInput(signInInput, input);
    const now = this.now();
    const attemptId = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`portal-login:${credentials.email}`]);
      const since = new Date(now - LOCK_MS);
      const recent = await tx.query<{ succeeded: boolean; created_at: Date }>(
        `SELECT succeeded, created_at FROM login_attempts WHERE email = $1 AND created_at > $2
          ORDER BY created_at DESC, id DESC LIMIT $3`,
        [credentials.email, since, MAX_FAILURES_PER_EMAIL],
      );
      const latest = recent.rows[0];
      if (latest && recent.rows.length === MAX_FAILURES_PER_EMAIL && recent.rows.every((r) => !r.succeeded)) {
        throw locked(latest.created_at.getTime() + LOCK_MS - now);
      }
      const byIp = await tx.query<{ created_at: Date }>(
        `SELECT created_at FROM login_attempts WHERE ip = $1 AND created_at > $2 AND NOT succeeded
          ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET $3`,
        [ip, since, MAX_FAILURES_PER_IP - 1],
      );
      const oldest = byIp.rows[0];
      if (oldest) throw locked(oldest.created_at.getTime() + LOCK_MS - now);
      const inserted = await tx.query<{ id: bigint }>(
        'INSERT INTO login_attempts (email, ip, succeeded, created_at) VALUES ($1, $2, false, $3) RETURNING id',
        [credentials.email, ip, new Date(now)],
      );
      return inserted.rows[0]?.id as bigint;
    });

    // A user's environment is its merchant's (an invitation names a merchant of this environment).
    const users = await this.db.query<{ id: bigint; password_hash: string | null }>(
      'SELECT id, password_hash FROM portal_users WHERE environment = $1 AND email = $2',
      [this.config.environment, credentials.email],
    );
    const user = users.rows[0];
    const stored = user?.password_hash ?? (await dummyHash());
    const ok = (await verifyPassword(credentials.password, stored)) && user?.password_hash != null;
    if (!ok || !user) throw new DomainError('LOGIN_FAILED', portalErrors.LOGIN_FAILED.message);
    // Said only after the right password; the attempt stays counted as a failure.
    const merchant = await this.merchantOfUser(user.id);
    if (merchant?.disabled !== false)
      throw new DomainError('MERCHANT_DISABLED', portalErrors.MERCHANT_DISABLED.message);

    await this.db.query('UPDATE login_attempts SET succeeded = true WHERE id = $1', [attemptId]);
    const token = newToken();
    await this.db.query(
      `INSERT INTO portal_sessions (token_hash, user_id, merchant_id, created_at, last_seen_at, expires_at)
       SELECT $1, id, merchant_id, $3, $3, $4 FROM portal_users WHERE id = $2`,
      [sha256(token), user.id, new Date(now), new Date(now + SESSION_MAX_MS)],
    );
    const session = await this.session(token);
    if (!session) throw new Error('a new session could not be read back');
    return { token, session };
  }

  /** The live session of a cookie token, or `undefined` (unknown, revoked, expired or idle). */
  async session(token: string): Promise<PortalSession | undefined> {
    if (token.length === 0 || token.length > 100) return undefined;
    const now = this.now();
    const result = await this.db.query<{
      id: bigint;
      user_id: bigint;
      email: string;
      merchant_id: bigint;
      last_seen_at: Date;
      expires_at: Date;
    }>(
      `SELECT s.id, s.user_id, u.email, s.merchant_id, s.last_seen_at, s.expires_at
         FROM portal_sessions s
         JOIN portal_users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND s.last_seen_at > $3`,
      [sha256(token), new Date(now), new Date(now - SESSION_IDLE_MS)],
    );
    const row = result.rows[0];
    if (!row) return undefined;
    const merchant = await this.merchants.profile(row.merchant_id);
    // A disabled merchant's sessions were revoked when it was disabled (endSessions); this check
    // also covers a session that slipped in between.
    if (merchant?.environment !== this.config.environment || merchant.disabled) return undefined;
    if (now - row.last_seen_at.getTime() > TOUCH_MS) {
      await this.db.query('UPDATE portal_sessions SET last_seen_at = $2 WHERE id = $1', [row.id, new Date(now)]);
    }
    return {
      sessionId: row.id,
      userId: row.user_id,
      email: row.email,
      merchant,
      expiresAt: Math.min(row.expires_at.getTime(), Math.max(now, row.last_seen_at.getTime()) + SESSION_IDLE_MS),
      csrfToken: csrfTokenFor(token),
    };
  }

  /** Ends every session of a merchant (called when it is disabled, in that transaction). */
  async endSessions(tx: Queryable, merchantId: bigint): Promise<void> {
    await tx.query('UPDATE portal_sessions SET revoked_at = $2 WHERE merchant_id = $1 AND revoked_at IS NULL', [
      merchantId,
      new Date(this.now()),
    ]);
  }

  private async merchantOfUser(userId: bigint) {
    const users = await this.db.query<{ merchant_id: bigint }>('SELECT merchant_id FROM portal_users WHERE id = $1', [
      userId,
    ]);
    const merchantId = users.rows[0]?.merchant_id;
    return merchantId === undefined ? undefined : this.merchants.profile(merchantId);
  }

  async signOut(session: PortalSession): Promise<void> {
    await this.db.query('UPDATE portal_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
      session.sessionId,
      new Date(this.now()),
    ]);
  }

  /**
   * Deletes sign-in attempts older than LOGIN_ATTEMPTS_KEPT_MS (the lockout reads the last
   * LOCK_MS of them) and sessions that can no longer be used: expired, revoked, or idle past
   * SESSION_IDLE_MS. Answers how many of each.
   */
  async purge(): Promise<{ attempts: number; sessions: number }> {
    const now = this.now();
    const attempts = await this.db.query('DELETE FROM login_attempts WHERE created_at < $1', [
      new Date(now - LOGIN_ATTEMPTS_KEPT_MS),
    ]);
    const sessions = await this.db.query(
      'DELETE FROM portal_sessions WHERE expires_at < $1 OR revoked_at IS NOT NULL OR last_seen_at < $2',
      [new Date(now), new Date(now - SESSION_IDLE_MS)],
    );
    return { attempts: attempts.rowCount, sessions: sessions.rowCount };
  }

  /**
   * The embedded database only: vacuums the sessions (touched as they are used, revoked, purged)
   * and the sign-in attempts (marked when they succeed, purged) when they have dead rows.
   */
  vacuum(): Promise<Vacuumed[]> {
    return vacuumTables(this.db, ['portal_sessions', 'login_attempts']);
  }
}

function locked(retryAfterMs: number): DomainError {
  return new DomainError('LOGIN_LOCKED', portalErrors.LOGIN_LOCKED.message, [], {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
}
