-- Mirrors navmcp/migrations/0240_filter_counts.sql: how many items filters alone select
-- (`/search?q=type:decision status:open tag:planning`), kept per studio, tag ('' for every item),
-- type, decision kind and state by triggers, in the write's transaction (the search counted every
-- row the filters select: 1 s at a million items). The state is what a write decides: closed (0),
-- open with no deadline (1), not closed with a deadline (2); navmcp.find_items counts those of
-- state 2 whose deadline is still ahead when it runs. Read only by find_items (as the owner, for
-- the acting user's studios); nobody reads or writes the table directly, and the triggers write it
-- as its owner. A count going down only updates: rows deleted with their studio make none again.
CREATE TABLE filter_counts (
    studio_id     TEXT COLLATE "C" NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    tag           TEXT COLLATE "C" NOT NULL,
    kind          TEXT COLLATE "C" NOT NULL,
    decision_kind TEXT COLLATE "C" NOT NULL,  -- a decision's ('acceptance' when none is stored), '' otherwise
    state         SMALLINT NOT NULL,
    n             INTEGER NOT NULL,
    PRIMARY KEY (studio_id, tag, kind, decision_kind, state)
);
ALTER TABLE filter_counts ENABLE ROW LEVEL SECURITY;
DO $$
DECLARE
    api_role text;
BEGIN
    FOREACH api_role IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = api_role) THEN
            EXECUTE format('REVOKE ALL ON TABLE filter_counts FROM %I', api_role);
        END IF;
    END LOOP;
END
$$;

-- The two parts of the key an item's columns decide, in one place.
CREATE FUNCTION navmcp.filter_decision_kind(kind text, decision_kind text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = '' AS $$
    SELECT CASE WHEN kind = 'decision' THEN coalesce(decision_kind, 'acceptance') ELSE '' END
$$;
CREATE FUNCTION navmcp.filter_state(closed_at text, deadline text) RETURNS smallint
LANGUAGE sql IMMUTABLE SET search_path = '' AS $$
    SELECT (CASE WHEN closed_at IS NOT NULL THEN 0 WHEN deadline IS NULL THEN 1 ELSE 2 END)::smallint
$$;

INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n)
    SELECT i.studio_id, '', i.kind, navmcp.filter_decision_kind(i.kind, i.decision_kind),
           navmcp.filter_state(i.closed_at, i.deadline), count(*)
      FROM items i WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5
    UNION ALL
    SELECT i.studio_id, t.tag, i.kind, navmcp.filter_decision_kind(i.kind, i.decision_kind),
           navmcp.filter_state(i.closed_at, i.deadline), count(*)
      FROM item_tags t JOIN items i ON i.id = t.item_id WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5;

-- One item (its row as `it`) moved by `by` in the count of each tag in `tags` ('' is every item).
CREATE FUNCTION navmcp.count_filters(it public.items, tags text[], by integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF it.id IS NULL OR it.deleted_at IS NOT NULL THEN  -- a deleted item counts nowhere
        RETURN;
    END IF;
    IF by < 0 THEN
        UPDATE public.filter_counts SET n = n + by
         WHERE studio_id = it.studio_id AND tag = ANY (tags) AND kind = it.kind
           AND decision_kind = navmcp.filter_decision_kind(it.kind, it.decision_kind)
           AND state = navmcp.filter_state(it.closed_at, it.deadline);
    ELSE
        INSERT INTO public.filter_counts AS c (studio_id, tag, kind, decision_kind, state, n)
            SELECT it.studio_id, t, it.kind, navmcp.filter_decision_kind(it.kind, it.decision_kind),
                   navmcp.filter_state(it.closed_at, it.deadline), by FROM unnest(tags) t
            ON CONFLICT (studio_id, tag, kind, decision_kind, state) DO UPDATE SET n = c.n + by;
    END IF;
END $$;
REVOKE ALL ON FUNCTION navmcp.count_filters(public.items, text[], integer) FROM PUBLIC;

CREATE FUNCTION navmcp.filter_counts_items() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM navmcp.count_filters(NEW, ARRAY[''], 1);
    ELSIF TG_OP = 'DELETE' THEN  -- its tag rows go too, and their trigger finds the item gone
        PERFORM navmcp.count_filters(OLD, ARRAY[''], -1);
    ELSIF (OLD.studio_id, OLD.kind, navmcp.filter_decision_kind(OLD.kind, OLD.decision_kind),
           navmcp.filter_state(OLD.closed_at, OLD.deadline), OLD.deleted_at IS NULL)
          IS DISTINCT FROM (NEW.studio_id, NEW.kind, navmcp.filter_decision_kind(NEW.kind, NEW.decision_kind),
                            navmcp.filter_state(NEW.closed_at, NEW.deadline), NEW.deleted_at IS NULL) THEN
        -- closed, a deadline set or taken away, deleted or restored: out of the old key, into the new
        PERFORM navmcp.count_filters(OLD, ARRAY[''] || ARRAY(SELECT t.tag FROM public.item_tags t WHERE t.item_id = OLD.id), -1);
        PERFORM navmcp.count_filters(NEW, ARRAY[''] || ARRAY(SELECT t.tag FROM public.item_tags t WHERE t.item_id = NEW.id), 1);
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.filter_counts_items() FROM PUBLIC;
CREATE TRIGGER filter_counts_items AFTER INSERT OR DELETE
    OR UPDATE OF studio_id, kind, decision_kind, closed_at, deadline, deleted_at ON items
    FOR EACH ROW EXECUTE FUNCTION navmcp.filter_counts_items();

CREATE FUNCTION navmcp.filter_counts_tags() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM navmcp.count_filters((SELECT i FROM public.items i WHERE i.id = OLD.item_id), ARRAY[OLD.tag], -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM navmcp.count_filters((SELECT i FROM public.items i WHERE i.id = NEW.item_id), ARRAY[NEW.tag], 1);
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.filter_counts_tags() FROM PUBLIC;
CREATE TRIGGER filter_counts_tags AFTER INSERT OR DELETE OR UPDATE OF tag ON item_tags
    FOR EACH ROW EXECUTE FUNCTION navmcp.filter_counts_tags();
