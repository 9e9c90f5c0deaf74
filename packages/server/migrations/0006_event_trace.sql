-- The W3C traceparent of the request (or job) that wrote the event, when tracing was on: each
-- delivery attempt's span joins that trace, so an order's create or move and its webhooks read as
-- one trace. NULL when tracing was off; never part of the body or the signature.
ALTER TABLE events ADD COLUMN traceparent text;
