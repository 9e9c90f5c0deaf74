-- The portal's search (issue 39): a merchant's payments and payouts by order number (order_no's
-- unique index), merchant order number (the (merchant_id, merchant_order_no) unique index), the
-- payer's or payee's name (any of its words by prefix: a GIN full-text index, the 'simple'
-- configuration, no stemming, so names stay names), the document number (letters and digits
-- only, upper-cased: `123.456.789-01` and `12345678901` are one number) and the amount.
-- db/order-search.ts writes its conditions with exactly these expressions, so each can use its index.
CREATE INDEX IF NOT EXISTS payments_search_name ON payments
  USING gin (to_tsvector('simple', coalesce(payer_name, '')));
CREATE INDEX IF NOT EXISTS payments_search_document ON payments
  (merchant_id, upper(regexp_replace(payer_document, '[^0-9A-Za-z]', '', 'g')))
  WHERE payer_document IS NOT NULL;
CREATE INDEX IF NOT EXISTS payments_search_amount ON payments (merchant_id, amount_minor);

CREATE INDEX IF NOT EXISTS payouts_search_name ON payouts
  USING gin (to_tsvector('simple', coalesce(payee_name, '')));
CREATE INDEX IF NOT EXISTS payouts_search_document ON payouts
  (merchant_id, upper(regexp_replace(payee_document, '[^0-9A-Za-z]', '', 'g')))
  WHERE payee_document IS NOT NULL;
CREATE INDEX IF NOT EXISTS payouts_search_amount ON payouts (merchant_id, amount_minor);
