-- Polling state for channel-routed orders: the channel that serves the order (NULL for the
-- built-in sandbox), when it is next queried, and how many queries went unanswered (backoff).
-- IF NOT EXISTS: 0010_channels.sql may already have added `channel`.
ALTER TABLE payments ADD COLUMN IF NOT EXISTS channel text;
ALTER TABLE payments ADD COLUMN IF NOT EXISTS next_poll_at timestamptz;
ALTER TABLE payments ADD COLUMN IF NOT EXISTS poll_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS channel text;
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS next_poll_at timestamptz;
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS poll_attempts integer NOT NULL DEFAULT 0;
-- The poller only ever looks at open channel orders, oldest due first.
CREATE INDEX IF NOT EXISTS payments_channel_poll ON payments (next_poll_at)
  WHERE status IN ('PENDING', 'PROCESSING') AND channel IS NOT NULL;
CREATE INDEX IF NOT EXISTS payouts_channel_poll ON payouts (next_poll_at)
  WHERE status IN ('PENDING', 'PROCESSING') AND channel IS NOT NULL;
