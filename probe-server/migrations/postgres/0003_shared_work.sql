-- Version 3: work shared by every instance on the database: agents' jobs (so
-- an agent may ask any instance for work, behind one load balancer), and the
-- live events of running probes (so any instance streams them).

-- One agent's part of a probe. `owner_instance` holds the probe (its live
-- events, its record) and sweeps the job's lease; any instance hands it to
-- its agent (`FOR UPDATE SKIP LOCKED`). The options as sent carry the
-- probe's credentials, so they are sealed (ChaCha20-Poly1305) under a key
-- derived from the agent's token, which only the instances' configuration
-- knows: the database never holds them readable. Times are the database's.
CREATE TABLE agent_jobs (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    probe_id TEXT NOT NULL,
    vantage TEXT NOT NULL,
    owner_instance TEXT NOT NULL,
    sealed_options BYTEA NOT NULL,
    held BOOLEAN NOT NULL DEFAULT false,
    claims INTEGER NOT NULL DEFAULT 0,
    events BIGINT NOT NULL DEFAULT 0,
    -- When a queued job fails unclaimed, or a held one's lease ends.
    deadline TIMESTAMPTZ NOT NULL,
    -- Whatever the agent does, the job ends by then.
    hard_deadline TIMESTAMPTZ NOT NULL
);
CREATE INDEX agent_jobs_queued ON agent_jobs (vantage, seq) WHERE NOT held;
CREATE INDEX agent_jobs_owner ON agent_jobs (owner_instance);
CREATE INDEX agent_jobs_probe ON agent_jobs (probe_id);

-- What agents posted (events, results, problems; redacted), waiting for the
-- instance that holds the probe to take them in, in `seq` order.
CREATE TABLE agent_posts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_instance TEXT NOT NULL,
    probe_id TEXT NOT NULL,
    vantage TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('events', 'result', 'problem')),
    body TEXT NOT NULL
);
CREATE INDEX agent_posts_owner ON agent_posts (owner_instance, seq);

-- Live events of running probes, published by the instance that runs each
-- probe in its own order (`idx`, also their SSE ids), for SSE subscribers at
-- the other instances. Deleted a minute after their probe finished.
CREATE TABLE probe_events (
    probe_id TEXT NOT NULL,
    idx BIGINT NOT NULL,
    event TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (probe_id, idx)
);
CREATE INDEX probe_events_at ON probe_events (at);
