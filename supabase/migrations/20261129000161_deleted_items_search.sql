-- Tags, search and a cycle's activity leave deleted items out (navmcp/content/deletion.py; the
-- columns are 20261129000160's). Apart from it so that a database migrated up to an older point for
-- a test (tests/store/test_pg_rls.py) can take the columns before the tag copies and the search
-- configuration exist.
-- A deleted item's tag rows carry no studio: tag pages, counts, completion and search by tag leave
-- it out (and no member reads them: the tag policy checks the studio a row carries).
CREATE OR REPLACE FUNCTION navmcp.copy_item_to_tag() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    SELECT CASE WHEN i.deleted_at IS NULL THEN i.studio_id END, i.updated_at, i.seq
      INTO NEW.studio_id, NEW.updated_at, NEW.seq
      FROM public.items i WHERE i.id = NEW.item_id;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION navmcp.copy_item_to_tag() FROM PUBLIC;
CREATE OR REPLACE FUNCTION navmcp.copy_item_to_tags() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
    IF OLD.deleted_at IS DISTINCT FROM NEW.deleted_at THEN
        -- studio_id named, so that the tag counts' trigger (UPDATE OF studio_id) follows the row
        UPDATE public.item_tags SET updated_at = NEW.updated_at,
                                    studio_id = CASE WHEN NEW.deleted_at IS NULL THEN NEW.studio_id END
         WHERE item_id = NEW.id;
    ELSE
        UPDATE public.item_tags SET updated_at = NEW.updated_at WHERE item_id = NEW.id;  -- the copy trigger sets the rest
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION navmcp.copy_item_to_tags() FROM PUBLIC;
DROP TRIGGER IF EXISTS items_tags_copy ON items;
CREATE TRIGGER items_tags_copy AFTER UPDATE OF studio_id, updated_at, deleted_at ON items
    FOR EACH ROW WHEN (OLD.updated_at IS DISTINCT FROM NEW.updated_at OR OLD.studio_id IS DISTINCT FROM NEW.studio_id
                       OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
    EXECUTE FUNCTION navmcp.copy_item_to_tags();

-- Search finds no deleted item (search_hits of 20261128000130, with that one condition more).
CREATE OR REPLACE FUNCTION navmcp.search_hits(mine text[], want_q text, want_title text, want_out text, want_tag_word text,
                                   want_kind text, want_status text, want_tag text, want_at text, win integer,
                                   want_decision_kind text)
RETURNS TABLE (item_id text, tier integer, option_id text, comment_id text, options bigint, comments bigint,
               updated_at text, widest bigint)
LANGUAGE sql STABLE SET search_path = '' AS $$
    WITH q AS (SELECT to_tsquery('navmcp.search_words'::regconfig, translate(want_q, 'ς', 'σ')) AS words,
                      to_tsquery('navmcp.search_words'::regconfig, translate(want_title, 'ς', 'σ')) AS title,
                      to_tsquery('navmcp.search_words'::regconfig, translate(want_out, 'ς', 'σ')) AS left_out),
    hits AS (
        SELECT * FROM (SELECT i.id AS item_id, 0 AS tier, NULL::text AS part FROM public.items i, q
                        WHERE want_q IS NOT NULL AND i.studio_id = ANY (mine) AND i.fts @@ q.title
                        ORDER BY i.seq DESC LIMIT win) a
        UNION ALL
        SELECT * FROM (SELECT i.id, 2, NULL FROM public.items i, q
                        WHERE want_q IS NOT NULL AND i.studio_id = ANY (mine) AND i.fts @@ q.words
                        ORDER BY i.seq DESC LIMIT win) b
        UNION ALL
        SELECT * FROM (SELECT o.decision_id, 3, o.id FROM public.options o JOIN public.items d ON d.id = o.decision_id, q
                        WHERE want_q IS NOT NULL AND d.studio_id = ANY (mine) AND o.fts @@ q.words
                        ORDER BY o.created_at DESC, o.id DESC LIMIT win) c
        UNION ALL
        SELECT * FROM (SELECT c.item_id, 4, c.id FROM public.comments c, q
                        WHERE want_q IS NOT NULL AND c.studio_id = ANY (mine) AND c.fts @@ q.words
                        ORDER BY c.seq DESC LIMIT win) d
        UNION ALL
        SELECT * FROM (SELECT t.item_id, 1, NULL FROM public.item_tags t
                        WHERE want_q IS NOT NULL AND want_tag_word IS NOT NULL AND t.studio_id = ANY (mine)
                          AND t.tag = want_tag_word ORDER BY t.seq DESC LIMIT win) e
        UNION ALL
        SELECT * FROM (SELECT i.id, 0, NULL FROM public.items i
                        WHERE want_q IS NULL AND want_tag IS NULL AND i.studio_id = ANY (mine)
                          AND (want_kind IS NULL OR i.kind = want_kind)) f
        UNION ALL
        SELECT * FROM (SELECT t.item_id, 0, NULL FROM public.item_tags t
                        WHERE want_q IS NULL AND want_tag IS NOT NULL AND t.studio_id = ANY (mine)
                          AND t.tag = want_tag) g
    ),
    best AS (
        SELECT h.item_id, min(h.tier) AS tier, min(h.part) FILTER (WHERE h.tier = 3) AS option_id,
               min(h.part) FILTER (WHERE h.tier = 4) AS comment_id,
               count(*) FILTER (WHERE h.tier = 3) AS options, count(*) FILTER (WHERE h.tier = 4) AS comments
          FROM hits h GROUP BY h.item_id
    )
    SELECT b.item_id, b.tier, b.option_id, b.comment_id, b.options, b.comments, i.updated_at,
           (SELECT max(n) FROM (SELECT count(*) AS n FROM hits WHERE want_q IS NOT NULL GROUP BY hits.tier) w) AS widest
      FROM best b JOIN public.items i ON i.id = b.item_id, q
     WHERE (want_kind IS NULL OR i.kind = want_kind)
       AND (want_status IS NULL OR (want_status = 'open') =
            (i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > want_at)))
       AND (want_tag IS NULL OR EXISTS (SELECT 1 FROM public.item_tags t WHERE t.item_id = i.id AND t.tag = want_tag))
       AND (want_decision_kind IS NULL OR coalesce(i.decision_kind, 'acceptance') = want_decision_kind)
       AND (want_out IS NULL OR NOT i.fts @@ q.left_out)
       AND i.deleted_at IS NULL
