CREATE TABLE accounts (account_id text PRIMARY KEY, balance_cents bigint NOT NULL);
