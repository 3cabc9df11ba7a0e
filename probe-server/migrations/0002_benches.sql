-- Version 2: stored benches, apart from probes (their own ids and lifecycle).
-- Options and result are JSON; the result is set once, when the bench is done.
-- As for probes, the trigger makes finished records immutable in the database itself.
CREATE TABLE benches (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at_unix_ms INTEGER NOT NULL,
    finished_at_unix_ms INTEGER,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled')),
    options TEXT NOT NULL,
    result TEXT,
    CHECK (status = 'running' OR finished_at_unix_ms IS NOT NULL)
);

CREATE TRIGGER benches_immutable
BEFORE UPDATE ON benches
WHEN OLD.status <> 'running'
BEGIN
    SELECT RAISE(ABORT, 'finished benches are immutable');
END;
