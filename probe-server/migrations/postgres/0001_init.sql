-- Version 1 of the PostgreSQL schema: the SQLite schema's probes and benches
-- (as of its version 3), plus the instances that share the database.
-- Applied by the server inside one transaction holding an advisory lock,
-- and recorded in `schema_migrations`.

-- Each running `h123 serve` process: a random id made at start, and a
-- heartbeat it refreshes every few seconds. Records `running` on an instance
-- whose heartbeat is older than the lease are finished by the live ones.
CREATE TABLE instances (
    id TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Probes. `seq` orders the list (newest first) and is its cursor;
-- `instance_id` is the instance that runs (or ran) the probe.
CREATE TABLE probes (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at_unix_ms BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled')),
    record TEXT NOT NULL,
    visibility TEXT NOT NULL DEFAULT 'unlisted' CHECK (visibility IN ('unlisted', 'public')),
    owner_hash TEXT,
    url TEXT NOT NULL DEFAULT '',
    protocols TEXT NOT NULL DEFAULT '[]',
    instance_id TEXT
);
CREATE INDEX probes_public ON probes (visibility, seq);
CREATE INDEX probes_owner ON probes (owner_hash, seq);
CREATE INDEX probes_running ON probes (instance_id) WHERE status = 'running';

-- Benches, apart from probes (their own ids and lifecycle).
CREATE TABLE benches (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at_unix_ms BIGINT NOT NULL,
    finished_at_unix_ms BIGINT,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled')),
    options TEXT NOT NULL,
    result TEXT,
    cancel_reason TEXT,
    instance_id TEXT,
    CHECK (status = 'running' OR finished_at_unix_ms IS NOT NULL)
);
CREATE INDEX benches_running ON benches (instance_id) WHERE status = 'running';

-- Finished records are immutable in the database itself, whatever the code
-- does; retention may still delete them whole.
CREATE FUNCTION h123_refuse_finished_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status <> 'running' THEN
        RAISE EXCEPTION 'finished % are immutable', TG_TABLE_NAME;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER probes_immutable BEFORE UPDATE ON probes
    FOR EACH ROW EXECUTE FUNCTION h123_refuse_finished_update();
CREATE TRIGGER benches_immutable BEFORE UPDATE ON benches
    FOR EACH ROW EXECUTE FUNCTION h123_refuse_finished_update();
