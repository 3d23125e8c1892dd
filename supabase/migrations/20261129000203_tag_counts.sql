-- Mirrors navmcp/migrations/0202_tag_counts.sql: how many items of a studio carry a tag, kept by
-- triggers on the tag rows (the tag page counted the tag's rows: 23,000 for a common tag at a
-- million items). Members read their studios' counts; only the trigger, as the owner, writes them.
CREATE TABLE tag_counts (
    studio_id TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    tag       TEXT COLLATE "C" NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (studio_id, tag)
);
INSERT INTO tag_counts (studio_id, tag, n)
    SELECT studio_id, tag, count(*) FROM item_tags WHERE studio_id IS NOT NULL GROUP BY studio_id, tag;
ALTER TABLE tag_counts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tag_counts_read ON tag_counts FOR SELECT
    USING (studio_id = ANY ((SELECT navmcp.my_studios())::text[]));
GRANT SELECT ON tag_counts TO navmcp_app;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE tag_counts FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- The rows carry their item's studio (the BEFORE trigger of 20261124000017 sets it). A count going
-- down only updates: the rows of a studio being deleted must not make its count again.
CREATE FUNCTION navmcp.count_tags() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE public.tag_counts SET n = n - 1 WHERE studio_id = OLD.studio_id AND tag = OLD.tag;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.studio_id IS NOT NULL THEN
        INSERT INTO public.tag_counts AS c (studio_id, tag, n) VALUES (NEW.studio_id, NEW.tag, 1)
            ON CONFLICT (studio_id, tag) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_tags() FROM PUBLIC;
CREATE TRIGGER tag_counts AFTER INSERT OR DELETE OR UPDATE OF tag, studio_id ON item_tags
    FOR EACH ROW EXECUTE FUNCTION navmcp.count_tags();
