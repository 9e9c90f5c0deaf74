-- What the bank sent, as it sent it: every file read from a sepa-sftp channel's download directory
-- (sepa_inbox, applied or set aside) keeps its bytes, gzip-compressed, and its MsgId when it
-- parsed, so that the operator can download it from the back office as the platform read it. The
-- bytes are kept 30 days (RECEIVED_FILES_KEPT_MS, as channel exchanges), then the sweeper clears
-- them; the row (name, size, SHA-256, what it did) stays for good, as the record that the file was
-- read once. Files recorded before this migration have none.
ALTER TABLE sepa_inbox ADD COLUMN IF NOT EXISTS msg_id text;
ALTER TABLE sepa_inbox ADD COLUMN IF NOT EXISTS bytes_gzip bytea;
CREATE INDEX IF NOT EXISTS sepa_inbox_kept ON sepa_inbox (received_at) WHERE bytes_gzip IS NOT NULL;

-- The account a credit transfer was booked to (the notification's or statement's Acct/Id/IBAN),
-- shown with the unmatched credits; NULL for the credits read before.
ALTER TABLE sepa_credits ADD COLUMN IF NOT EXISTS account_iban text;
