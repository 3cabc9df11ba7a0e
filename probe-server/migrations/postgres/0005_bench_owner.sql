-- Version 5: benches as private as probes. Each bench is `unlisted` (only its
-- owner's list shows it; the permalink still opens it) or `public`;
-- `owner_hash` is the SHA-256 of the creator's owner token. Benches stored
-- before have no owner: unlisted, they leave every list (their permalinks
-- still open them, with their options redacted when read).
ALTER TABLE benches ADD COLUMN visibility TEXT NOT NULL DEFAULT 'unlisted'
    CHECK (visibility IN ('unlisted', 'public'));
ALTER TABLE benches ADD COLUMN owner_hash TEXT;
CREATE INDEX benches_public ON benches (visibility, seq);
CREATE INDEX benches_owner ON benches (owner_hash, seq);
