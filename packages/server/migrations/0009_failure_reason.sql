-- Why a payment failed, as the channel (or the sandbox cashier page / simulate helper) said;
-- NULL when no reason was given and on every other status.
ALTER TABLE payments ADD COLUMN failure_reason text;
