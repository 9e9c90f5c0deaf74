-- Sign-in attempts are purged by age across all emails (PortalAccounts.purge), not only when the
-- same email next signs in: an index on their time serves the purge.
CREATE INDEX IF NOT EXISTS login_attempts_created ON login_attempts (created_at);
