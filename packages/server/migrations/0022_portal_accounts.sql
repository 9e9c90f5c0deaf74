-- Portal accounts fit for money (issue 38): a role per portal user, what a session was opened
-- from, and the audit trail.

-- What a person may do in the portal (modules/portal/access.ts). Users from before roles were
-- the merchant's only kind of user, with every right: they become owners.
ALTER TABLE portal_users
  ADD COLUMN role text NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'developer', 'finance', 'viewer'));

-- The browser a session was opened from, shown to its user with the address so they can tell
-- their sessions apart and end the ones they do not recognise.
ALTER TABLE portal_sessions ADD COLUMN user_agent text;
ALTER TABLE portal_sessions ADD COLUMN ip text;

-- A second factor (TOTP, RFC 6238): the secret sealed under the master key like the platform
-- keys (re-sealed with them by `paygate master-key reseal`), the one being set up until its first
-- code confirms it, and the last time step used (a code is accepted once).
ALTER TABLE portal_users ADD COLUMN totp_sealed bytea;
ALTER TABLE portal_users ADD COLUMN totp_sealed_under text;
ALTER TABLE portal_users ADD COLUMN totp_pending_sealed bytea;
ALTER TABLE portal_users ADD COLUMN totp_pending_sealed_under text;
ALTER TABLE portal_users ADD COLUMN totp_enabled_at timestamptz;
ALTER TABLE portal_users ADD COLUMN totp_last_step bigint;

-- Ten single-use recovery codes per second factor, stored as their SHA-256.
CREATE TABLE portal_recovery_codes (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id    bigint NOT NULL REFERENCES portal_users (id),
  code_hash  bytea NOT NULL CHECK (length(code_hash) = 32),
  used_at    timestamptz
);
CREATE INDEX portal_recovery_codes_user ON portal_recovery_codes (user_id);

-- A session opened by a password whose user has a second factor waits for its code
-- (second_factor_pending); second_factor_at is the last check, for step-up.
ALTER TABLE portal_sessions ADD COLUMN second_factor_pending boolean NOT NULL DEFAULT false;
ALTER TABLE portal_sessions ADD COLUMN second_factor_at timestamptz;

-- Passkeys (WebAuthn): several per user, each a sign-in on its own or a second factor after the
-- password. The credential's public key (COSE) and signature counter, as the library verifies them.
CREATE TABLE portal_passkeys (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id        bigint NOT NULL REFERENCES portal_users (id),
  -- base64url, as the browser names it; one credential belongs to one user.
  credential_id  text NOT NULL UNIQUE,
  public_key     bytea NOT NULL,
  counter        bigint NOT NULL,
  transports     text,
  name           text NOT NULL,
  created_at     timestamptz NOT NULL,
  last_used_at   timestamptz
);
CREATE INDEX portal_passkeys_user ON portal_passkeys (user_id);

-- A WebAuthn ceremony's one-time challenge: for a user adding a passkey or checking one after
-- the password (user_id), or for a sign-in with a passkey alone (no user yet). Used once.
CREATE TABLE portal_webauthn_challenges (
  challenge   text PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('register', 'authenticate')),
  user_id     bigint REFERENCES portal_users (id),
  expires_at  timestamptz NOT NULL
);

-- What a merchant's owners decided for everyone of the merchant.
CREATE TABLE portal_merchant_settings (
  merchant_id            bigint PRIMARY KEY REFERENCES merchants (id),
  require_second_factor  boolean NOT NULL DEFAULT false,
  updated_at             timestamptz NOT NULL
);

-- The audit trail (modules/audit): every change made by a person, an operator command or the
-- platform, written in the transaction that makes it. Append-only and tamper-evident: each entry
-- holds the SHA-256 of the entry before it (prev_hash) and its own (hash) over a canonical
-- serialization of its fields (modules/audit/chain.ts); `paygate audit verify` walks the chain.
CREATE TABLE audit_entries (
  -- 1, 2, 3, … without gaps: the next is taken under the trail's lock (a gap is a removed entry).
  id           bigint PRIMARY KEY,
  at           timestamptz NOT NULL,
  actor_kind   text NOT NULL CHECK (actor_kind IN ('user', 'operator', 'system')),
  -- The person (user) whose session or sign-in it was; NULL for operators and the platform.
  actor_email  text,
  action       text NOT NULL,
  -- The merchant's access key (kept as text: the trail outlives any change to the merchants table).
  merchant     text,
  -- What the action was on: a key id, an order number, an event id, an email.
  object       text,
  -- Anything else worth keeping, as canonical JSON text (it is hashed as written).
  detail       text,
  ip           text,
  request_id   text,
  prev_hash    bytea NOT NULL CHECK (length(prev_hash) = 32),
  hash         bytea NOT NULL CHECK (length(hash) = 32)
);
CREATE INDEX audit_entries_merchant ON audit_entries (merchant, id);

-- Append-only: no row is ever changed or removed, whoever asks (the owner and a superuser
-- included, short of disabling the trigger, which the chain then reveals).
CREATE FUNCTION audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_entries is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_entries_no_change BEFORE UPDATE OR DELETE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only();
CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_append_only();

-- And by privilege where the database allows it: nobody, the role the platform runs as (the
-- table's owner, which created it) included, holds UPDATE, DELETE or TRUNCATE on the trail. A
-- superuser bypasses privileges; the trigger above still holds for it.
REVOKE UPDATE, DELETE, TRUNCATE ON audit_entries FROM PUBLIC;
REVOKE UPDATE, DELETE, TRUNCATE ON audit_entries FROM CURRENT_USER;
