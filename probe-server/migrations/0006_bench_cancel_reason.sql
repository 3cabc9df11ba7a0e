-- Version 6: why a cancelled bench stopped (its time limit, its byte budget),
-- as PostgreSQL's benches table already keeps it.
ALTER TABLE benches ADD COLUMN cancel_reason TEXT;
