-- floor-inbox-row.sql with a table of nothing but (scope, key) and its primary key: no state, no result, no
-- purge index.
WITH p AS (SELECT gen_random_uuid()::text AS id, (random() * 999)::int AS account, 100::bigint AS amount FROM generate_series(1, 80)), recorded AS (INSERT INTO floortest.keys_only SELECT 'bench', id FROM p), inserted AS (INSERT INTO floortest.payments SELECT id, account, amount FROM p) UPDATE floortest.accounts a SET balance_cents = a.balance_cents + d.total FROM (SELECT account, sum(amount)::bigint AS total FROM p GROUP BY account) d WHERE a.id = d.account;
