-- Merchants, their keys, platform keys, request nonces, payment orders and the event outbox.
-- Money is integer minor units (bigint). Times are timestamptz; the API speaks Unix ms.

CREATE TABLE merchants (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name         text NOT NULL,
  environment  text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  access_key   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- A merchant's Ed25519 public keys; at most two are active at once (rotation).
CREATE TABLE merchant_keys (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  merchant_id  bigint NOT NULL REFERENCES merchants (id),
  public_key   bytea NOT NULL CHECK (length(public_key) = 32),
  status       text NOT NULL CHECK (status IN ('active', 'retired')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz,
  UNIQUE (merchant_id, public_key)
);
CREATE INDEX merchant_keys_active ON merchant_keys (merchant_id) WHERE status = 'active';

-- Platform X25519 body keys and Ed25519 webhook keys. Private keys are sealed under the master
-- key (XChaCha20-Poly1305, key id as associated data). 'active' is used for new work; 'enabled'
-- still opens bodies / is still published; 'retired' is neither.
CREATE TABLE platform_keys (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key_id       text NOT NULL UNIQUE,
  kind         text NOT NULL CHECK (kind IN ('body', 'webhook')),
  environment  text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  public_key   bytea NOT NULL CHECK (length(public_key) = 32),
  secret_sealed bytea NOT NULL,
  status       text NOT NULL CHECK (status IN ('active', 'enabled', 'retired')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz
);
CREATE UNIQUE INDEX platform_keys_one_active ON platform_keys (kind, environment) WHERE status = 'active';

-- One-time request nonces, per merchant, kept until their signature has expired.
CREATE TABLE request_nonces (
  merchant_id  bigint NOT NULL,
  nonce        text NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, nonce)
);
CREATE INDEX request_nonces_expiry ON request_nonces (expires_at);

CREATE SEQUENCE order_no_seq;

CREATE TABLE payments (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_no           text NOT NULL UNIQUE,
  merchant_id        bigint NOT NULL REFERENCES merchants (id),
  merchant_order_no  text NOT NULL,
  currency           text NOT NULL,
  amount_minor       bigint NOT NULL CHECK (amount_minor > 0),
  method             text NOT NULL,
  webhook_url        text NOT NULL,
  attach             text,
  status             text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED')),
  paid_amount_minor  bigint,
  channel_trade_no   text,
  payer_name         text,
  payer_document     text,
  expires_at         timestamptz NOT NULL,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  finalized_at       timestamptz,
  UNIQUE (merchant_id, merchant_order_no)
);
-- Listing: newest first per merchant, optionally by status; the id breaks ties for the cursor.
CREATE INDEX payments_list ON payments (merchant_id, created_at DESC, id DESC);
CREATE INDEX payments_list_status ON payments (merchant_id, status, created_at DESC, id DESC);
-- The expiry sweeper only ever looks at PENDING orders.
CREATE INDEX payments_pending_expiry ON payments (expires_at) WHERE status = 'PENDING';

-- The transactional outbox: one row per webhook event, written in the same transaction as the
-- final state it reports. The body bytes are fixed at creation and never change.
CREATE TABLE events (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         text NOT NULL UNIQUE,
  merchant_id      bigint NOT NULL REFERENCES merchants (id),
  order_type       text NOT NULL CHECK (order_type IN ('PAYMENT', 'PAYOUT')),
  order_no         text NOT NULL,
  status           text NOT NULL,
  webhook_url      text NOT NULL,
  body             bytea NOT NULL,
  created_at       timestamptz NOT NULL,
  -- Retries stop at this time whatever the schedule says (REFUNDED: created_at + 24 h).
  deliver_until    timestamptz,
  UNIQUE (order_type, order_no, status)
);
CREATE INDEX events_by_order ON events (merchant_id, order_no, created_at);
CREATE INDEX events_by_merchant ON events (merchant_id, created_at DESC, id DESC);

-- Sandbox only: recent authentication failures, so an integrator can see which step failed and
-- the signature base the server built. Never consulted by authentication itself.
CREATE TABLE rejected_requests (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  merchant_id     bigint,
  access_key      text,
  method          text NOT NULL,
  path            text NOT NULL,
  step            text NOT NULL,
  reason          text NOT NULL,
  signature_base  text,
  request_id      text NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX rejected_requests_by_merchant ON rejected_requests (merchant_id, created_at DESC);
