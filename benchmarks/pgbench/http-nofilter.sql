-- The http scenario's /nofilter/payments transaction: three round trips.
\set acct random(1, 1000)
BEGIN \; INSERT INTO bench_http_nofilter.payments (payment_id, account, amount_cents) VALUES (gen_random_uuid()::text, :acct, 5);
UPDATE bench_http_nofilter.accounts SET balance_cents = balance_cents + 5 WHERE id = :acct;
COMMIT;
