-- An inbox table of 200 000 completed keys for the batch-resends-*.sql scripts (needs bench_http.inbox,
-- which the http scenario leaves behind, for the table's shape).
DROP SCHEMA IF EXISTS abtest CASCADE;
CREATE SCHEMA abtest;
CREATE TABLE abtest.inbox (LIKE bench_http.inbox INCLUDING ALL);
INSERT INTO abtest.inbox (scope, key, state, attempts, created_at, updated_at, completed_at)
  SELECT 'bench', 'filled-' || g, 'COMPLETED', 1, now(), now(), now() FROM generate_series(1, 200000) g;
VACUUM ANALYZE abtest.inbox;
