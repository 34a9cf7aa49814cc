-- The batch claim of 100 new keys (the shipped statement, keys and fingerprints as bind parameters) in a
-- transaction that rolls back, so the table stays as claim-table-setup.sql left it. Run it with
-- -M extended (parsed and planned every time, as the inbox sends it) and with -M prepared (planned once,
-- a generic plan) to see what planning costs a warm connection:
--   pgbench -h 127.0.0.1 -U postgres -n -c 1 -T 8 -M extended -f benchmarks/pgbench/claim-batch-pgbench.sql postgres
SELECT ARRAY(SELECT gen_random_uuid()::text FROM generate_series(1, 100))::text AS ks, ARRAY(SELECT NULL::bytea FROM generate_series(1, 100))::text AS fs \gset
BEGIN;
WITH seen AS (SELECT s.* FROM unnest(:ks::text[]) AS q(k) CROSS JOIN LATERAL (SELECT key, state, attempts, fingerprint, fencing_token, locked_until, result_status, result_headers, result_body, result_body_sha256 FROM claimtest.inbox WHERE scope = 'bench' AND key = q.k LIMIT 1) s), inserted AS (INSERT INTO claimtest.inbox (scope, key, fingerprint, state, attempts, lease_owner, fencing_token, locked_until, created_at, updated_at, completed_at) SELECT 'bench', u.k, u.f, 'COMPLETED', 1, NULL::text, 1, NULL::timestamptz, now(), now(), now() FROM unnest(:ks::text[], :fs::bytea[]) AS u(k, f) WHERE NOT EXISTS (SELECT 1 FROM seen WHERE seen.key = u.k) ORDER BY u.k RETURNING key, state, attempts, fingerprint, fencing_token, locked_until) SELECT true AS inserted, key, state, attempts, fingerprint, fencing_token, locked_until, NULL::integer AS result_status, NULL::text[] AS result_headers, NULL::bytea AS result_body, NULL::bytea AS result_body_sha256 FROM inserted UNION ALL SELECT false, * FROM seen;
ROLLBACK;
