-- Version 8: each probe's line in the recent-results list says how it went and what its verdict
-- is, from columns set when the probe finishes (`h123_shared::api::list_line`), as SQLite's
-- migration 9 has them: `outcome` (`done`, `done_with_errors`, `http_error`, `failed`) and
-- `verdict` (the verdict's summary as the result page heads it, cut to 300 characters), NULL
-- while a probe runs and for a record stored without an analysis. The server fills the finished
-- rows from their records right after this, in the same transaction, with the immutability
-- trigger disabled for that step only.
ALTER TABLE probes ADD COLUMN outcome TEXT;
ALTER TABLE probes ADD COLUMN verdict TEXT;
