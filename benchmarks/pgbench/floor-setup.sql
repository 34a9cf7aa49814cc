-- Tables for floor.sh: the core scenario's payments and accounts, the inbox table (its shape taken from
-- bench_core.inbox, which the core scenario leaves behind), and two leaner key tables. Run with psql -f.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS floortest CASCADE;
CREATE SCHEMA floortest;
CREATE TABLE floortest.payments (payment_id text NOT NULL, account int NOT NULL, amount_cents bigint NOT NULL);
CREATE TABLE floortest.accounts (id int PRIMARY KEY, balance_cents bigint NOT NULL DEFAULT 0);
INSERT INTO floortest.accounts (id) SELECT g FROM generate_series(0, 999) g;
CREATE TABLE floortest.inbox (LIKE bench_core.inbox INCLUDING ALL);
CREATE TABLE floortest.keys_only (scope text NOT NULL, key text NOT NULL, PRIMARY KEY (scope, key));
CREATE TABLE floortest.hash_only (h bigint PRIMARY KEY);
