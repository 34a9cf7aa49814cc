-- The example's own schema. payments deliberately has no unique constraint on payment_id: a failure of
-- deduplication shows up as a doubled row and a wrong balance, not as a constraint error that hides it.
CREATE TABLE accounts (
    account_id    text   PRIMARY KEY,
    balance_cents bigint NOT NULL
);

CREATE TABLE payments (
    id           bigserial   PRIMARY KEY,
    payment_id   text        NOT NULL,
    account_id   text        NOT NULL,
    amount_cents bigint      NOT NULL,
    channel      text        NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE INDEX payments_payment_id_idx ON payments (payment_id);
