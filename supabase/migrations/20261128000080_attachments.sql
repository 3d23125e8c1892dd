-- Attachments (navmcp/attachments.py), as SQLite's 0080: files on an item or one of its comments,
-- kept in the database, going with their item or comment. Members of the studio read them; a
-- member attaches in their own name to an item of their studio; the uploader or an admin removes.
CREATE TABLE attachments (
    id            text PRIMARY KEY,
    studio_id     text NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    item_id       text NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    comment_id    text REFERENCES comments(id) ON DELETE CASCADE,
    filename      text NOT NULL,
    content_type  text NOT NULL,
    size          integer NOT NULL CHECK (size >= 0),
    sha256        text NOT NULL,
    data          bytea NOT NULL,
    created_by    text NOT NULL REFERENCES users(id),
    created_at    text NOT NULL
);
CREATE INDEX attachments_item ON attachments(item_id, created_at);
CREATE INDEX attachments_studio ON attachments(studio_id);

ALTER TABLE attachments ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, DELETE ON attachments TO navmcp_app;
-- Not Supabase's Data API's (see 20261124000016_no_data_api.sql).
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE attachments FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;
CREATE POLICY attachments_read ON attachments FOR SELECT
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
CREATE POLICY attachments_write ON attachments FOR INSERT WITH CHECK (
    created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[])
    AND EXISTS (SELECT 1 FROM items i WHERE i.id = item_id AND i.studio_id = attachments.studio_id)
    AND (comment_id IS NULL
         OR EXISTS (SELECT 1 FROM comments c WHERE c.id = comment_id AND c.item_id = attachments.item_id)));
CREATE POLICY attachments_delete ON attachments FOR DELETE
    USING ((created_by = (SELECT navmcp.uid()) AND studio_id = ANY ((SELECT navmcp.my_studios())::text[]))
           OR navmcp.is_admin(studio_id));
