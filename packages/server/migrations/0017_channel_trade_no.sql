-- Channel-routed payments found by the channel's own id (kind pix-api: a callback names a charge by
-- its txid, kept as channel_trade_no while the payment is open; a received Pix by its endToEndId,
-- kept once it SUCCEEDED, which reconciliation matches).
CREATE INDEX IF NOT EXISTS payments_channel_trade_no ON payments (channel, channel_trade_no)
  WHERE channel IS NOT NULL AND channel_trade_no IS NOT NULL;
