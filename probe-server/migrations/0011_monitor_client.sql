-- Version 11: the client (`server::client::ClientKey` as text: an IPv4 address or an IPv6
-- prefix) that made each monitor, so monitors are bounded per client as well as per owner
-- token (tokens are free) and the monitors' bytes per minute are shared among their clients.
-- Monitors made before it have none and count as one client together.
ALTER TABLE monitors ADD COLUMN client TEXT;
CREATE INDEX monitors_client ON monitors (client);