$$;

-- A cycle's activity counts nothing on a deleted item (cycle_activity of 20261124000019, with that
-- condition more): its comments, its ballots, its joins.
CREATE OR REPLACE FUNCTION navmcp.cycle_activity(studio text, since text, till text,
                                                 OUT comments bigint, OUT votes bigint, OUT joins bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' SET jit = off AS $$
BEGIN
    SELECT 0, 0, 0 INTO comments, votes, joins;
    IF NOT studio = ANY (navmcp.my_studios()) THEN
        RETURN;
    END IF;
    comments := (SELECT count(*) FROM public.comments c
                  WHERE c.studio_id = studio AND c.created_at >= since AND c.created_at < till
                    AND c.item_id NOT IN (SELECT d.id FROM public.items d
                                           WHERE d.studio_id = studio AND d.deleted_at IS NOT NULL));
    votes := (SELECT coalesce(sum(d.ballots), 0)
                FROM (SELECT v.decision_id, count(DISTINCT v.user_id) AS ballots FROM public.votes v
                       WHERE v.created_at >= since AND v.created_at < till GROUP BY v.decision_id) d
               WHERE (SELECT i.studio_id FROM public.items i WHERE i.id = d.decision_id AND i.deleted_at IS NULL) = studio);
    joins := (SELECT coalesce(sum(d.joined), 0)
                FROM (SELECT p.commitment_id, count(*) AS joined FROM public.participants p
                       WHERE p.joined_at >= since AND p.joined_at < till GROUP BY p.commitment_id) d
               WHERE (SELECT i.studio_id FROM public.items i WHERE i.id = d.commitment_id AND i.deleted_at IS NULL) = studio);
END $$;
REVOKE ALL ON FUNCTION navmcp.cycle_activity(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.cycle_activity(text, text, text) TO navmcp_app;


-- find_items (20261128000130) leaves deleted items out too: search_hits may be defined again by a
-- later migration (20261129000201 did), find_items is the one door search goes through.
CREATE OR REPLACE FUNCTION navmcp.find_items(studios text[], want_q text, want_title text, want_out text, want_tag_word text,
                                  want_kind text, want_status text, want_tag text, want_at text,
                                  lim integer, skip integer, win integer, want_decision_kind text,
                                  OUT total bigint, OUT windowed boolean, OUT item_ids text[], OUT tiers integer[],
                                  OUT option_ids text[], OUT comment_ids text[], OUT option_counts bigint[],
                                  OUT comment_counts bigint[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    mine text[] := ARRAY(SELECT unnest(studios) INTERSECT SELECT unnest(navmcp.my_studios()));
BEGIN
    SELECT coalesce(max(p.n), 0), coalesce(max(p.widest), 0) >= win,
           coalesce(array_agg(p.item_id ORDER BY p.tier, p.updated_at DESC, p.item_id), '{}'),
           coalesce(array_agg(p.tier ORDER BY p.tier, p.updated_at DESC, p.item_id), '{}'),
           coalesce(array_agg(p.option_id ORDER BY p.tier, p.updated_at DESC, p.item_id), '{}'),
           coalesce(array_agg(p.comment_id ORDER BY p.tier, p.updated_at DESC, p.item_id), '{}'),
           coalesce(array_agg(p.options ORDER BY p.tier, p.updated_at DESC, p.item_id), '{}'),
           coalesce(array_agg(p.comments ORDER BY p.tier, p.updated_at DESC, p.item_id), '{}')
      INTO total, windowed, item_ids, tiers, option_ids, comment_ids, option_counts, comment_counts
      FROM (SELECT h.*, count(*) OVER () AS n
              FROM navmcp.search_hits(mine, want_q, want_title, want_out, want_tag_word, want_kind, want_status,
                                      want_tag, want_at, win, want_decision_kind) h
             WHERE NOT EXISTS (SELECT 1 FROM public.items d WHERE d.id = h.item_id AND d.deleted_at IS NOT NULL)
             ORDER BY h.tier, h.updated_at DESC, h.item_id LIMIT lim OFFSET skip) p;
    IF total = 0 AND skip > 0 THEN  -- a page past the end: the number found, to say where the list ends
        SELECT count(*), coalesce(max(h.widest), 0) >= win INTO total, windowed
          FROM navmcp.search_hits(mine, want_q, want_title, want_out, want_tag_word, want_kind, want_status,
                                  want_tag, want_at, win, want_decision_kind) h
         WHERE NOT EXISTS (SELECT 1 FROM public.items d WHERE d.id = h.item_id AND d.deleted_at IS NOT NULL);
    END IF;
END $$;
