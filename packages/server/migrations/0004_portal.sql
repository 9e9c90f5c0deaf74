-- The merchant portal: users invited by an operator, their sessions, and sign-in attempts.
--
-- Nothing secret is stored in the clear: passwords are scrypt hashes, and invitation and session
-- tokens are stored as their SHA-256 digests (the tokens themselves only ever live in the
-- operator's setup link and the user's cookie).

CREATE TABLE portal_users (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  merchant_id         bigint NOT NULL REFERENCES merchants (id),
  -- Sign-ins of one environment never work in the other, even over a shared database.
  environment         text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  -- Lowercased; one login per email and environment.
  email               text NOT NULL,
  -- scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>; NULL until the invitation is accepted.
  password_hash       text,
  -- SHA-256 of the one-time setup token of the latest invitation; NULL once used.
  invite_token_hash   bytea UNIQUE,
  invite_expires_at   timestamptz,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  UNIQUE (environment, email)
);
CREATE INDEX portal_users_merchant ON portal_users (merchant_id);

-- One row per signed-in browser. The merchant is copied from the user so that every portal query
-- is scoped by the session row alone.
CREATE TABLE portal_sessions (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
  user_id       bigint NOT NULL REFERENCES portal_users (id),
  merchant_id   bigint NOT NULL REFERENCES merchants (id),
  created_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL,
  -- Absolute end; an idle session also ends (see the portal service).
  expires_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);

-- Every sign-in attempt, by normalized email whether or not such a user exists (so that lockout
-- reveals nothing about which emails are users), and by client address for throttling.
CREATE TABLE login_attempts (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email       text NOT NULL,
  ip          text NOT NULL,
  succeeded   boolean NOT NULL,
  created_at  timestamptz NOT NULL
);
CREATE INDEX login_attempts_email ON login_attempts (email, created_at DESC);
CREATE INDEX login_attempts_ip ON login_attempts (ip, created_at DESC);
