-- Version 2: the creation rate's token buckets, shared by every instance on
-- the database, so a client's limit holds whichever instance it reaches.
-- One row per client (an IPv4 address or an IPv6 prefix, as `ClientKey`
-- prints it) seen within the time its bucket takes to refill; rows older
-- than that are full buckets and are deleted.
CREATE TABLE rate_buckets (
    client TEXT PRIMARY KEY,
    -- Tokens left after the last request, as of `at`.
    tokens DOUBLE PRECISION NOT NULL,
    at TIMESTAMPTZ NOT NULL,
    -- Whether the last request took a token (the answer of the statement
    -- that updated the row).
    took BOOLEAN NOT NULL
);
CREATE INDEX rate_buckets_at ON rate_buckets (at);
