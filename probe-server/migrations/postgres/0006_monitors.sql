-- Version 6: monitors (a probe repeated on a schedule) and their history, as
-- SQLite's migration 7 has them. A scheduler takes a due slot by moving
-- `next_slot_unix_ms` from the value it read (compare and set), so one run
-- fires per slot however many instances look.
CREATE TABLE monitors (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at_unix_ms BIGINT NOT NULL,
    owner_hash TEXT,
    visibility TEXT NOT NULL CHECK (visibility IN ('unlisted', 'public')),
    spec TEXT NOT NULL,
    paused BOOLEAN NOT NULL DEFAULT FALSE,
    next_slot_unix_ms BIGINT NOT NULL,
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
    slot_unix_ms BIGINT NOT NULL,
    vantage TEXT NOT NULL,
    protocol TEXT NOT NULL,
    state TEXT NOT NULL,
    started_unix_ms BIGINT NOT NULL,
    missed BIGINT NOT NULL DEFAULT 0,
    probe_id TEXT,
    status BIGINT,
    dns_us BIGINT,
    connect_us BIGINT,
    tls_us BIGINT,
    ttfb_us BIGINT,
    total_us BIGINT,
    reused_total_us BIGINT,
    breached TEXT,
    detail TEXT,
    PRIMARY KEY (monitor_id, slot_unix_ms, vantage, protocol)
);

-- Every try to deliver a notification: where to (scheme and host only), what, and how it went.
CREATE TABLE monitor_deliveries (
    seq BIGSERIAL PRIMARY KEY,
    monitor_id TEXT NOT NULL,
    at_unix_ms BIGINT NOT NULL,
    target TEXT NOT NULL,
    key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    outcome TEXT NOT NULL,
    delivered BOOLEAN NOT NULL
);
CREATE INDEX monitor_deliveries_monitor ON monitor_deliveries (monitor_id, seq);
