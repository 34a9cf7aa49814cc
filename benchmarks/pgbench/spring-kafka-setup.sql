-- Tables for spring-kafka-floor.sh: the spring-kafka scenario's payments and accounts, and the inbox table
-- (its shape taken from bench_spring_kafka.inbox, which the spring-kafka benchmark leaves behind). psql -f.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS skfloor CASCADE;
CREATE SCHEMA skfloor;
CREATE TABLE skfloor.payments (payment_id text PRIMARY KEY, account int NOT NULL, amount_cents bigint NOT NULL);
CREATE TABLE skfloor.accounts (id int PRIMARY KEY, balance_cents bigint NOT NULL DEFAULT 0);
INSERT INTO skfloor.accounts (id) SELECT g FROM generate_series(1, 1000) g;
CREATE TABLE skfloor.inbox (LIKE bench_spring_kafka.inbox INCLUDING ALL);
