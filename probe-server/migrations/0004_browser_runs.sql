-- Version 4: a probe owner's own browser measurement, stored beside the
-- finished (immutable) record, at most one per probe and never changed:
-- the primary key refuses a second, the trigger any update, and deleting the
-- probe (retention) deletes it too.
CREATE TABLE browser_runs (
    probe_id TEXT PRIMARY KEY,
    measured_at_unix_ms INTEGER NOT NULL,
    run TEXT NOT NULL
);

CREATE TRIGGER browser_runs_immutable
BEFORE UPDATE ON browser_runs
BEGIN
    SELECT RAISE(ABORT, 'browser measurements are immutable');
END;

CREATE TRIGGER probes_delete_browser_run
AFTER DELETE ON probes
BEGIN
    DELETE FROM browser_runs WHERE probe_id = OLD.id;
END;
