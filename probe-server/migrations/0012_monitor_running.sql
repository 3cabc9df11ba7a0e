-- Version 12: a slot's point is stored as `running` when the slot is claimed (and replaced
-- by the run's points when it ends), so a crash leaves `cancelled`, never nothing. The
-- instance that claimed it is kept (one per SQLite file; PostgreSQL's instances reap the
-- points of the dead ones), and the running points are found by a partial index.
ALTER TABLE monitor_points ADD COLUMN instance_id TEXT;
CREATE INDEX monitor_points_running ON monitor_points (monitor_id) WHERE state = 'running';
