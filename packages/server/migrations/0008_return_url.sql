-- Where the sandbox cashier page (or the payment's channel) sends the payer after paying or
-- failing: the merchant's optional returnUrl, stored normalized as webhook_url is; NULL when none.
ALTER TABLE payments ADD COLUMN return_url text;
