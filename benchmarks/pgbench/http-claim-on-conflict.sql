-- http-claim-baseline.sql with the inbox row inserted by INSERT ... ON CONFLICT DO NOTHING in the first round trip.
\set acct random(1, 1000)
BEGIN \; INSERT INTO bench_http.inbox (scope, key, fingerprint, state, attempts, lease_owner, fencing_token, locked_until, created_at, updated_at, completed_at) VALUES ('global', gen_random_uuid()::text, '\x00', 'IN_PROGRESS', 1, NULL, 1, NULL, now(), now(), NULL) ON CONFLICT (scope, key) DO NOTHING;
INSERT INTO bench_http.payments (payment_id, account, amount_cents) VALUES (gen_random_uuid()::text, :acct, 5);
UPDATE bench_http.accounts SET balance_cents = balance_cents + 5 WHERE id = :acct;
COMMIT;
