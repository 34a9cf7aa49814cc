-- http-nofilter.sql with a trivial statement in the first round trip: the yardstick for the two claim-only scripts.
\set acct random(1, 1000)
BEGIN \; SELECT 1;
INSERT INTO bench_http.payments (payment_id, account, amount_cents) VALUES (gen_random_uuid()::text, :acct, 5);
UPDATE bench_http.accounts SET balance_cents = balance_cents + 5 WHERE id = :acct;
COMMIT;
