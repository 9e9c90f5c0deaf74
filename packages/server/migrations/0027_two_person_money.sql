-- Money changed by a person is a proposal first (issue 45): balance adjustments and fee plans
-- are proposed by one operator and booked only when another approves, in the approving
-- transaction, with its audit entry.

-- A correction of a merchant's available balance (a goodwill credit, a bank fee passed on, a
-- chargeback): `amount_minor` signed, never zero. Booked as one ledger transaction (kind
-- `adjustment`, reference adjustment:<adjustment_id>) against the platform's `adjustments` account.
CREATE TABLE balance_adjustments (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  adjustment_id   text NOT NULL UNIQUE,
  merchant_id     bigint NOT NULL REFERENCES merchants (id),
  currency        text NOT NULL,
  amount_minor    bigint NOT NULL CHECK (amount_minor <> 0),
  reason          text NOT NULL,
  status          text NOT NULL CHECK (status IN ('PROPOSED', 'BOOKED', 'REJECTED')),
  proposed_by     text NOT NULL,
  proposed_at     timestamptz NOT NULL,
  decided_by      text,
  decided_at      timestamptz,
  -- Why it was rejected, when it was.
  decision_note   text,
  CONSTRAINT balance_adjustments_decided CHECK ((status = 'PROPOSED') = (decided_at IS NULL))
);
CREATE INDEX balance_adjustments_newest ON balance_adjustments (proposed_at DESC, id DESC);
CREATE INDEX balance_adjustments_merchant ON balance_adjustments (merchant_id, proposed_at DESC);

ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
  CHECK (kind IN ('payment', 'payout_reserve', 'payout_settle', 'payout_release', 'refund', 'adjustment'));
-- What a person wrote for the fact (an adjustment's reason), shown to the merchant with the entry.
ALTER TABLE ledger_transactions ADD COLUMN memo text;

-- The platform's account corrections are booked against, one per currency.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('available', 'reserved', 'fee_revenue', 'channel_clearing', 'adjustments'));
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_owner;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_owner
  CHECK ((merchant_id IS NULL) = (kind IN ('fee_revenue', 'channel_clearing', 'adjustments')));

-- A merchant's own fees (modules/fees): overrides of the platform's rate table (PAYGATE_FEES)
-- per currency and method for payments and per currency for payouts, as the canonical JSON of
-- the fee table. Without a row the platform's table applies. Changed only by an approved change.
CREATE TABLE merchant_fee_plans (
  merchant_id  bigint PRIMARY KEY REFERENCES merchants (id),
  plan         text NOT NULL,
  change_id    text NOT NULL,
  updated_at   timestamptz NOT NULL
);

CREATE TABLE fee_plan_changes (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  change_id      text NOT NULL UNIQUE,
  merchant_id    bigint NOT NULL REFERENCES merchants (id),
  -- The whole plan proposed (the overrides; empty: back to the platform's table).
  plan           text NOT NULL,
  reason         text NOT NULL,
  status         text NOT NULL CHECK (status IN ('PROPOSED', 'APPLIED', 'REJECTED')),
  proposed_by    text NOT NULL,
  proposed_at    timestamptz NOT NULL,
  decided_by     text,
  decided_at     timestamptz,
  decision_note  text,
  CONSTRAINT fee_plan_changes_decided CHECK ((status = 'PROPOSED') = (decided_at IS NULL))
);
CREATE INDEX fee_plan_changes_newest ON fee_plan_changes (proposed_at DESC, id DESC);
