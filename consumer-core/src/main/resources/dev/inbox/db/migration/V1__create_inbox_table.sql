-- The inbox: one row per (scope, key). See dev.inbox.Inbox for the state machine.
CREATE TABLE ${inbox_schema}.${inbox_table} (
    scope              text        NOT NULL,
    key                text        NOT NULL,
    fingerprint        bytea,
    state              text        NOT NULL,
    attempts           integer     NOT NULL DEFAULT 0,
    lease_owner        text,
    fencing_token      bigint      NOT NULL DEFAULT 0,
    locked_until       timestamptz,
    result_status      integer,
    result_headers     text[],
    result_body        bytea,
    result_body_sha256 bytea,
    last_error         text,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    completed_at       timestamptz,
    CONSTRAINT ${inbox_table}_pkey PRIMARY KEY (scope, key),
    CONSTRAINT ${inbox_table}_state_check CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),
    CONSTRAINT ${inbox_table}_completed_check CHECK (state <> 'COMPLETED' OR completed_at IS NOT NULL)
);

-- purgeExpired() walks completed rows oldest first.
CREATE INDEX ${inbox_table}_completed_at_idx
    ON ${inbox_schema}.${inbox_table} (completed_at) WHERE state = 'COMPLETED';

-- Committed IN_PROGRESS rows exist only in leased mode; this keeps "oldest in progress" cheap.
CREATE INDEX ${inbox_table}_leased_idx
    ON ${inbox_schema}.${inbox_table} (created_at) WHERE state = 'IN_PROGRESS';
