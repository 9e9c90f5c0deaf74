-- Channels (issue 13): a SUCCEEDED channel payout is still polled for a while after it
-- succeeded, so a return whose notification never came is found (channels/polling.ts).
CREATE INDEX IF NOT EXISTS payouts_channel_returns ON payouts (finalized_at)
  WHERE status = 'SUCCEEDED' AND channel IS NOT NULL;
