-- A ledger entry states its direction once: its signed amount (credit positive, debit negative,
-- never zero). The generated `side` column said it a second time; the API no longer shows it.
ALTER TABLE ledger_entries DROP COLUMN side;
