-- One record of the spring-kafka scenario's plain listener: its transaction, INSERT and UPDATE, COMMIT
-- (pgjdbc sends BEGIN with the first statement; pgbench sends it alone, in both scripts alike).
\set a random(1, 1000)
\set n random(1, 2000000000)
BEGIN;
INSERT INTO skfloor.payments VALUES ('p' || :client_id || '-' || :n, :a, 5);
UPDATE skfloor.accounts SET balance_cents = balance_cents + 5 WHERE id = :a;
COMMIT;
