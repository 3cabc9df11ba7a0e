-- Version 10: the client (`server::client::ClientKey` as text: an IPv4 address or an IPv6
-- prefix) that made each monitor, as SQLite's migration 11: monitors are bounded per client
-- as well as per owner token, and the monitors' bytes per minute are shared among their
-- clients. Monitors made before it have none and count as one client together.
ALTER TABLE monitors ADD COLUMN IF NOT EXISTS client TEXT;
CREATE INDEX IF NOT EXISTS monitors_client ON monitors (client);
