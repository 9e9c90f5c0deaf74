-- An operator can disable a merchant: its requests fail authentication (every instance within the
-- merchant cache's bound) until it is enabled again. Nothing of its data changes.
ALTER TABLE merchants ADD COLUMN disabled_at timestamptz;
