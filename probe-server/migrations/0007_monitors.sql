-- Version 7: monitors (a probe repeated on a schedule) and their history.
-- `spec` is the monitor's JSON (`shared::monitor::MonitorSpec`); a scheduler
-- takes a due slot by moving `next_slot_unix_ms` from the value it read
-- (compare and set), so one run fires per slot however many schedulers look.
-- `monitor_points` keeps a row per slot, vantage and protocol with the
-- figures a series reads (microseconds), never re-read from whole records; a
-- missed stretch is one row with an empty protocol and its slot count.
CREATE TABLE monitors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    created_at_unix_ms INTEGER NOT NULL,
    owner_hash TEXT,
    visibility TEXT NOT NULL CHECK (visibility IN ('unlisted', 'public')),
    spec TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    next_slot_unix_ms INTEGER NOT NULL,
    -- The key webhooks' signatures are made with (given to the owner once).
    alert_secret TEXT,
    -- `shared::alert::AlertState` as JSON: the conditions' streaks and which fire.
    alert_state TEXT
);
CREATE INDEX monitors_due ON monitors (paused, next_slot_unix_ms);
CREATE INDEX monitors_owner ON monitors (owner_hash, seq);
CREATE INDEX monitors_public ON monitors (visibility, seq);

CREATE TABLE monitor_points (
    monitor_id TEXT NOT NULL,
    slot_unix_ms INTEGER NOT NULL,
    vantage TEXT NOT NULL,
    protocol TEXT NOT NULL,
    state TEXT NOT NULL,
    started_unix_ms INTEGER NOT NULL,
    missed INTEGER NOT NULL DEFAULT 0,
    probe_id TEXT,
    status INTEGER,
    dns_us INTEGER,
    connect_us INTEGER,
    tls_us INTEGER,
    ttfb_us INTEGER,
    total_us INTEGER,
    reused_total_us INTEGER,
    breached TEXT,
    detail TEXT,
    PRIMARY KEY (monitor_id, slot_unix_ms, vantage, protocol)
) WITHOUT ROWID;

-- Every try to deliver a notification: where to (scheme and host only), what, and how it went.
CREATE TABLE monitor_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    monitor_id TEXT NOT NULL,
    at_unix_ms INTEGER NOT NULL,
    target TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    delivered INTEGER NOT NULL
);
CREATE INDEX monitor_deliveries_monitor ON monitor_deliveries (monitor_id, seq);
