-- An order's whole story for the back office (issue 45): every state change with its cause,
-- every exchange with its channel, and the channel's own ids of the order, so that support can
-- read what happened and find the order by any identifier it has.

-- Every state change of a payment or payout, written by the one transition helper
-- (modules/orders/transition.ts) in the transaction of the change. `cause`: who or what moved
-- it: the merchant's API, the portal, the channel, a bank file, the sandbox, an operator, expiry.
CREATE TABLE order_transitions (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_type   text NOT NULL CHECK (order_type IN ('PAYMENT', 'PAYOUT')),
  order_no     text NOT NULL,
  merchant_id  bigint NOT NULL,
  from_status  text NOT NULL,
  to_status    text NOT NULL,
  cause        text NOT NULL CHECK (cause IN ('merchant_api', 'portal', 'channel', 'bank_file', 'sandbox', 'operator', 'expiry')),
  at           timestamptz NOT NULL
);
CREATE INDEX order_transitions_order ON order_transitions (order_no, id);

-- Every call the platform made to a channel for an order (modules/channels/exchanges.ts wraps
-- every connector once): the operation, what was sent and what was answered, in the platform's
-- terms, never a credential; kept 30 days.
CREATE TABLE channel_exchanges (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  channel      text NOT NULL,
  order_no     text NOT NULL,
  operation    text NOT NULL,
  sent         text NOT NULL,
  answered     text,
  error        text,
  latency_ms   integer NOT NULL,
  at           timestamptz NOT NULL
);
CREATE INDEX channel_exchanges_order ON channel_exchanges (order_no, id);
CREATE INDEX channel_exchanges_at ON channel_exchanges (at);
CREATE INDEX channel_exchanges_channel ON channel_exchanges (channel, at DESC);

-- The channel's own ids of an order (a Pix charge's txid, kept after the payment settled under
-- its endToEndId): the back office finds the order by any of them.
CREATE TABLE channel_order_refs (
  ref       text NOT NULL,
  order_no  text NOT NULL,
  PRIMARY KEY (ref, order_no)
);

-- The search across every merchant (GET /backoffice/api/orders): each exact identifier by an
-- index of its own, and the newest first without a merchant. db/order-search.ts writes its
-- conditions with exactly these expressions.
-- A merchant order number is found whatever its case (what a caller reads out); lower() keeps
-- these apart from the (merchant_id, merchant_order_no) unique index the merchant's own lookups use.
CREATE INDEX IF NOT EXISTS payments_all_merchant_order_no ON payments (lower(merchant_order_no));
CREATE INDEX IF NOT EXISTS payouts_all_merchant_order_no ON payouts (lower(merchant_order_no));
CREATE INDEX IF NOT EXISTS payments_all_trade_no ON payments (channel_trade_no) WHERE channel_trade_no IS NOT NULL;
CREATE INDEX IF NOT EXISTS payouts_all_trade_no ON payouts (channel_trade_no) WHERE channel_trade_no IS NOT NULL;
-- Documents and amounts by expressions of their own (lower-cased letters and digits; the currency
-- and minor units as one key), which the merchant-scoped search of migration 0023 does not write:
-- its plans keep their (merchant_id, …) indexes.
CREATE INDEX IF NOT EXISTS payments_all_document ON payments
  (lower(regexp_replace(payer_document, '[^0-9A-Za-z]', '', 'g'))) WHERE payer_document IS NOT NULL;
CREATE INDEX IF NOT EXISTS payouts_all_document ON payouts
  (lower(regexp_replace(payee_document, '[^0-9A-Za-z]', '', 'g'))) WHERE payee_document IS NOT NULL;
CREATE INDEX IF NOT EXISTS payouts_all_account ON payouts
  (upper(regexp_replace(payee_account_number, '[^0-9A-Za-z]', '', 'g')));
CREATE INDEX IF NOT EXISTS payments_all_amount ON payments ((currency || ':' || amount_minor::text));
CREATE INDEX IF NOT EXISTS payouts_all_amount ON payouts ((currency || ':' || amount_minor::text));
CREATE INDEX IF NOT EXISTS payments_all_newest ON payments (created_at DESC, order_no DESC);
CREATE INDEX IF NOT EXISTS payouts_all_newest ON payouts (created_at DESC, order_no DESC);
-- Webhook deliveries failing across merchants (GET /backoffice/api/events).
CREATE INDEX IF NOT EXISTS events_all_by_delivery ON events (delivery_status, created_at DESC, id DESC);
