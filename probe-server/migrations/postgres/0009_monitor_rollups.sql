-- Version 9: a monitor's history rolled up as its points land
-- (`shared::monitor_rollup`): a row per monitor, width (an hour or a day,
-- in milliseconds), start, protocol and vantage (empty protocol and vantage
-- for missed slots), its cell as JSON (counts, log histograms of each figure,
-- the verdict's leads, the latest run). A window is read from these rows
-- between its ragged ends, so a read costs a bounded number of rows whatever
-- the monitor's age. Filled from the stored points when the migration runs.
CREATE TABLE monitor_rollups (
    monitor_id TEXT NOT NULL,
    width_ms BIGINT NOT NULL,
    start_unix_ms BIGINT NOT NULL,
    protocol TEXT NOT NULL,
    vantage TEXT NOT NULL,
    cell TEXT NOT NULL,
    PRIMARY KEY (monitor_id, width_ms, start_unix_ms, protocol, vantage)
);
