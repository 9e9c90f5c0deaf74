-- The ledger's checks, once per statement and once per ledger transaction instead of once per
-- entry. A bank file settles thousands of payouts in one transaction: 10,000 settles are 30,000
-- ledger entries, and each entry had its two foreign keys checked (a query each, at the end of
-- the statement) and its transaction's balance checked again at commit (a query per entry): on
-- the embedded database about three of the eight CPU seconds of such a file.
--
-- 1. References: every entry's ledger transaction and account (with its currency) exist, checked
--    once per statement over every entry it wrote (its transition table), with the error a
--    foreign key raises (SQLSTATE 23503). What the foreign keys also guaranteed still holds: a
--    referenced row never goes away or changes its key, because ledger transactions refuse every
--    UPDATE, DELETE and TRUNCATE (0003), ledger accounts refuse DELETE and a change of currency
--    (0003) and now TRUNCATE too (below), and both ids are generated always.
-- 2. Balance: checked at commit once per ledger transaction, with its count of entries (at least
--    two), where it was checked once per entry. For that to cover every entry, an entry may only
--    be written in the database transaction that wrote its ledger transaction (written_in, the
--    top-level transaction's id even inside a savepoint): a committed ledger transaction cannot
--    take more entries (the books are append-only; a correction is a new transaction), which no
--    code ever did.
ALTER TABLE ledger_transactions ADD COLUMN IF NOT EXISTS written_in xid8;
-- Set after the column is added, so that the rows already there (NULL) are not rewritten.
ALTER TABLE ledger_transactions ALTER COLUMN written_in SET DEFAULT pg_current_xact_id();

CREATE OR REPLACE FUNCTION ledger_check_entry_references() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing record;
BEGIN
  SELECT n.transaction_id, n.account_id, n.currency INTO missing
    FROM new_entries n
   WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = n.transaction_id)
      OR NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = n.account_id AND a.currency = n.currency)
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger entry of transaction % on account % in % names no such ledger transaction or account',
      missing.transaction_id, missing.account_id, missing.currency
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  SELECT n.transaction_id INTO missing
    FROM new_entries n JOIN ledger_transactions t ON t.id = n.transaction_id
   WHERE t.written_in IS DISTINCT FROM pg_current_xact_id()
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % was written by another database transaction: its entries are written with it',
      missing.transaction_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS ledger_entries_references ON ledger_entries;
CREATE TRIGGER ledger_entries_references AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_check_entry_references();
ALTER TABLE ledger_entries DROP CONSTRAINT IF EXISTS ledger_entries_transaction_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT IF EXISTS ledger_entries_account_id_currency_fkey;

DROP TRIGGER IF EXISTS ledger_accounts_no_truncate ON ledger_accounts;
CREATE TRIGGER ledger_accounts_no_truncate BEFORE TRUNCATE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

-- At commit, once per ledger transaction: at least two entries, balanced in each currency.
CREATE OR REPLACE FUNCTION ledger_check_has_entries() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entries bigint;
  unbalanced text;
  total numeric;
BEGIN
  SELECT sum(s.n), min(s.currency) FILTER (WHERE s.total <> 0), min(s.total) FILTER (WHERE s.total <> 0)
    INTO entries, unbalanced, total
    FROM (SELECT currency, count(*) AS n, sum(amount) AS total
            FROM ledger_entries WHERE transaction_id = NEW.id GROUP BY currency) s;
  IF coalesce(entries, 0) < 2 THEN
    RAISE EXCEPTION 'ledger transaction % has fewer than two entries', NEW.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF unbalanced IS NOT NULL THEN
    RAISE EXCEPTION 'ledger transaction % does not balance in %: %', NEW.id, unbalanced, total
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS ledger_entries_balanced ON ledger_entries;
