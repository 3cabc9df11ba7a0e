-- Version 9: each probe's line in the recent-results list says how it went and what its verdict
-- is, from columns set when the probe finishes (`h123_shared::api::list_line`), so the list still
-- never reads whole records. `outcome` is `done`, `done_with_errors`, `http_error` or `failed`;
-- `verdict` is the verdict's summary as the result page heads it, cut to 300 characters. Both
-- stay NULL while a probe runs and for a record stored without an analysis (its page shows no
-- verdict either). The immutability trigger is dropped here so the start-up code can fill the
-- finished rows from their records in the same transaction, then put it back.
DROP TRIGGER probes_immutable;
ALTER TABLE probes ADD COLUMN outcome TEXT;
ALTER TABLE probes ADD COLUMN verdict TEXT;
