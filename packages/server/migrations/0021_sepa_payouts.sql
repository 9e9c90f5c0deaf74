-- SEPA payouts as ISO 20022 files with a bank (channel kind sepa-sftp; decisions.md, "SEPA
-- payouts: ISO 20022 files with a bank"). The files are an outbox and an inbox: a file is stored
-- (its exact bytes and its MsgId) in the transaction that assigns its payouts, and only then
-- uploaded; a file read from the bank is recorded in the transaction that applies it.

-- The batch a confirmed payout was sent in (the file's MsgId), set by the payouts module when the
-- channel closes a batch: payouts confirmed and not yet in a batch are found by the partial index.
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS channel_batch text;
CREATE INDEX IF NOT EXISTS payouts_unbatched ON payouts (channel, confirmed_at)
  WHERE status = 'PROCESSING' AND channel IS NOT NULL AND channel_batch IS NULL;

-- Files out: one pain.001 per batch. `msg_id` is never reused (a ULID, unique across databases
-- too); `bytes` are what is uploaded, again and again the same after a crash. `state` built →
-- uploaded only once the server confirmed the rename; `lease_until` claims the upload for one
-- instance at a time.
CREATE TABLE IF NOT EXISTS sepa_files (
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  msg_id text NOT NULL UNIQUE,
  name text NOT NULL,
  bytes bytea NOT NULL,
  transactions integer NOT NULL,
  ctrl_sum_minor bigint NOT NULL,
  state text NOT NULL DEFAULT 'built' CHECK (state IN ('built', 'uploaded')),
  created_at timestamptz NOT NULL,
  uploaded_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  lease_until timestamptz,
  -- The bank's word on the whole file (pain.002 GrpSts), when it said.
  group_status text,
  acknowledged_at timestamptz
);
CREATE INDEX IF NOT EXISTS sepa_files_to_upload ON sepa_files (channel, id) WHERE state = 'built';
-- Files uploaded that the bank has said nothing of yet (the gauge of the oldest one's age).
CREATE INDEX IF NOT EXISTS sepa_files_unacknowledged ON sepa_files (channel, uploaded_at)
  WHERE state = 'uploaded' AND acknowledged_at IS NULL;

-- The payouts of each file: the primary key makes a payout's file one and only one. The bank's
-- status of each transaction (pain.002 TxSts, camt.054 booking) and its reason code are kept
-- here, for the portal and the operator.
CREATE TABLE IF NOT EXISTS sepa_file_payouts (
  order_no text PRIMARY KEY,
  file_id bigint NOT NULL REFERENCES sepa_files (id),
  merchant_id bigint NOT NULL,
  amount_minor bigint NOT NULL,
  bank_status text,
  bank_reason text,
  bank_status_at timestamptz,
  -- A full return (camt.054 CRDT PMNT/ICDT/RRTN): the bank's AcctSvcrRef, the payout's refundNo.
  return_ref text
);
CREATE INDEX IF NOT EXISTS sepa_file_payouts_file ON sepa_file_payouts (file_id);

-- Files in: every file read from the bank's download directory, once per (channel, name),
-- recorded in the transaction that applies it; a file that does not parse, or is neither a
-- pain.002 nor a camt.054, is set aside with its reason and nothing in it is applied.
CREATE TABLE IF NOT EXISTS sepa_inbox (
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  name text NOT NULL,
  size bigint NOT NULL,
  sha256 text NOT NULL,
  message text,
  state text NOT NULL CHECK (state IN ('applied', 'set_aside')),
  reason text,
  received_at timestamptz NOT NULL,
  UNIQUE (channel, name)
);

-- A bank file settles thousands of payouts in one transaction (Ledger.postMany): its entries go
-- in one statement, and each account's balance then moves once per statement by the sum of its
-- entries in it, where it moved once per entry: updating one row thousands of times in one
-- transaction walks an ever longer chain of that row's versions (quadratic). The balance still
-- moves in the statement that writes the entries, the merchant CHECK still sees the new value
-- under the row lock, and only this trigger may move a balance (it runs at trigger depth 1, its
-- UPDATE's guard at depth 2), as before.
CREATE OR REPLACE FUNCTION ledger_apply_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_accounts a SET balance = a.balance + s.total
    FROM (SELECT account_id, sum(amount) AS total FROM new_entries GROUP BY account_id) s
   WHERE a.id = s.account_id;
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS ledger_entries_apply ON ledger_entries;
CREATE TRIGGER ledger_entries_apply AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_apply_entries();
