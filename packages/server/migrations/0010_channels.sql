-- Channels (issue 13): which channel serves an order, what the payer was told to do, and every
-- notification a channel sent, kept raw for audit.

-- The channel that serves the order (NULL: the built-in sandbox channel). Set when the order is
-- created and never changed. 0011_channel_polling.sql adds it too, IF NOT EXISTS.
ALTER TABLE payments ADD COLUMN IF NOT EXISTS channel text;
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS channel text;
-- What the channel told the payer to do (JSON: kind, url, pixCode / boletoLine / bankDetails);
-- NULL until the order is registered at its channel, and for the sandbox channel (cashier page).
ALTER TABLE payments ADD COLUMN payer_action text;

-- Notifications as received. The unique index decides whether an event was seen before: a
-- repeat is recorded once and applied once. Kept for audit and investigation (unknown orders).
CREATE TABLE channel_notifications (
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  event_id text NOT NULL,
  received_at timestamptz NOT NULL,
  -- The authentication headers and the content type, as received.
  headers text NOT NULL,
  -- The exact body bytes.
  body bytea NOT NULL,
  -- The platform orderNo the channel named (when the body could be read).
  order_no text,
  -- received (not yet applied), applied, ignored (nothing to change, or a move the state machine
  -- refused), unknown_order (kept for investigation), wrong_channel.
  outcome text NOT NULL DEFAULT 'received',
  detail text,
  applied_at timestamptz
);
CREATE UNIQUE INDEX channel_notifications_event ON channel_notifications (channel, event_id);
CREATE INDEX channel_notifications_by_time ON channel_notifications (channel, id DESC);
CREATE INDEX channel_notifications_by_order ON channel_notifications (order_no) WHERE order_no IS NOT NULL;

-- Nonces of authenticated notifications, per channel, until their timestamp leaves the window:
-- the primary key refuses a replay across every instance.
CREATE TABLE channel_nonces (
  channel text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (channel, nonce)
);
CREATE INDEX channel_nonces_expiry ON channel_nonces (expires_at);
