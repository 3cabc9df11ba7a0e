-- Version 1: stored probes. A record may change only while it is running;
-- the trigger makes finished records immutable in the database itself.
CREATE TABLE probes (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at_unix_ms INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'cancelled')),
    record TEXT NOT NULL
);

CREATE TRIGGER probes_immutable
BEFORE UPDATE ON probes
WHEN OLD.status <> 'running'
BEGIN
    SELECT RAISE(ABORT, 'finished probes are immutable');
END;

