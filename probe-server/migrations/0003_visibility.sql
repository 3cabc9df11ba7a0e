-- Version 3: private by default. Each probe is `unlisted` (only its owner's
-- list shows it; the permalink still opens it) or `public`; `owner_hash` is
-- the SHA-256 of the creator's owner token (the token itself is never stored).
-- The list reads the summary columns `url` and `protocols`, never whole records.
-- The immutability trigger is dropped here so the start-up code can redact and
-- backfill the existing rows in the same transaction, then put it back.
DROP TRIGGER probes_immutable;
ALTER TABLE probes ADD COLUMN visibility TEXT NOT NULL DEFAULT 'unlisted'
    CHECK (visibility IN ('unlisted', 'public'));
ALTER TABLE probes ADD COLUMN owner_hash TEXT;
ALTER TABLE probes ADD COLUMN url TEXT NOT NULL DEFAULT '';
ALTER TABLE probes ADD COLUMN protocols TEXT NOT NULL DEFAULT '[]';
CREATE INDEX probes_public ON probes (visibility, seq);
CREATE INDEX probes_owner ON probes (owner_hash, seq);
