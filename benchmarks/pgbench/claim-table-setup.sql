-- A small inbox table (10 800 completed UUID keys) for claim-batch-any.sql and claim-batch-lateral.sql:
-- the size of the core scenario's table midway through a run. Needs bench_core.inbox for the table's
-- shape (the core scenario leaves it behind). Run with psql -f.
DROP SCHEMA IF EXISTS claimtest CASCADE;
CREATE SCHEMA claimtest;
CREATE TABLE claimtest.inbox (LIKE bench_core.inbox INCLUDING ALL);
INSERT INTO claimtest.inbox (scope, key, state, attempts, created_at, updated_at, completed_at)
  SELECT 'bench', gen_random_uuid()::text, 'COMPLETED', 1, now(), now(), now() FROM generate_series(1, 10800);
VACUUM ANALYZE claimtest.inbox;
