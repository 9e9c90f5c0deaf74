-- Order numbers are also the references channels know orders by (paygate-psp's `reference`, the
-- Pix txid derived from it). A database numbering from 1 reissues the numbers of an earlier
-- database (a reinstall, a second environment) at a channel account they share, and the channel
-- answers the old order's charge for the new order. A fresh database starts at a random point
-- below 10^9 instead (still ten digits); a sequence that has issued numbers is left as it is.
SELECT setval('order_no_seq', 1 + floor(random() * 1e9)::bigint) FROM order_no_seq WHERE NOT is_called;
