-- Registration bounds (issue 40, item 2): a registered client that never obtained a grant expires
-- (navmcp.oauth.clients.save_registered deletes the expired ones as each new one is registered),
-- found by when it was made and whether any grant names it.
CREATE INDEX oauth_clients_created ON oauth_clients(created_at);
CREATE INDEX oauth_grants_client ON oauth_grants(client_id);
