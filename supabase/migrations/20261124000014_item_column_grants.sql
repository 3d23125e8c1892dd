-- A commitment's participant count (20261124000013) is kept by the participants triggers, which
-- write as the table owner. navmcp_app had UPDATE and INSERT on the whole items table, so under
-- the items policy a member could set the count on any item of their studio (or create a
-- commitment with one) and make it read "critical mass reached", or full and closed, with nobody
-- joined. The app role now writes only the columns navmcp's own statements write:
--   INSERT: domain.insert_item (the rest take their defaults; seq is an identity, fts generated);
--   UPDATE: edit_note (title, body, updated_at), pin/unpin (pinned), closing a decision or a
--           commitment (closed_at, updated_at), domain.touch (updated_at).
-- Any UPDATE privilege on a column is also what `SELECT ... FOR NO KEY UPDATE` (the store's row
-- lock) needs. An action that comes to write another column must grant it here first.
REVOKE INSERT, UPDATE ON items FROM navmcp_app;  -- also revokes any column grants on items
GRANT INSERT (id, studio_id, kind, title, body, created_by, created_at, updated_at, deadline,
              critical_mass, participant_limit) ON items TO navmcp_app;
GRANT UPDATE (title, body, updated_at, pinned, closed_at) ON items TO navmcp_app;
