-- The same record with the starter: the claim on the listener's transaction as the inbox sends it (one
-- round trip: savepoint, lock_timeout kept and set, the claim written COMPLETED, lock_timeout restored,
-- savepoint released), then the listener's INSERT and UPDATE and COMMIT.
\set a random(1, 1000)
\set n random(1, 2000000000)
BEGIN;
\startpipeline
SAVEPOINT inbox_claim_savepoint;
SELECT set_config('inbox.caller_lock_timeout', current_setting('lock_timeout'), true);
SET LOCAL lock_timeout = '5000ms';
WITH seen AS (SELECT key, state, attempts, fingerprint, fencing_token, locked_until, r.locked_until >= now() AS lease_live, result_status, result_headers, result_body, result_body_sha256 FROM skfloor.inbox AS r WHERE scope = 'sc' AND key = 'k' || :client_id || '-' || :n), inserted AS (INSERT INTO skfloor.inbox (scope, key, fingerprint, state, attempts, lease_owner, fencing_token, locked_until, created_at, updated_at, completed_at) SELECT 'sc', 'k' || :client_id || '-' || :n, '\x494e4258076d657373616765837058d3e26d3d4ee8abf3da589d51d81aedf8b47ac13af45ab5c857cd57d3f8'::bytea, 'COMPLETED', 1, NULL::text, 1, NULL::timestamptz, now(), now(), now() WHERE NOT EXISTS (SELECT 1 FROM seen) ON CONFLICT (scope, key) DO NOTHING RETURNING key, locked_until) SELECT true AS inserted, key, NULL::text AS state, NULL::integer AS attempts, NULL::bytea AS fingerprint, NULL::bigint AS fencing_token, locked_until, NULL::boolean AS lease_live, NULL::integer AS result_status, NULL::text[] AS result_headers, NULL::bytea AS result_body, NULL::bytea AS result_body_sha256 FROM inserted UNION ALL SELECT false, * FROM seen;
SELECT set_config('lock_timeout', current_setting('inbox.caller_lock_timeout'), true);
RELEASE SAVEPOINT inbox_claim_savepoint;
\endpipeline
INSERT INTO skfloor.payments VALUES ('p' || :client_id || '-' || :n, :a, 5);
UPDATE skfloor.accounts SET balance_cents = balance_cents + 5 WHERE id = :a;
COMMIT;
