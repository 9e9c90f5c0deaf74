-- Which master key sealed each platform private key (its key id, derived from the key: see
-- crypto/master-key.ts). NULL for keys sealed before this migration: the first start after it
-- opens them with the configured key, fills this in, or refuses to start.
ALTER TABLE platform_keys ADD COLUMN sealed_under text;

-- The master keys an environment's platform keys may be sealed under: one row per key, holding a
-- key-check value (a fixed label sealed under that key). A start whose master key opens none of
-- them refuses with one line instead of failing every request that needs a platform key. Two
-- rows while a rotation is under way (`paygate master-key reseal` leaves only the new one).
CREATE TABLE master_key_checks (
  environment  text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  key_id       text NOT NULL,
  check_sealed bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (environment, key_id)
);
