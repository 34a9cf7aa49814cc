-- The partitioned inbox (storage PARTITIONED, docs/scale.md): the records of the plain table in
-- generations, a LIST partition each, with no DEFAULT partition. A plain inbox table of the same
-- name becomes generation 0 in place, so that no key is copied and none can be lost.

-- One row per live generation; the newest is the write generation.
CREATE TABLE ${inbox_schema}.${inbox_table}_generations (
    generation integer     NOT NULL,
    started_at timestamptz NOT NULL,
    CONSTRAINT ${inbox_table}_generations_pkey PRIMARY KEY (generation)
);

-- The generation a row inserted without one goes to, as the statement's snapshot sees it.
CREATE FUNCTION ${inbox_schema}.${inbox_table}_write_generation() RETURNS integer
    LANGUAGE sql STABLE
AS $$ SELECT max(generation) FROM ${inbox_schema}.${inbox_table}_generations $$;

-- A live plain table becomes generation 0: a column with a constant default (no rewrite), its
-- primary key widened to the partition key, its indexes renamed out of the parent's way.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = '${inbox_schema_name}' AND c.relname = '${inbox_table}'
                 AND c.relkind = 'r') THEN
        ALTER TABLE ${inbox_schema}.${inbox_table}
            ADD COLUMN IF NOT EXISTS generation integer NOT NULL DEFAULT 0;
        CREATE UNIQUE INDEX IF NOT EXISTS ${inbox_table}_g0_pkey
            ON ${inbox_schema}.${inbox_table} (scope, key, generation);
        ALTER TABLE ${inbox_schema}.${inbox_table}
            DROP CONSTRAINT ${inbox_table}_pkey,
            ADD CONSTRAINT ${inbox_table}_g0_pkey PRIMARY KEY USING INDEX ${inbox_table}_g0_pkey;
        ALTER INDEX ${inbox_schema}.${inbox_table}_completed_at_idx
            RENAME TO ${inbox_table}_g0_completed_at_idx;
        ALTER INDEX ${inbox_schema}.${inbox_table}_leased_idx RENAME TO ${inbox_table}_g0_leased_idx;
        ALTER TABLE ${inbox_schema}.${inbox_table} RENAME TO ${inbox_table}_g0;
        INSERT INTO ${inbox_schema}.${inbox_table}_generations VALUES (0, now());
    END IF;
END
$$;

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
    generation         integer     NOT NULL
        DEFAULT ${inbox_schema}.${inbox_table}_write_generation(),
    CONSTRAINT ${inbox_table}_pkey PRIMARY KEY (scope, key, generation),
    CONSTRAINT ${inbox_table}_state_check CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),
    CONSTRAINT ${inbox_table}_completed_check CHECK (state <> 'COMPLETED' OR completed_at IS NOT NULL)
) PARTITION BY LIST (generation);

CREATE INDEX ${inbox_table}_completed_at_idx
    ON ${inbox_schema}.${inbox_table} (completed_at) WHERE state = 'COMPLETED';
CREATE INDEX ${inbox_table}_leased_idx
    ON ${inbox_schema}.${inbox_table} (created_at) WHERE state = 'IN_PROGRESS';
-- The retention's carry-over finds the few failed rows it must keep without scanning a partition.
CREATE INDEX ${inbox_table}_failed_idx
    ON ${inbox_schema}.${inbox_table} (updated_at) WHERE state = 'FAILED';

-- The key guard, for every row inserted into any partition by any statement: READ COMMITTED only;
-- the key's advisory lock (the one execute's reservation takes); then, with a fresh snapshot, the
-- key looked up in every other attached partition, listed from pg_inherits now and read by name
-- (a query through the parent would scan only the partitions its statement knew), and a
-- serialization failure if it is there. The row's own partition is its primary key's business.
CREATE FUNCTION ${inbox_schema}.${inbox_table}_key_guard() RETURNS trigger
    LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    other regclass;
    seen  boolean;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'the partitioned inbox ${inbox_schema_name}.${inbox_table} takes keys only from READ COMMITTED transactions, but this one is %',
            upper(current_setting('transaction_isolation'))
            USING ERRCODE = '25000',
                  HINT = 'run the claim in a READ COMMITTED transaction';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended(
        '${inbox_schema_name}.${inbox_table}' || chr(31) || NEW.scope || chr(31) || NEW.key, 0));
    FOR other IN
        SELECT i.inhrelid::regclass FROM pg_catalog.pg_inherits i
        WHERE i.inhparent = '${inbox_schema}.${inbox_table}'::regclass
          AND NOT i.inhdetachpending AND i.inhrelid <> TG_RELID
    LOOP
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE scope = $1 AND key = $2)', other)
            INTO seen USING NEW.scope, NEW.key;
        IF seen THEN
            RAISE EXCEPTION 'key % in scope % is already recorded in %', NEW.key, NEW.scope, other
                USING ERRCODE = '40001';
        END IF;
    END LOOP;
    RETURN NEW;
END
$$;

CREATE TRIGGER ${inbox_table}_key_guard BEFORE INSERT ON ${inbox_schema}.${inbox_table}
    FOR EACH ROW EXECUTE FUNCTION ${inbox_schema}.${inbox_table}_key_guard();

-- Generation 0 (the old table, or an empty one) and, after a conversion, an empty generation 1
-- to write to, so that the old table is retired like any other generation.
CREATE TABLE IF NOT EXISTS ${inbox_schema}.${inbox_table}_g0
    (LIKE ${inbox_schema}.${inbox_table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE ${inbox_schema}.${inbox_table} ATTACH PARTITION ${inbox_schema}.${inbox_table}_g0
    FOR VALUES IN (0);
ALTER TABLE ${inbox_schema}.${inbox_table}_g0
    ALTER COLUMN generation SET DEFAULT ${inbox_schema}.${inbox_table}_write_generation();

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM ${inbox_schema}.${inbox_table}_generations) THEN
        CREATE TABLE ${inbox_schema}.${inbox_table}_g1
            (LIKE ${inbox_schema}.${inbox_table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
        ALTER TABLE ${inbox_schema}.${inbox_table} ATTACH PARTITION ${inbox_schema}.${inbox_table}_g1
            FOR VALUES IN (1);
        INSERT INTO ${inbox_schema}.${inbox_table}_generations VALUES (1, now());
    ELSE
        INSERT INTO ${inbox_schema}.${inbox_table}_generations VALUES (0, now());
    END IF;
END
$$;
