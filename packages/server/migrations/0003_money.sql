-- Money: the double-entry ledger and payout orders.
--
-- Sign convention: a ledger entry's amount is signed, credit positive and debit negative, so a
-- transaction balances when its amounts sum to zero per currency, and an account's balance is the
-- sum of its entries. Merchant accounts (available, reserved) and fee_revenue are credit-normal
-- (what the platform owes or has earned: balances >= 0); channel_clearing is the asset side (what
-- the channel holds for us), so its balance is normally negative.

CREATE TABLE ledger_accounts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- NULL for the platform's own accounts.
  merchant_id  bigint REFERENCES merchants (id),
  currency     text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('available', 'reserved', 'fee_revenue', 'channel_clearing')),
  -- Maintained only by the ledger_entries trigger below; equal to the sum of the entries.
  balance      bigint NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_accounts_owner CHECK ((merchant_id IS NULL) = (kind IN ('fee_revenue', 'channel_clearing'))),
  -- A merchant can never spend money it does not have: payouts branch on this constraint's name.
  CONSTRAINT ledger_accounts_merchant_nonnegative CHECK (merchant_id IS NULL OR balance >= 0),
  UNIQUE (id, currency)
);
-- Partial indexes rather than NULLS NOT DISTINCT, which PostgreSQL before 15 lacks.
CREATE UNIQUE INDEX ledger_accounts_merchant ON ledger_accounts (merchant_id, currency, kind) WHERE merchant_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_accounts_platform ON ledger_accounts (currency, kind) WHERE merchant_id IS NULL;

-- One business fact each. `reference` is its idempotency key (payment:<orderNo>:succeeded,
-- payout:<orderNo>:reserve|settle|release, refund:<orderNo>); `alt_reference` is a second key
-- for facts that must happen once by two identities (a refund: once per order and once per
-- refundNo, refund-no:<merchantId>:<refundNo>). A conflict on either posts nothing.
CREATE TABLE ledger_transactions (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reference      text NOT NULL UNIQUE,
  alt_reference  text UNIQUE,
  kind           text NOT NULL CHECK (kind IN ('payment', 'payout_reserve', 'payout_settle', 'payout_release', 'refund')),
  -- The order the fact belongs to (P… or W…), for reading the books by order.
  order_no       text NOT NULL,
  created_at     timestamptz NOT NULL
);
CREATE INDEX ledger_transactions_order ON ledger_transactions (order_no);

CREATE TABLE ledger_entries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id  bigint NOT NULL REFERENCES ledger_transactions (id),
  account_id      bigint NOT NULL,
  currency        text NOT NULL,
  -- Credit positive, debit negative; never zero.
  amount          bigint NOT NULL CHECK (amount <> 0),
  side            text GENERATED ALWAYS AS (CASE WHEN amount > 0 THEN 'credit' ELSE 'debit' END) STORED,
  created_at      timestamptz NOT NULL,
  -- The entry's currency is its account's: a transaction cannot balance across currencies.
  FOREIGN KEY (account_id, currency) REFERENCES ledger_accounts (id, currency)
);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id, created_at DESC, id DESC);

-- Balanced at commit: deferred, so a transaction's entries may be written one by one, but
-- nothing unbalanced can ever be committed, whichever code writes it.
CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unbalanced record;
BEGIN
  SELECT currency, sum(amount) AS total INTO unbalanced
    FROM ledger_entries WHERE transaction_id = NEW.transaction_id
   GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % does not balance in %: %', NEW.transaction_id, unbalanced.currency, unbalanced.total
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

-- A transaction without entries is not a posting (it would only burn its reference).
CREATE FUNCTION ledger_check_has_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT count(*) FROM ledger_entries WHERE transaction_id = NEW.id) < 2 THEN
    RAISE EXCEPTION 'ledger transaction % has fewer than two entries', NEW.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_transactions_have_entries AFTER INSERT ON ledger_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_has_entries();

-- The balance moves with every entry, in the same statement: it cannot drift from the sum, and
-- the merchant CHECK above sees the new value under the row lock the UPDATE takes.
CREATE FUNCTION ledger_apply_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER ledger_entries_apply AFTER INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_apply_entry();

-- Only the trigger above may move a balance (it runs at trigger depth 2).
CREATE FUNCTION ledger_guard_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.balance IS DISTINCT FROM OLD.balance AND pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'ledger balances change only by posting entries' USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.merchant_id IS DISTINCT FROM OLD.merchant_id OR NEW.currency IS DISTINCT FROM OLD.currency
     OR NEW.kind IS DISTINCT FROM OLD.kind THEN
    RAISE EXCEPTION 'ledger accounts are immutable' USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER ledger_accounts_guard BEFORE UPDATE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_guard_balance();

-- The books are append-only: corrections are new transactions, never edits.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';
END
$$;
CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_transactions_immutable BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_accounts_no_delete BEFORE DELETE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();

-- Payout orders. Payee details are stored for the receipt only: no other read returns them.
CREATE TABLE payouts (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_no              text NOT NULL UNIQUE,
  merchant_id           bigint NOT NULL REFERENCES merchants (id),
  merchant_order_no     text NOT NULL,
  currency              text NOT NULL,
  amount_minor          bigint NOT NULL CHECK (amount_minor > 0),
  -- Fixed at creation from the rate table; reserved with the amount.
  fee_minor             bigint NOT NULL CHECK (fee_minor >= 0),
  webhook_url           text NOT NULL,
  attach                text,
  payee_name            text NOT NULL,
  payee_account_number  text NOT NULL,
  payee_bank_code       text,
  payee_document        text,
  status                text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'REFUNDED')),
  channel_trade_no      text,
  refund_no             text,
  refund_amount_minor   bigint,
  -- refundTime: when the refund posted; never changes afterwards.
  refunded_at           timestamptz,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  confirmed_at          timestamptz,
  finalized_at          timestamptz,
  UNIQUE (merchant_id, merchant_order_no),
  UNIQUE (merchant_id, refund_no),
  -- Refund fields exist exactly when the payout is REFUNDED.
  CONSTRAINT payouts_refund_fields CHECK (
    (status = 'REFUNDED') = (refund_no IS NOT NULL)
    AND (refund_no IS NULL) = (refund_amount_minor IS NULL)
    AND (refund_no IS NULL) = (refunded_at IS NULL)
  )
);
CREATE INDEX payouts_list ON payouts (merchant_id, created_at DESC, id DESC);
CREATE INDEX payouts_list_status ON payouts (merchant_id, status, created_at DESC, id DESC);
