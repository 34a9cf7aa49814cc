-- The least a claim can cost: the key's row inserted in a round trip of its own (no savepoint, no
-- lock_timeout, no read), then the listener's INSERT and UPDATE and COMMIT.
\set a random(1, 1000)
\set n random(1, 2000000000)
BEGIN;
INSERT INTO skfloor.inbox (scope, key, fingerprint, state, attempts, fencing_token, created_at, updated_at, completed_at) VALUES ('sc', 'k' || :client_id || '-' || :n, '\x494e4258076d657373616765837058d3e26d3d4ee8abf3da589d51d81aedf8b47ac13af45ab5c857cd57d3f8'::bytea, 'COMPLETED', 1, 1, now(), now(), now()) ON CONFLICT DO NOTHING;
INSERT INTO skfloor.payments VALUES ('p' || :client_id || '-' || :n, :a, 5);
UPDATE skfloor.accounts SET balance_cents = balance_cents + 5 WHERE id = :a;
COMMIT;
