-- On Supabase every table created in `public` is granted to the Data API roles `anon` and
-- `authenticated` by default, and a user's Supabase token (the one navmcp accepts) works there
-- too. navmcp's rules live in its pages and actions (who may close a decision, that a vote is
-- one's own, that a commitment's count is kept by its trigger); its policies are the backstop for
-- a query that forgets its studio, not a public API. So the Data API reaches none of its tables:
-- users reach the data through navmcp, which works as navmcp_app. A later migration that creates
-- a table revokes the same (tests/test_pg_rls.py checks every table of the schema).
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE users, settings, studios, memberships, studio_people, studio_item_counts,'
                           ' items, item_tags, options, votes, participants, comments, reads, links, audit,'
                           ' mcp_sessions, login_links, web_sessions FROM %I', api_role);
            EXECUTE format('REVOKE ALL ON SEQUENCE audit_id_seq, comments_seq_seq, items_seq_seq FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;
