-- The points that still link a monitor run's record, by slot, so the retention task finds the
-- runs older than `--monitor-records-days` without reading the whole history (a point whose
-- record is deleted has its link cleared and leaves this index).
CREATE INDEX monitor_points_linked ON monitor_points (slot_unix_ms) WHERE probe_id IS NOT NULL;
