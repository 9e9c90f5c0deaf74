-- Bank files as banks send them (issue 49; decisions.md, "Files as banks send them"): camt.053
-- statements, batch bookings, the status of a payment information block and the intermediate
-- codes, SEPA Instant files, and payments by bank transfer credited to the channel's account.

-- A file's payment information block (its PmtInfId: the MsgId for the files written so far), which
-- a batch booking and a block status name; and whether it holds SEPA Instant transfers.
ALTER TABLE sepa_files ADD COLUMN IF NOT EXISTS pmt_inf_id text;
UPDATE sepa_files SET pmt_inf_id = msg_id WHERE pmt_inf_id IS NULL;
ALTER TABLE sepa_files ADD COLUMN IF NOT EXISTS instant boolean NOT NULL DEFAULT false;

-- Every status the bank's pain.002 gave short of a final one (RCVD, ACTC, ACCP, ACSP, ACWC, PDNG,
-- PART, …): of a whole file (level 'file', GrpSts), of its block ('block', PmtInfSts) or of one of
-- its payouts ('transaction', TxSts, with order_no). They move no order; they are kept, in the
-- order read, for the operator and the portal. Final statuses are on sepa_file_payouts.
CREATE TABLE IF NOT EXISTS sepa_statuses (
  id bigserial PRIMARY KEY,
  file_id bigint NOT NULL REFERENCES sepa_files (id),
  level text NOT NULL CHECK (level IN ('file', 'block', 'transaction')),
  order_no text,
  status text NOT NULL,
  reason text,
  -- The bank file (sepa_inbox) that said it.
  inbox_id bigint NOT NULL REFERENCES sepa_inbox (id),
  reported_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS sepa_statuses_file ON sepa_statuses (file_id, id);
CREATE INDEX IF NOT EXISTS sepa_statuses_order ON sepa_statuses (order_no) WHERE order_no IS NOT NULL;

-- Every batch booking read (a booked DBIT entry whose NtryDtls/Btch names a file sent, with no
-- transaction details), once per channel and entry (its AcctSvcrRef, or a digest of the entry):
-- 'applied' when its count and total were the file's, 'mismatch' when they were not (or it named
-- no file of the channel), which changes nothing and is kept for the operator.
CREATE TABLE IF NOT EXISTS sepa_batch_bookings (
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  entry_key text NOT NULL,
  msg_id text,
  pmt_inf_id text,
  file_id bigint REFERENCES sepa_files (id),
  transactions integer,
  amount_minor bigint NOT NULL,
  state text NOT NULL CHECK (state IN ('applied', 'mismatch')),
  reason text,
  inbox_id bigint NOT NULL REFERENCES sepa_inbox (id),
  received_at timestamptz NOT NULL,
  UNIQUE (channel, entry_key)
);
CREATE INDEX IF NOT EXISTS sepa_batch_bookings_mismatch ON sepa_batch_bookings (channel, id) WHERE state = 'mismatch';

-- Every credit transfer received on the channel's account (a booked CRDT entry, bank transaction
-- code PMNT/RCDT/…), once per channel and entry (its AcctSvcrRef, or a digest of the entry), seen
-- in a camt.054, a camt.053 or both: 'matched' when its reference named a PENDING payment by bank
-- transfer of this amount (the payment SUCCEEDED in the same transaction), else 'unmatched' with
-- the reason (no_reference, unknown_reference, other_amount, payment_final, expired) and the
-- payment it named, if any: kept for the operator, no order changed.
CREATE TABLE IF NOT EXISTS sepa_credits (
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  entry_key text NOT NULL,
  account_servicer_ref text,
  amount_minor bigint NOT NULL,
  currency text NOT NULL,
  reference text,
  remittance text,
  debtor_name text,
  debtor_iban text,
  booking_date date,
  state text NOT NULL CHECK (state IN ('matched', 'unmatched')),
  reason text,
  order_no text,
  inbox_id bigint NOT NULL REFERENCES sepa_inbox (id),
  received_at timestamptz NOT NULL,
  UNIQUE (channel, entry_key)
);
CREATE INDEX IF NOT EXISTS sepa_credits_unmatched ON sepa_credits (channel, id) WHERE state = 'unmatched';
CREATE INDEX IF NOT EXISTS sepa_credits_order ON sepa_credits (order_no) WHERE order_no IS NOT NULL;
