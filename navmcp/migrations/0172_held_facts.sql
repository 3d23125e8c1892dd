-- Held actions (navmcp/held/), two facts kept from when a write was held:
--   in_client        whether it may be approved in the MCP client (an elicitation its person
--                    answers, navmcp/held/elicit.py), as its rule said: 1 yes, 0 the browser only
--   target_revision  the target item's revision then: an edit is stale only where a later
--                    revision changed a field it touches (navmcp/held/staleness.py)
ALTER TABLE held_actions ADD COLUMN in_client INTEGER NOT NULL DEFAULT 0;
ALTER TABLE held_actions ADD COLUMN target_revision INTEGER;
