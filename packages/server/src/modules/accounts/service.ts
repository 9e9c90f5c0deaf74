import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PortalSessionInfo } from '@paygate/wire';
import { z } from 'zod';
import type { Config, Environment } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { type Vacuumed, vacuumTables } from '../../db/vacuum.js';
import { DomainError, validationFailed } from '../../errors.js';
import type { Merchants } from '../merchants/service.js';
import { parseInput } from '../../validation.js';
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { SecretSealer } from '../../crypto/master-key.js';
import type { Audit, AuditContext } from '../audit/service.js';
import type { Audience } from './audience.js';
import { enrollment, newRecoveryCodes, newTotpSecret, recoveryCodeHash, totpStep } from './second-factor.js';
import { accountErrors } from './errors.js';
import { dummyHash, hashPassword, verifyPassword } from './passwords.js';

/** Sign-in throttling: this many failures in a row for one email lock it for `LOCK_MS`. */
export const MAX_FAILURES_PER_EMAIL = 5;
/** Failures from one client address within `LOCK_MS` before it is throttled, whatever the email. */
export const MAX_FAILURES_PER_IP = 30;
export const LOCK_MS = 15 * 60_000;
/** How long sign-in attempts are kept (see Accounts.purge). */
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
/** A teammate's email (an existing user's: only bounded and normalized). */
const personInput = z.object({ email: z.string().max(254).transform(normalizeEmail) });
/** A TOTP code (6 digits; spaces allowed, as apps show them). */
const totpCodeInput = z.object({ code: z.string().max(20) });
/** A second-factor check: a TOTP code, or one of the recovery codes. */
const secondFactorInput = z
  .object({
    code: z.string().max(20).optional(),
    recoveryCode: z.string().max(40).optional(),
    passkey: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((v) => [v.code, v.recoveryCode, v.passkey].filter((x) => x !== undefined).length === 1, {
    message: 'give one of code, recoveryCode or passkey',
    path: ['code'],
  });
/** A passkey's registration: the browser's answer, and a name the person chooses. */
const passkeyRegistrationInput = z.object({
  name: z.string().trim().min(1).max(60).regex(NO_CONTROL_CHARACTERS, 'no control characters'),
  response: z.record(z.string(), z.unknown()),
});
/** A sign-in with a passkey alone: the browser's assertion. */
const passkeySignInInput = z.object({ response: z.record(z.string(), z.unknown()) });
/** The merchant's security settings, set by owners. */
const securityInput = z.object({ requireSecondFactor: z.boolean() }).strict();
/** A password change: the current one, and the new one. */
const passwordInput = z.object({ currentPassword: z.string().max(1024), newPassword });
/** `acceptInvitation`'s body: the setup link's token and the new password. */
const setupInput = z.object({ token: z.string().min(1).max(200), password: newPassword });
/** `signIn`'s body: only bounded, not checked as an address or a password rule (a wrong one just fails). */
const signInInput = z.object({
  email: z.string().max(254).regex(NO_CONTROL_CHARACTERS, 'no control characters').transform(normalizeEmail),
  password: z.string().max(1024),
});

/** The merchant a portal session acts for. */
export interface AccountMerchant {
  readonly id: bigint;
  readonly name: string;
  readonly accessKey: string;
  readonly environment: Environment;
}

/** A valid session, as the routes see it. The raw token never leaves the cookie. */
export interface AccountSession<R extends string = string> {
  readonly sessionId: bigint;
  readonly userId: bigint;
  readonly email: string;
  readonly role: R;
  /** The merchant of a portal session; null in the back office (an operator belongs to the platform). */
  readonly merchant: AccountMerchant | null;
  /** The person's second factor, and this session's checks of it. */
  readonly secondFactor: {
    /** The person has one (TOTP or a passkey). */
    readonly enabled: boolean;
    readonly totp: boolean;
    readonly passkeys: boolean;
    /** The session was opened with the password and waits for a code. */
    readonly pending: boolean;
    /** When this session last checked it (sign-in or step-up). */
    readonly checkedAt: number | null;
    /** One is required: always of an operator; of a merchant's people when its owners say so. */
    readonly required: boolean;
  };
  readonly expiresAt: number;
  /** The CSRF token state-changing requests must echo in `X-CSRF-Token`. */
  readonly csrfToken: string;
}

/** A person as the people pages list them (the wire's PortalPerson for the portal). */
export interface Person<R extends string = string> {
  readonly email: string;
  readonly role: R;
  /** The person has set a password. */
  readonly activated: boolean;
  readonly invitationExpiresAt: number | null;
  readonly createdAt: number;
  /** Operators only: whether they have set up their second factor yet. */
  readonly secondFactor?: boolean;
}

export interface Invitation<R extends string = string> {
  readonly email: string;
  /** The merchant's access key (portal); null for an operator. */
  readonly accessKey: string | null;
  readonly role: R;
  /** One-time secret of the setup link; only its SHA-256 is stored. */
  readonly setupToken: string;
  readonly expiresAt: number;
  /** Whether the user existed already (a new link then works like a password reset). */
  readonly existing: boolean;
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
export class Accounts<R extends string = string> {
  /** `invite`'s email and role (wrapped in an object so an error names the field). */
  private readonly inviteInput;
  /** A role change. */
  private readonly roleInput;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'environment' | 'publicUrl'>,
    /** Who these accounts are: the portal's people or the back office's operators. */
    readonly audience: Audience<R>,
    /** Merchants are read through their module: the merchants table is not this module's. */
    private readonly merchants: Pick<Merchants, 'idOf' | 'findId' | 'profile'>,
    private readonly audit: Audit,
    /** Seals TOTP secrets under the master key, as the platform keys are. */
    private readonly sealer: SecretSealer,
    private readonly now: () => number = Date.now,
  ) {
    const roles = z.enum(audience.roles as unknown as [R, ...R[]]);
    this.inviteInput = z.object({ email, role: roles.optional() });
    this.roleInput = personInput.extend({ role: roles });
  }

  /** The audit context of a person of this audience acting through a request. */
  contextOf(email: string, client: ClientInfo): AuditContext {
    return { actor: this.audience.actor(email), ip: client.ip, requestId: client.requestId };
  }

  /** The merchant whose people `accessKey` names (the portal), or none (the back office). */
  private async peopleOf(accessKey: string | null): Promise<bigint | null> {
    if (this.audience.ofMerchant !== (accessKey !== null)) {
      throw new Error(
        `${this.audience.name} accounts ${this.audience.ofMerchant ? 'belong to a merchant' : 'belong to no merchant'}`,
      );
    }
    return accessKey === null ? null : this.merchants.idOf(accessKey);
  }

  /**
   * Invites `email` (to the merchant with `accessKey`, or to the back office when null) as `role`
   * (a new portal user: owner unless said) and returns a one-time setup token. An existing account
   * gets a fresh token (their password keeps working until the link is used) and, when `role` is
   * given, that role; an email that belongs to another merchant is refused. From the web app
   * (`fromApp`), an activated account is refused: the link would let the inviter reset their password.
   */
  async invite(
    accessKey: string | null,
    input: unknown,
    context: AuditContext,
    fromApp = false,
  ): Promise<Invitation<R>> {
    const { email: address, role } = parseInput(this.inviteInput, input);
    const merchantId = await this.peopleOf(accessKey);
    const token = newToken();
    const now = new Date(this.now());
    const expiresAt = new Date(now.getTime() + INVITATION_MS);
    return this.db.transaction(async (tx) => {
      await this.lockPeople(tx, merchantId);
      const before = await tx.query<{ id: bigint; merchant_id: bigint | null; role: R; password_hash: string | null }>(
        'SELECT id, merchant_id, role, password_hash FROM portal_users WHERE audience = $1 AND environment = $2 AND email = $3',
        [this.audience.name, this.config.environment, address],
      );
      const existing = before.rows[0];
      if (existing && existing.merchant_id !== merchantId) {
        throw new DomainError('CONFLICT', 'this email is a portal user of another merchant');
      }
      if (existing && fromApp && existing.password_hash !== null) {
        throw new DomainError('CONFLICT', 'this person is a teammate already: change their role instead');
      }
      if (existing && role !== undefined && role !== existing.role) {
        await this.checkNotLastKeeper(tx, merchantId, existing, 'demoted');
      }
      // A new account needs a role where the audience has no default (an operator's is always said).
      if (!existing && role === undefined && this.audience.defaultRole === undefined) {
        throw validationFailed([{ field: 'role', message: `one of ${this.audience.roles.join(', ')}` }]);
      }
      const result = await tx.query<{ role: R }>(
        `INSERT INTO portal_users (audience, merchant_id, environment, email, role, invite_token_hash, invite_expires_at,
                                   created_at, updated_at)
         VALUES ($8, $1, $2, $3, coalesce($7, $9), $4, $5, $6, $6)
         ON CONFLICT (audience, environment, email) DO UPDATE
            SET invite_token_hash = EXCLUDED.invite_token_hash, invite_expires_at = EXCLUDED.invite_expires_at,
                role = coalesce($7, portal_users.role), updated_at = EXCLUDED.updated_at
          WHERE portal_users.merchant_id IS NOT DISTINCT FROM EXCLUDED.merchant_id
         RETURNING role`,
        [
          merchantId,
          this.config.environment,
          address,
          sha256(token),
          expiresAt,
          now,
          role ?? null,
          this.audience.name,
          this.audience.defaultRole ?? null,
        ],
      );
      const row = result.rows[0];
      if (!row) throw new DomainError('CONFLICT', 'this email is a portal user of another merchant');
      await this.audit.record(tx, context, {
        action: this.audience.ofMerchant ? 'person.invited' : 'operator.invited',
        merchant: accessKey,
        object: address,
        detail: { role: row.role, existing: existing !== undefined },
      });
      return {
        email: address,
        accessKey,
        role: row.role,
        setupToken: token,
        expiresAt: expiresAt.getTime(),
        existing: existing !== undefined,
      };
    });
  }

  /** The setup link of an invitation: the token travels in the fragment, so no server log or Referer sees it. */
  setupUrl(invitation: Pick<Invitation, 'setupToken'>): string {
    return `${this.config.publicUrl}${this.audience.setupPath}#token=${invitation.setupToken}`;
  }

  /** Changes a person's role; the last holder of the keeper role (owner, admin) cannot be demoted (CONFLICT). */
  async setRole(merchant: AccountMerchant | null, input: unknown, context: AuditContext): Promise<Person<R>[]> {
    const { email: address, role } = parseInput(this.roleInput, input);
    const merchantId = merchant?.id ?? null;
    await this.db.transaction(async (tx) => {
      await this.lockPeople(tx, merchantId);
      const user = await this.teammate(tx, merchantId, address);
      if (user.role === role) return;
      await this.checkNotLastKeeper(tx, merchantId, user, 'demoted');
      await tx.query('UPDATE portal_users SET role = $2, updated_at = $3 WHERE id = $1', [
        user.id,
        role,
        new Date(this.now()),
      ]);
      await this.audit.record(tx, context, {
        action: this.audience.ofMerchant ? 'person.role_changed' : 'operator.role_changed',
        merchant: merchant?.accessKey ?? null,
        object: address,
        detail: { from: user.role, to: role },
      });
    });
    return this.users(merchant?.accessKey ?? null);
  }

  /** Removes a person and ends their sessions; the last holder of the keeper role cannot be removed (CONFLICT). */
  async remove(merchant: AccountMerchant | null, input: unknown, context: AuditContext): Promise<Person<R>[]> {
    const { email: address } = parseInput(personInput, input);
    const merchantId = merchant?.id ?? null;
    await this.db.transaction(async (tx) => {
      await this.lockPeople(tx, merchantId);
      const user = await this.teammate(tx, merchantId, address);
      await this.checkNotLastKeeper(tx, merchantId, user, 'removed');
      await tx.query('DELETE FROM portal_sessions WHERE user_id = $1', [user.id]);
      await tx.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [user.id]);
      await tx.query('DELETE FROM portal_passkeys WHERE user_id = $1', [user.id]);
      await tx.query('DELETE FROM portal_webauthn_challenges WHERE user_id = $1', [user.id]);
      await tx.query('DELETE FROM portal_users WHERE id = $1', [user.id]);
      await this.audit.record(tx, context, {
        action: this.audience.ofMerchant ? 'person.removed' : 'operator.removed',
        merchant: merchant?.accessKey ?? null,
        object: address,
        detail: { role: user.role },
      });
    });
    return this.users(merchant?.accessKey ?? null);
  }

  /** Serializes changes to one merchant's people, or to the operators (so two cannot demote each other at once). */
  private async lockPeople(tx: Queryable, merchantId: bigint | null): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      merchantId === null ? `${this.audience.name}-people` : `portal-people:${merchantId}`,
    ]);
  }

  private async teammate(tx: Queryable, merchantId: bigint | null, address: string) {
    const users = await tx.query<{ id: bigint; role: R; password_hash: string | null }>(
      `SELECT id, role, password_hash FROM portal_users
        WHERE audience = $4 AND merchant_id IS NOT DISTINCT FROM $1 AND environment = $2 AND email = $3 FOR UPDATE`,
      [merchantId, this.config.environment, address, this.audience.name],
    );
    const user = users.rows[0];
    if (!user) throw new DomainError('NOT_FOUND', this.audience.ofMerchant ? 'no such teammate' : 'no such operator');
    return user;
  }

  /**
   * Refuses to demote or remove `user` when they are the last holder of the keeper role (the
   * merchant's last owner, the last admin) who can sign in (one whose invitation is still open
   * cannot act yet). Called under `lockPeople`.
   */
  private async checkNotLastKeeper(
    tx: Queryable,
    merchantId: bigint | null,
    user: { id: bigint; role: R; password_hash: string | null },
    change: 'demoted' | 'removed',
  ): Promise<void> {
    const keeper = this.audience.keeperRole;
    if (user.role !== keeper || user.password_hash === null) return;
    const others = await tx.query(
      `SELECT 1 FROM portal_users
        WHERE audience = $4 AND merchant_id IS NOT DISTINCT FROM $1 AND environment = $5 AND role = $3
          AND password_hash IS NOT NULL AND id <> $2 LIMIT 1`,
      [merchantId, user.id, keeper, this.audience.name, this.config.environment],
    );
    if (others.rows.length === 0) {
      throw new DomainError(
        'CONFLICT',
        `the last ${keeper} cannot be ${change}: make another ${this.audience.ofMerchant ? 'teammate' : 'operator'} ${article(keeper)} ${keeper} first`,
      );
    }
  }

  /** The people of a merchant (by access key), or the operators (null). */
  async users(accessKey: string | null): Promise<Person<R>[]> {
    let merchantId: bigint | null = null;
    if (accessKey !== null) {
      const found = await this.merchants.findId(accessKey);
      if (found === undefined) return [];
      merchantId = found;
    }
    const result = await this.db.query<{
      email: string;
      role: R;
      password_hash: string | null;
      invite_expires_at: Date | null;
      created_at: Date;
      totp_enabled_at: Date | null;
      has_passkey: boolean;
    }>(
      `SELECT email, role, password_hash, invite_expires_at, created_at, totp_enabled_at,
              EXISTS (SELECT 1 FROM portal_passkeys p WHERE p.user_id = portal_users.id) AS has_passkey
         FROM portal_users WHERE audience = $2 AND merchant_id IS NOT DISTINCT FROM $1 AND environment = $3 ORDER BY id`,
      [merchantId, this.audience.name, this.config.environment],
    );
    return result.rows.map((r) => ({
      email: r.email,
      role: r.role,
      activated: r.password_hash !== null,
      invitationExpiresAt: r.invite_expires_at?.getTime() ?? null,
      createdAt: r.created_at.getTime(),
      ...(this.audience.ofMerchant ? {} : { secondFactor: r.totp_enabled_at !== null || r.has_passkey }),
    }));
  }

  /**
   * Sets the password through a setup link; the link then stops working and old sessions end. The
   * person is signed in by it, as by their password: the session waits for the second factor when
   * they have one, and may only set one up when one is required and they have none.
   */
  async acceptInvitation(input: unknown, client: ClientInfo): Promise<{ token: string; session: AccountSession<R> }> {
    const { token: setupToken, password } = parseInput(setupInput, input);
    const now = this.now();
    const hash = await hashPassword(password);
    const token = newToken();
    await this.db.transaction(async (tx) => {
      const updated = await tx.query<{ id: bigint; email: string; merchant_id: bigint | null }>(
        `UPDATE portal_users SET password_hash = $2, invite_token_hash = NULL, invite_expires_at = NULL, updated_at = $3
          WHERE invite_token_hash = $1 AND invite_expires_at > $3 AND environment = $4 AND audience = $5
          RETURNING id, email, merchant_id`,
        [sha256(setupToken), hash, new Date(now), this.config.environment, this.audience.name],
      );
      const user = updated.rows[0];
      if (!user) throw new DomainError('INVITATION_INVALID', accountErrors.INVITATION_INVALID.message);
      const merchant = user.merchant_id === null ? null : await this.merchants.profile(user.merchant_id, tx);
      // The link of a disabled merchant's person stays unused (it works once the merchant is enabled).
      if (merchant !== null && merchant?.disabled !== false) {
        throw new DomainError('MERCHANT_DISABLED', accountErrors.MERCHANT_DISABLED.message);
      }
      await tx.query('UPDATE portal_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL', [
        user.id,
        new Date(now),
      ]);
      const opened = await this.openSession(tx, token, user.id, client, now);
      // One entry for both: the password set, and the sign-in it is (working, or waiting for the
      // second factor as a sign-in with the password alone would).
      await this.audit.record(tx, this.contextOf(user.email, client), {
        action: 'password.set',
        merchant: merchant?.accessKey ?? null,
        object: user.email,
        detail: { through: 'setup link', signedIn: opened.working ? 'yes' : 'second factor needed' },
      });
    });
    const session = await this.session(token);
    if (!session) throw new Error('a new session could not be read back');
    return { token, session };
  }

  /**
   * Opens a session for `userId` inside `tx` (its merchant copied from the account). A password
   * alone opens a session that waits for the second factor when the person has one (`pending`);
   * a passkey sign-in is both factors (`secondFactorAt`). Answers whether the session works
   * already: neither waiting for a code nor limited to setting up a required second factor.
   */
  private async openSession(
    tx: Queryable,
    token: string,
    userId: bigint,
    client: ClientInfo,
    now: number,
    secondFactorAt?: number,
  ): Promise<{ working: boolean }> {
    const opened = await tx.query<{ pending: boolean; has_factor: boolean }>(
      `INSERT INTO portal_sessions (token_hash, user_id, merchant_id, created_at, last_seen_at, expires_at, user_agent, ip,
                                    second_factor_pending, second_factor_at)
       SELECT $1, u.id, u.merchant_id, $3, $3, $4, $5, $6,
              $7::timestamptz IS NULL AND (u.totp_enabled_at IS NOT NULL OR EXISTS (SELECT 1 FROM portal_passkeys p WHERE p.user_id = u.id)),
              $7
         FROM portal_users u WHERE u.id = $2
       RETURNING second_factor_pending AS pending,
                 second_factor_at IS NOT NULL OR second_factor_pending AS has_factor`,
      [
        sha256(token),
        userId,
        new Date(now),
        new Date(now + this.audience.sessionMaxMs),
        client.userAgent ?? null,
        client.ip,
        secondFactorAt === undefined ? null : new Date(secondFactorAt),
      ],
    );
    const row = opened.rows[0];
    if (!row) throw new DomainError('NOT_FOUND', 'no such user');
    const mandatory = this.audience.secondFactor === 'mandatory';
    return { working: !row.pending && (row.has_factor || !mandatory) };
  }

  /**
   * Signs in. The attempt is recorded as a failure before the password is checked (and turned
   * into a success after), under a per-email lock, so parallel guesses cannot slip past the
   * lockout. Attempts while locked are refused without being checked or recorded.
   */
  async signIn(input: unknown, client: ClientInfo): Promise<{ token: string; session: AccountSession<R> }> {
    const credentials = parseInput(signInInput, input);
    const ip = client.ip;
    const now = this.now();
    const attemptId = await this.attempt(credentials.email, ip, now);

    // A user's environment is its merchant's (an invitation names a merchant of this environment).
    const users = await this.db.query<{ id: bigint; password_hash: string | null; merchant_id: bigint | null }>(
      'SELECT id, password_hash, merchant_id FROM portal_users WHERE audience = $3 AND environment = $1 AND email = $2',
      [this.config.environment, credentials.email, this.audience.name],
    );
    const user = users.rows[0];
    const merchant =
      user === undefined || user.merchant_id === null ? undefined : await this.merchants.profile(user.merchant_id);
    const context = this.contextOf(credentials.email, client);
    const failed = async (reason: string) =>
      this.audit.recordAlone(context, {
        action: 'signin.failed',
        merchant: merchant?.accessKey ?? null,
        object: credentials.email,
        detail: { reason },
      });
    const stored = user?.password_hash ?? (await dummyHash());
    const ok = (await verifyPassword(credentials.password, stored)) && user?.password_hash != null;
    if (!ok || !user) {
      await failed(user === undefined ? 'unknown email' : 'wrong password');
      throw new DomainError('LOGIN_FAILED', accountErrors.LOGIN_FAILED.message);
    }
    // Said only after the right password; the attempt stays counted as a failure.
    if (this.audience.ofMerchant && merchant?.disabled !== false) {
      await failed('merchant disabled');
      throw new DomainError('MERCHANT_DISABLED', accountErrors.MERCHANT_DISABLED.message);
    }

    const token = newToken();
    await this.db.transaction(async (tx) => {
      await tx.query('UPDATE login_attempts SET succeeded = true WHERE id = $1', [attemptId]);
      const opened = await this.openSession(tx, token, user.id, client, now);
      // With a second factor the session waits for its code: signed in only once it is given.
      await this.audit.record(tx, context, {
        action: opened.working ? 'signin.succeeded' : 'signin.password_accepted',
        merchant: merchant?.accessKey ?? null,
        object: credentials.email,
      });
    });
    const session = await this.session(token);
    if (!session) throw new Error('a new session could not be read back');
    return { token, session };
  }

  /**
   * Records an attempt (a password or a second-factor code) for `email` from `ip` as a failure,
   * first refusing it while the email or the address is locked out (LOGIN_LOCKED); the caller
   * marks it succeeded once the secret checks out. Under a per-email lock, so parallel guesses
   * cannot slip past the lockout. Answers the attempt's id.
   */
  private attempt(email: string, ip: string, now: number): Promise<bigint> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.audience.name}-login:${email}`]);
      const since = new Date(now - LOCK_MS);
      const recent = await tx.query<{ succeeded: boolean; created_at: Date }>(
        `SELECT succeeded, created_at FROM login_attempts WHERE audience = $4 AND email = $1 AND created_at > $2
          ORDER BY created_at DESC, id DESC LIMIT $3`,
        [email, since, MAX_FAILURES_PER_EMAIL, this.audience.name],
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
        'INSERT INTO login_attempts (audience, email, ip, succeeded, created_at) VALUES ($4, $1, $2, false, $3) RETURNING id',
        [email, ip, new Date(now), this.audience.name],
      );
      return inserted.rows[0]?.id as bigint;
    });
  }

  /** The live session of a cookie token, or `undefined` (unknown, revoked, expired or idle). */
  async session(token: string): Promise<AccountSession<R> | undefined> {
    if (token.length === 0 || token.length > 100) return undefined;
    const now = this.now();
    const result = await this.db.query<{
      id: bigint;
      user_id: bigint;
      email: string;
      role: R;
      merchant_id: bigint | null;
      last_seen_at: Date;
      expires_at: Date;
      second_factor_pending: boolean;
      second_factor_at: Date | null;
      totp_enabled_at: Date | null;
      required: boolean | null;
      has_passkey: boolean;
    }>(
      `SELECT s.id, s.user_id, u.email, u.role, s.merchant_id, s.last_seen_at, s.expires_at,
              s.second_factor_pending, s.second_factor_at, u.totp_enabled_at, m.require_second_factor AS required,
              EXISTS (SELECT 1 FROM portal_passkeys p WHERE p.user_id = u.id) AS has_passkey
         FROM portal_sessions s
         JOIN portal_users u ON u.id = s.user_id
         LEFT JOIN portal_merchant_settings m ON m.merchant_id = s.merchant_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND s.last_seen_at > $3
          AND u.audience = $4 AND u.environment = $5`,
      [
        sha256(token),
        new Date(now),
        new Date(now - this.audience.sessionIdleMs),
        this.audience.name,
        this.config.environment,
      ],
    );
    const row = result.rows[0];
    // A session of the other audience opens nothing here: the row is not found.
    if (!row) return undefined;
    let merchant: AccountMerchant | null = null;
    if (this.audience.ofMerchant) {
      const profile = row.merchant_id === null ? undefined : await this.merchants.profile(row.merchant_id);
      // A disabled merchant's sessions were revoked when it was disabled (endSessions); this check
      // also covers a session that slipped in between.
      if (profile?.environment !== this.config.environment || profile.disabled) return undefined;
      merchant = profile;
    }
    if (now - row.last_seen_at.getTime() > TOUCH_MS) {
      await this.db.query('UPDATE portal_sessions SET last_seen_at = $2 WHERE id = $1', [row.id, new Date(now)]);
    }
    return {
      sessionId: row.id,
      userId: row.user_id,
      email: row.email,
      role: row.role,
      merchant,
      expiresAt: Math.min(
        row.expires_at.getTime(),
        Math.max(now, row.last_seen_at.getTime()) + this.audience.sessionIdleMs,
      ),
      csrfToken: csrfTokenFor(token),
      secondFactor: {
        enabled: row.totp_enabled_at !== null || row.has_passkey,
        totp: row.totp_enabled_at !== null,
        passkeys: row.has_passkey,
        pending: row.second_factor_pending,
        checkedAt: row.second_factor_at?.getTime() ?? null,
        required: this.audience.secondFactor === 'mandatory' || row.required === true,
      },
    };
  }

  /** Ends every session of a merchant (called when it is disabled, in that transaction). */
  async endSessions(tx: Queryable, merchantId: bigint): Promise<void> {
    await tx.query('UPDATE portal_sessions SET revoked_at = $2 WHERE merchant_id = $1 AND revoked_at IS NULL', [
      merchantId,
      new Date(this.now()),
    ]);
  }

  /** The person's live sessions, the newest first. */
  async sessions(session: AccountSession<R>): Promise<PortalSessionInfo[]> {
    const now = this.now();
    const result = await this.db.query<{
      id: bigint;
      created_at: Date;
      last_seen_at: Date;
      user_agent: string | null;
      ip: string | null;
    }>(
      `SELECT id, created_at, last_seen_at, user_agent, ip FROM portal_sessions
        WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3
        ORDER BY last_seen_at DESC, id DESC`,
      [session.userId, new Date(now), new Date(now - this.audience.sessionIdleMs)],
    );
    return result.rows.map((row) => ({
      id: row.id.toString(),
      current: row.id === session.sessionId,
      device: describeDevice(row.user_agent),
      userAgent: row.user_agent,
      ip: row.ip,
      createdAt: row.created_at.getTime(),
      lastSeenAt: row.last_seen_at.getTime(),
    }));
  }

  /** Ends one of the person's own sessions (NOT_FOUND for anyone else's). */
  async endSession(session: AccountSession<R>, sessionId: string, context: AuditContext): Promise<void> {
    if (!/^\d{1,18}$/.test(sessionId)) throw new DomainError('NOT_FOUND', 'no such session');
    await this.db.transaction(async (tx) => {
      const ended = await tx.query(
        'UPDATE portal_sessions SET revoked_at = $3 WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL',
        [BigInt(sessionId), session.userId, new Date(this.now())],
      );
      if (ended.rowCount === 0) throw new DomainError('NOT_FOUND', 'no such session');
      await this.audit.record(tx, context, {
        action: 'session.ended',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { session: sessionId },
      });
    });
  }

  /**
   * Changes the person's password, given the current one; every other session of theirs ends.
   * A wrong current password is LOGIN_FAILED and counts as a failed sign-in for the lockout.
   */
  async changePassword(
    session: AccountSession<R>,
    input: unknown,
    context: AuditContext,
  ): Promise<{ endedSessions: number }> {
    const { currentPassword, newPassword: password } = parseInput(passwordInput, input);
    // The current password is checked like a sign-in: refused while locked out, a wrong one counted.
    const attemptId = await this.attempt(session.email, context.ip ?? '', this.now());
    const users = await this.db.query<{ password_hash: string | null }>(
      'SELECT password_hash FROM portal_users WHERE id = $1',
      [session.userId],
    );
    const stored = users.rows[0]?.password_hash ?? (await dummyHash());
    if (!(await verifyPassword(currentPassword, stored))) {
      await this.audit.recordAlone(context, {
        action: 'password.change_failed',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { reason: 'wrong current password' },
      });
      throw new DomainError('LOGIN_FAILED', 'the current password is wrong');
    }
    await this.db.query('UPDATE login_attempts SET succeeded = true WHERE id = $1', [attemptId]);
    const hash = await hashPassword(password);
    const now = new Date(this.now());
    return this.db.transaction(async (tx) => {
      await tx.query('UPDATE portal_users SET password_hash = $2, updated_at = $3 WHERE id = $1', [
        session.userId,
        hash,
        now,
      ]);
      const ended = await tx.query(
        'UPDATE portal_sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL',
        [session.userId, session.sessionId, now],
      );
      await this.audit.record(tx, context, {
        action: 'password.changed',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { endedSessions: ended.rowCount },
      });
      return { endedSessions: ended.rowCount };
    });
  }

  // ---- The second factor (TOTP and recovery codes) ----

  /** The person's second factor: whether on, how many recovery codes are left, whether required. */
  async secondFactorStatus(session: AccountSession<R>) {
    const left = await this.db.query<{ n: bigint }>(
      'SELECT count(*)::bigint AS n FROM portal_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
      [session.userId],
    );
    return {
      enabled: session.secondFactor.enabled,
      totp: session.secondFactor.totp,
      passkeys: session.secondFactor.passkeys,
      recoveryCodesLeft: Number(left.rows[0]?.n ?? 0),
      required: session.secondFactor.required,
    };
  }

  /**
   * Starts setting up TOTP: a new secret, kept aside (sealed) until `confirmTotp` gets a first
   * code from it. Answers what the authenticator app is shown: a QR code and the secret as text.
   */
  async startTotp(session: AccountSession<R>, context: AuditContext) {
    const secret = newTotpSecret();
    const { sealed, sealedUnder } = this.sealer.seal(secret, totpData(session.userId));
    await this.db.transaction(async (tx) => {
      await tx.query(
        'UPDATE portal_users SET totp_pending_sealed = $2, totp_pending_sealed_under = $3, updated_at = $4 WHERE id = $1',
        [session.userId, sealed, sealedUnder, new Date(this.now())],
      );
      await this.audit.record(tx, context, {
        action: 'second_factor.setup_started',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { kind: 'totp' },
      });
    });
    return enrollment(secret, session.email, this.audience.issuer(session.merchant?.name));
  }

  /**
   * Turns TOTP on with the first code of the secret `startTotp` made, and answers ten fresh
   * recovery codes (shown once; only their hashes are kept). Wrong codes count as failed sign-ins.
   */
  async confirmTotp(
    session: AccountSession<R>,
    input: unknown,
    client: ClientInfo,
  ): Promise<{ recoveryCodes: string[] }> {
    const { code } = parseInput(totpCodeInput, input);
    const now = this.now();
    const attemptId = await this.attempt(session.email, client.ip, now);
    const codes = newRecoveryCodes();
    await this.db.transaction(async (tx) => {
      const user = await this.lockUser(tx, session.userId);
      if (user.totp_pending_sealed === null || user.totp_pending_sealed_under === null) {
        throw new DomainError('INVALID_STATE', 'start setting up the authenticator app first');
      }
      const secret = this.sealer.open(
        Buffer.from(user.totp_pending_sealed),
        totpData(session.userId),
        user.totp_pending_sealed_under,
      );
      const step = totpStep(secret, code, now);
      if (step === undefined) throw wrongCode();
      await tx.query(
        `UPDATE portal_users SET totp_sealed = totp_pending_sealed, totp_sealed_under = totp_pending_sealed_under,
                totp_pending_sealed = NULL, totp_pending_sealed_under = NULL, totp_enabled_at = $2, totp_last_step = $3,
                updated_at = $2
          WHERE id = $1`,
        [session.userId, new Date(now), step],
      );
      await tx.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [session.userId]);
      for (const recovery of codes) {
        await tx.query('INSERT INTO portal_recovery_codes (user_id, code_hash) VALUES ($1, $2)', [
          session.userId,
          recoveryCodeHash(recovery),
        ]);
      }
      await tx.query('UPDATE portal_sessions SET second_factor_at = $2, second_factor_pending = false WHERE id = $1', [
        session.sessionId,
        new Date(now),
      ]);
      await tx.query('UPDATE login_attempts SET succeeded = true WHERE id = $1', [attemptId]);
      await this.audit.record(tx, this.contextOf(session.email, client), {
        action: 'second_factor.added',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { kind: 'totp' },
      });
    });
    return { recoveryCodes: codes };
  }

  /**
   * Checks a code (TOTP or a recovery code) for the session: completes a sign-in waiting for it,
   * or refreshes the session's last check (step-up). A TOTP code is accepted once, a recovery code
   * is used up; wrong codes count as failed sign-ins (the sign-in lockout applies).
   */
  async checkSecondFactor(session: AccountSession<R>, input: unknown, client: ClientInfo): Promise<void> {
    const given = parseInput(secondFactorInput, input);
    const now = this.now();
    const attemptId = await this.attempt(session.email, client.ip, now);
    const context = this.contextOf(session.email, client);
    // A passkey's assertion is checked before the transaction (it reads and spends its challenge).
    const passkey = given.passkey === undefined ? undefined : await this.verifyPasskey(given.passkey, session.userId);
    const used = await this.db.transaction(async (tx) => {
      const user = await this.lockUser(tx, session.userId);
      const how =
        given.passkey === undefined
          ? await this.verifyCode(tx, user, given, now)
          : passkey === undefined
            ? undefined
            : await this.usePasskey(tx, passkey, now);
      if (how === undefined) return undefined;
      await tx.query('UPDATE portal_sessions SET second_factor_at = $2, second_factor_pending = false WHERE id = $1', [
        session.sessionId,
        new Date(now),
      ]);
      await tx.query('UPDATE login_attempts SET succeeded = true WHERE id = $1', [attemptId]);
      await this.audit.record(tx, context, {
        action: session.secondFactor.pending ? 'signin.succeeded' : 'second_factor.checked',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { with: how },
      });
      return how;
    });
    if (used === undefined) {
      await this.audit.recordAlone(context, {
        action: session.secondFactor.pending ? 'signin.failed' : 'second_factor.failed',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { reason: 'wrong code' },
      });
      throw wrongCode();
    }
  }

  /** Turns the second factor off (given a current code); every other session of the person ends. */
  async removeSecondFactor(session: AccountSession<R>, input: unknown, client: ClientInfo): Promise<void> {
    const given = parseInput(secondFactorInput, input);
    const now = this.now();
    const attemptId = await this.attempt(session.email, client.ip, now);
    const removed = await this.db.transaction(async (tx) => {
      const user = await this.lockUser(tx, session.userId);
      if (user.totp_sealed === null) throw new DomainError('INVALID_STATE', 'no second factor is set up');
      await this.checkKeepsSecondFactor(tx, session.userId, 'totp');
      if ((await this.verifyCode(tx, user, given, now)) === undefined) return false;
      await tx.query(
        `UPDATE portal_users SET totp_sealed = NULL, totp_sealed_under = NULL, totp_enabled_at = NULL, totp_last_step = NULL,
                updated_at = $2
          WHERE id = $1`,
        [session.userId, new Date(now)],
      );
      await tx.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [session.userId]);
      await tx.query(
        'UPDATE portal_sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL',
        [session.userId, session.sessionId, new Date(now)],
      );
      await tx.query('UPDATE login_attempts SET succeeded = true WHERE id = $1', [attemptId]);
      await this.audit.record(tx, this.contextOf(session.email, client), {
        action: 'second_factor.removed',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { kind: 'totp' },
      });
      return true;
    });
    if (!removed) throw wrongCode();
  }

  /**
   * Where a second factor is mandatory (operators), refuses to take away the last one: after
   * removing a `kind` (the passkey already deleted in `tx`), a TOTP or a passkey must remain.
   */
  private async checkKeepsSecondFactor(tx: Queryable, userId: bigint, kind: 'totp' | 'passkey'): Promise<void> {
    if (this.audience.secondFactor !== 'mandatory') return;
    const left = await tx.query<{ totp: boolean; passkeys: boolean }>(
      `SELECT totp_enabled_at IS NOT NULL AS totp,
              EXISTS (SELECT 1 FROM portal_passkeys p WHERE p.user_id = u.id) AS passkeys
         FROM portal_users u WHERE u.id = $1`,
      [userId],
    );
    const row = left.rows[0];
    const remains = kind === 'totp' ? row?.passkeys === true : row?.totp === true || row?.passkeys === true;
    if (!remains) {
      throw new DomainError(
        'CONFLICT',
        'an operator always has a second factor: add another one before removing this one',
      );
    }
  }

  // ---- Passkeys (WebAuthn) ----

  /** The relying party: this portal's host, and the origin ceremonies must come from. */
  private relyingParty() {
    const url = new URL(this.config.publicUrl);
    return { rpID: url.hostname, origin: url.origin };
  }

  private async newChallenge(purpose: 'register' | 'authenticate', challenge: string, userId: bigint | null) {
    const now = this.now();
    await this.db.query('DELETE FROM portal_webauthn_challenges WHERE expires_at < $1', [new Date(now)]);
    if (userId === null) {
      // Anyone may ask for a sign-in challenge: their number is bounded, so asking cannot fill the table.
      const open = await this.db.query<{ n: bigint }>(
        'SELECT count(*)::bigint AS n FROM portal_webauthn_challenges WHERE user_id IS NULL AND audience = $1',
        [this.audience.name],
      );
      if (Number(open.rows[0]?.n ?? 0) >= MAX_OPEN_SIGN_IN_CHALLENGES) {
        throw new DomainError('LOGIN_LOCKED', 'too many passkey sign-ins under way; try again in a few minutes', [], {
          retryAfterSeconds: CHALLENGE_MS / 1000,
        });
      }
    }
    await this.db.query(
      'INSERT INTO portal_webauthn_challenges (challenge, purpose, user_id, expires_at, audience) VALUES ($1, $2, $3, $4, $5)',
      [challenge, purpose, userId, new Date(now + CHALLENGE_MS), this.audience.name],
    );
  }

  /** Spends a challenge: true when it was issued for `purpose` (and `userId`), is unused and fresh. */
  private async spendChallenge(challenge: string, purpose: 'register' | 'authenticate', userId: bigint | null) {
    const spent = await this.db.query(
      `DELETE FROM portal_webauthn_challenges
        WHERE challenge = $1 AND purpose = $2 AND user_id IS NOT DISTINCT FROM $3 AND expires_at > $4 AND audience = $5`,
      [challenge, purpose, userId, new Date(this.now()), this.audience.name],
    );
    return spent.rowCount === 1;
  }

  /** The person's passkeys. */
  async passkeys(session: AccountSession<R>) {
    const rows = await this.db.query<{ id: bigint; name: string; created_at: Date; last_used_at: Date | null }>(
      'SELECT id, name, created_at, last_used_at FROM portal_passkeys WHERE user_id = $1 ORDER BY id',
      [session.userId],
    );
    return rows.rows.map((r) => ({
      id: r.id.toString(),
      name: r.name,
      createdAt: r.created_at.getTime(),
      lastUsedAt: r.last_used_at?.getTime() ?? null,
    }));
  }

  /** The options a browser's `navigator.credentials.create` takes to add a passkey. */
  async passkeyRegistrationOptions(session: AccountSession<R>) {
    const { rpID } = this.relyingParty();
    const existing = await this.db.query<{ credential_id: string }>(
      'SELECT credential_id FROM portal_passkeys WHERE user_id = $1',
      [session.userId],
    );
    const options = await generateRegistrationOptions({
      rpName: this.audience.issuer(session.merchant?.name),
      rpID,
      userName: session.email,
      userID: new TextEncoder().encode(`${this.audience.name}-user:${session.userId}`),
      attestationType: 'none',
      excludeCredentials: existing.rows.map((r) => ({ id: r.credential_id })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    await this.newChallenge('register', options.challenge, session.userId);
    return options;
  }

  /** Adds a passkey from the browser's answer to `passkeyRegistrationOptions`. */
  async registerPasskey(session: AccountSession<R>, input: unknown, client: ClientInfo) {
    const { name, response } = parseInput(passkeyRegistrationInput, input);
    const { rpID, origin } = this.relyingParty();
    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verification = await verifyRegistrationResponse({
        response: response as unknown as RegistrationResponseJSON,
        expectedChallenge: (challenge) => this.spendChallenge(challenge, 'register', session.userId),
        expectedOrigin: origin,
        expectedRPID: rpID,
        requireUserVerification: false,
      });
    } catch (error) {
      throw new DomainError('SECOND_FACTOR_FAILED', `the passkey could not be added: ${(error as Error).message}`);
    }
    if (!verification.verified) throw new DomainError('SECOND_FACTOR_FAILED', 'the passkey could not be added');
    const { credential } = verification.registrationInfo;
    const now = new Date(this.now());
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO portal_passkeys (user_id, credential_id, public_key, counter, transports, name, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          session.userId,
          credential.id,
          Buffer.from(credential.publicKey),
          credential.counter,
          credential.transports?.join(',') ?? null,
          name,
          now,
        ],
      );
      // Adding it is a check of the person: it counts for step-up.
      await tx.query('UPDATE portal_sessions SET second_factor_at = $2 WHERE id = $1', [session.sessionId, now]);
      await this.audit.record(tx, this.contextOf(session.email, client), {
        action: 'second_factor.added',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { kind: 'passkey', name },
      });
    });
    return this.passkeys(session);
  }

  /** Removes one of the person's passkeys; every other session of theirs ends. */
  async removePasskey(session: AccountSession<R>, passkeyId: string, client: ClientInfo) {
    if (!/^\d{1,18}$/.test(passkeyId)) throw new DomainError('NOT_FOUND', 'no such passkey');
    await this.db.transaction(async (tx) => {
      const removed = await tx.query<{ name: string }>(
        'DELETE FROM portal_passkeys WHERE id = $1 AND user_id = $2 RETURNING name',
        [BigInt(passkeyId), session.userId],
      );
      const row = removed.rows[0];
      if (!row) throw new DomainError('NOT_FOUND', 'no such passkey');
      await this.checkKeepsSecondFactor(tx, session.userId, 'passkey');
      await tx.query(
        'UPDATE portal_sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL',
        [session.userId, session.sessionId, new Date(this.now())],
      );
      await this.audit.record(tx, this.contextOf(session.email, client), {
        action: 'second_factor.removed',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
        detail: { kind: 'passkey', name: row.name },
      });
    });
    return this.passkeys(session);
  }

  /**
   * The options of `navigator.credentials.get`: for a sign-in with a passkey alone (no session:
   * any of this environment's passkeys, chosen in the browser), or for the session's person.
   */
  async passkeyAuthenticationOptions(session?: AccountSession<R>) {
    const { rpID } = this.relyingParty();
    const allow =
      session === undefined
        ? []
        : (
            await this.db.query<{ credential_id: string; transports: string | null }>(
              'SELECT credential_id, transports FROM portal_passkeys WHERE user_id = $1',
              [session.userId],
            )
          ).rows.map((r) => ({
            id: r.credential_id,
            ...(r.transports ? { transports: r.transports.split(',') as AuthenticatorTransport[] } : {}),
          }));
    const options = await generateAuthenticationOptions({
      rpID,
      allowCredentials: allow,
      userVerification: 'preferred',
    });
    await this.newChallenge('authenticate', options.challenge, session?.userId ?? null);
    return options;
  }

  /**
   * Checks a passkey assertion (for `userId`'s challenge, or a sign-in's when null); answers the
   * passkey and its new counter, or undefined when it does not verify.
   */
  private async verifyPasskey(response: Record<string, unknown>, userId: bigint | null) {
    const assertion = response as unknown as AuthenticationResponseJSON;
    if (typeof assertion.id !== 'string' || assertion.id.length > 1000) return undefined;
    const rows = await this.db.query<{
      id: bigint;
      user_id: bigint;
      credential_id: string;
      public_key: Uint8Array;
      counter: bigint;
      transports: string | null;
    }>(
      `SELECT p.id, p.user_id, p.credential_id, p.public_key, p.counter, p.transports
         FROM portal_passkeys p JOIN portal_users u ON u.id = p.user_id
        WHERE p.credential_id = $1 AND u.environment = $2 AND u.audience = $3`,
      [assertion.id, this.config.environment, this.audience.name],
    );
    const passkey = rows.rows[0];
    if (!passkey || (userId !== null && passkey.user_id !== userId)) return undefined;
    const { rpID, origin } = this.relyingParty();
    try {
      const verification = await verifyAuthenticationResponse({
        response: assertion,
        expectedChallenge: (challenge) => this.spendChallenge(challenge, 'authenticate', userId),
        expectedOrigin: origin,
        expectedRPID: rpID,
        credential: {
          id: passkey.credential_id,
          publicKey: new Uint8Array(passkey.public_key),
          counter: Number(passkey.counter),
          ...(passkey.transports ? { transports: passkey.transports.split(',') as AuthenticatorTransport[] } : {}),
        },
        requireUserVerification: false,
      });
      if (!verification.verified) return undefined;
      return { id: passkey.id, userId: passkey.user_id, newCounter: verification.authenticationInfo.newCounter };
    } catch {
      return undefined;
    }
  }

  /** Records a verified passkey's use (its counter, when used) inside `tx`. */
  private async usePasskey(tx: Queryable, passkey: { id: bigint; newCounter: number }, now: number) {
    await tx.query('UPDATE portal_passkeys SET counter = $2, last_used_at = $3 WHERE id = $1', [
      passkey.id,
      passkey.newCounter,
      new Date(now),
    ]);
    return 'passkey' as const;
  }

  /** A sign-in with a passkey alone: the passkey is both factors (a session not waiting for a code). */
  async signInWithPasskey(input: unknown, client: ClientInfo): Promise<{ token: string; session: AccountSession<R> }> {
    const { response } = parseInput(passkeySignInInput, input);
    const now = this.now();
    const passkey = await this.verifyPasskey(response, null);
    if (passkey === undefined) {
      await this.audit.recordAlone(
        { actor: { kind: 'system' }, ip: client.ip, requestId: client.requestId },
        { action: 'signin.failed', merchant: null, detail: { reason: 'passkey not recognised' } },
      );
      throw new DomainError('LOGIN_FAILED', 'this passkey is not recognised');
    }
    const users = await this.db.query<{ email: string; merchant_id: bigint | null }>(
      'SELECT email, merchant_id FROM portal_users WHERE id = $1',
      [passkey.userId],
    );
    const user = users.rows[0];
    if (!user) throw new DomainError('LOGIN_FAILED', 'this passkey is not recognised');
    const merchant = user.merchant_id === null ? null : await this.merchants.profile(user.merchant_id);
    if (this.audience.ofMerchant && merchant?.disabled !== false) {
      throw new DomainError('MERCHANT_DISABLED', accountErrors.MERCHANT_DISABLED.message);
    }
    const token = newToken();
    await this.db.transaction(async (tx) => {
      await this.usePasskey(tx, passkey, now);
      await this.openSession(tx, token, passkey.userId, client, now, now);
      await this.audit.record(tx, this.contextOf(user.email, client), {
        action: 'signin.succeeded',
        merchant: merchant?.accessKey ?? null,
        object: user.email,
        detail: { with: 'passkey' },
      });
    });
    const session = await this.session(token);
    if (!session) throw new Error('a new session could not be read back');
    return { token, session };
  }

  /** Whether the merchant's owners require a second factor of everyone. */
  async setRequireSecondFactor(merchant: AccountMerchant, input: unknown, context: AuditContext) {
    const { requireSecondFactor } = parseInput(securityInput, input);
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO portal_merchant_settings (merchant_id, require_second_factor, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (merchant_id) DO UPDATE SET require_second_factor = EXCLUDED.require_second_factor,
                                                 updated_at = EXCLUDED.updated_at`,
        [merchant.id, requireSecondFactor, new Date(this.now())],
      );
      await this.audit.record(tx, context, {
        action: 'security.changed',
        merchant: merchant.accessKey,
        detail: { requireSecondFactor },
      });
    });
    return { requireSecondFactor };
  }

  /**
   * Re-seals every TOTP secret not sealed under the current master key, inside the transaction of
   * `paygate master-key reseal` (which then retires the other master keys). Refused, like the
   * platform keys' re-seal, when one is sealed under a key this instance does not hold.
   */
  async resealSecrets(tx: Queryable): Promise<number> {
    const current = this.sealer.currentKeyId;
    const rows = await tx.query<{
      id: bigint;
      totp_sealed: Uint8Array | null;
      totp_sealed_under: string | null;
      totp_pending_sealed: Uint8Array | null;
      totp_pending_sealed_under: string | null;
    }>(
      `SELECT id, totp_sealed, totp_sealed_under, totp_pending_sealed, totp_pending_sealed_under FROM portal_users
        WHERE (totp_sealed IS NOT NULL AND totp_sealed_under <> $1)
           OR (totp_pending_sealed IS NOT NULL AND totp_pending_sealed_under <> $1)
        FOR UPDATE`,
      [current],
    );
    for (const row of rows.rows) {
      const reseal = (sealed: Uint8Array | null, under: string | null) => {
        if (sealed === null || under === null) return { sealed: null, sealedUnder: null };
        if (!this.sealer.holds(under)) {
          throw new DomainError(
            'INVALID_STATE',
            `a portal user's second factor is sealed under master key ${under}, which this instance does not hold: ` +
              'restart it with that key in PAYGATE_MASTER_KEY_PREVIOUS first',
          );
        }
        return this.sealer.seal(this.sealer.open(Buffer.from(sealed), totpData(row.id), under), totpData(row.id));
      };
      const active = reseal(row.totp_sealed, row.totp_sealed_under);
      const pending = reseal(row.totp_pending_sealed, row.totp_pending_sealed_under);
      await tx.query(
        `UPDATE portal_users SET totp_sealed = $2, totp_sealed_under = $3, totp_pending_sealed = $4,
                totp_pending_sealed_under = $5 WHERE id = $1`,
        [row.id, active.sealed, active.sealedUnder, pending.sealed, pending.sealedUnder],
      );
    }
    return rows.rows.length;
  }

  private async lockUser(tx: Queryable, userId: bigint) {
    const users = await tx.query<{
      id: bigint;
      totp_sealed: Uint8Array | null;
      totp_sealed_under: string | null;
      totp_pending_sealed: Uint8Array | null;
      totp_pending_sealed_under: string | null;
      totp_last_step: bigint | null;
    }>(
      `SELECT id, totp_sealed, totp_sealed_under, totp_pending_sealed, totp_pending_sealed_under, totp_last_step
         FROM portal_users WHERE id = $1 FOR UPDATE`,
      [userId],
    );
    const user = users.rows[0];
    if (!user) throw new DomainError('NOT_FOUND', 'no such user');
    return user;
  }

  /**
   * Checks `given` against the user's TOTP secret (a code of a time step not used before) or an
   * unused recovery code, using it up; answers how it was checked, or undefined when it was not.
   */
  private async verifyCode(
    tx: Queryable,
    user: Awaited<ReturnType<Accounts['lockUser']>>,
    given: { code?: string | undefined; recoveryCode?: string | undefined },
    now: number,
  ): Promise<'totp' | 'recovery code' | undefined> {
    if (user.totp_sealed === null || user.totp_sealed_under === null) {
      throw new DomainError('INVALID_STATE', 'no second factor is set up');
    }
    if (given.code !== undefined) {
      const secret = this.sealer.open(Buffer.from(user.totp_sealed), totpData(user.id), user.totp_sealed_under);
      const step = totpStep(secret, given.code, now);
      // A code is good once: a step at or before the last one used is a replay.
      if (step === undefined || (user.totp_last_step !== null && BigInt(step) <= user.totp_last_step)) return undefined;
      await tx.query('UPDATE portal_users SET totp_last_step = $2 WHERE id = $1', [user.id, step]);
      return 'totp';
    }
    const used = await tx.query(
      `UPDATE portal_recovery_codes SET used_at = $3
        WHERE id = (SELECT id FROM portal_recovery_codes WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL LIMIT 1)`,
      [user.id, recoveryCodeHash(given.recoveryCode ?? ''), new Date(now)],
    );
    return used.rowCount === 1 ? 'recovery code' : undefined;
  }

  async signOut(session: AccountSession<R>, context: AuditContext): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('UPDATE portal_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
        session.sessionId,
        new Date(this.now()),
      ]);
      await this.audit.record(tx, context, {
        action: 'signout',
        merchant: session.merchant?.accessKey ?? null,
        object: session.email,
      });
    });
  }

  /**
   * Deletes sign-in attempts older than LOGIN_ATTEMPTS_KEPT_MS (the lockout reads the last
   * LOCK_MS of them) and sessions that can no longer be used: expired, revoked, or idle past
   * this.audience.sessionIdleMs. Answers how many of each.
   */
  async purge(): Promise<{ attempts: number; sessions: number }> {
    const now = this.now();
    const attempts = await this.db.query('DELETE FROM login_attempts WHERE created_at < $1', [
      new Date(now - LOGIN_ATTEMPTS_KEPT_MS),
    ]);
    const sessions = await this.db.query(
      `DELETE FROM portal_sessions
        WHERE (expires_at < $1 OR revoked_at IS NOT NULL OR last_seen_at < $2)
          AND user_id IN (SELECT id FROM portal_users WHERE audience = $3)`,
      [new Date(now), new Date(now - this.audience.sessionIdleMs), this.audience.name],
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

/** "an admin", "a support". */
const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** What the request a sign-in or a change came in tells about its client. */
export interface ClientInfo {
  readonly ip: string;
  readonly userAgent?: string | undefined;
  readonly requestId?: string | undefined;
}

const BROWSERS: readonly [RegExp, string][] = [
  [/Edg\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/HeadlessChrome\//, 'Headless Chrome'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
  [/^node|undici/i, 'Node.js'],
];
const SYSTEMS: readonly [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** "Firefox on Linux" from a User-Agent; "Unknown device" without one. */
export function describeDevice(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1] ?? 'Unknown browser';
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  return system ? `${browser} on ${system}` : browser;
}

/** How long a WebAuthn challenge may be answered. */
const CHALLENGE_MS = 5 * 60_000;
/** Passkey sign-in challenges (no user yet) open at once, at most. */
const MAX_OPEN_SIGN_IN_CHALLENGES = 10_000;

/** What a TOTP secret is sealed to: its user (a sealed secret moved to another row does not open). */
const totpData = (userId: bigint) => `portal-totp:${userId}`;

const wrongCode = () => new DomainError('SECOND_FACTOR_FAILED', accountErrors.SECOND_FACTOR_FAILED.message);

function locked(retryAfterMs: number): DomainError {
  return new DomainError('LOGIN_LOCKED', accountErrors.LOGIN_LOCKED.message, [], {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
}
