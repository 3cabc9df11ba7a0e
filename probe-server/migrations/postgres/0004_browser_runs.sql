-- Version 4: a probe owner's own browser measurement, stored beside the
-- finished (immutable) record, at most one per probe and never changed:
-- the primary key refuses a second, the trigger any update, and deleting the
-- probe (retention) deletes it too.
CREATE TABLE browser_runs (
    probe_id TEXT PRIMARY KEY REFERENCES probes (id) ON DELETE CASCADE,
    measured_at_unix_ms BIGINT NOT NULL,
    run TEXT NOT NULL
);

CREATE FUNCTION browser_runs_refuse_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'browser measurements are immutable';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER browser_runs_immutable
BEFORE UPDATE ON browser_runs
FOR EACH ROW EXECUTE FUNCTION browser_runs_refuse_update();
