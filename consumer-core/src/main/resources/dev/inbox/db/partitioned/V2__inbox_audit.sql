-- V2 of the plain table, with IF NOT EXISTS: a plain table converted by V1 has these already.
-- What operators did to keys (release, settle): who, when by the database's clock, why, and the
-- record before and after, written in the same transaction as the change itself. Never purged by
-- the inbox: it is the trail a reconciliation is checked against.
CREATE TABLE IF NOT EXISTS ${inbox_schema}.${inbox_table}_audit (
    id         bigint      GENERATED ALWAYS AS IDENTITY,
    at         timestamptz NOT NULL,
    actor      text        NOT NULL,
    reason     text        NOT NULL,
    action     text        NOT NULL,
    forced     boolean     NOT NULL,
    scope      text        NOT NULL,
    key        text        NOT NULL,
    before     jsonb,
    after      jsonb       NOT NULL,
    CONSTRAINT ${inbox_table}_audit_pkey PRIMARY KEY (id),
    CONSTRAINT ${inbox_table}_audit_action_check CHECK (action IN ('RELEASE', 'SETTLE')),
    CONSTRAINT ${inbox_table}_audit_actor_check CHECK (btrim(actor) <> ''),
    CONSTRAINT ${inbox_table}_audit_reason_check CHECK (btrim(reason) <> '')
);

CREATE INDEX IF NOT EXISTS ${inbox_table}_audit_key_idx ON ${inbox_schema}.${inbox_table}_audit (scope, key, id);

-- The last purge of expired records, one row, for operators who ask whether the janitor runs.
CREATE TABLE IF NOT EXISTS ${inbox_schema}.${inbox_table}_purges (
    id           smallint    NOT NULL DEFAULT 1,
    last_run_at  timestamptz NOT NULL,
    last_deleted bigint      NOT NULL,
    CONSTRAINT ${inbox_table}_purges_pkey PRIMARY KEY (id),
    CONSTRAINT ${inbox_table}_purges_one_row_check CHECK (id = 1)
);
