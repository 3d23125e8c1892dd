-- Bounded search (issue 24, item 3), as SQLite's search is (navmcp.store.SEARCH_WINDOW): only the
-- newest `win` matches of each kind (items, comments, options) are ranked and counted, so a word
-- that matches most of a large studio costs a bounded amount of work, not one ts_rank per match.
-- The window is a parameter, so the number lives in one place (the Python constant).
DROP FUNCTION navmcp.search_page(text, text, integer, integer);
CREATE FUNCTION navmcp.search_page(studio text, query text, lim integer, skip integer, win integer,
                                   OUT total bigint, OUT item_ids text[], OUT comment_ids text[],
                                   OUT option_ids text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    q tsquery := to_tsquery('navmcp.search_words'::regconfig, translate(query, 'ς', 'σ'));
BEGIN
    SELECT 0, '{}', '{}', '{}' INTO total, item_ids, comment_ids, option_ids;
    IF NOT studio = ANY (navmcp.my_studios()) THEN
        RETURN;
    END IF;
    WITH hits AS (
        SELECT * FROM (SELECT i.id AS item_id, NULL::text AS comment_id, NULL::text AS option_id,
                              ts_rank(i.fts, q) AS rank
                         FROM public.items i
                        WHERE i.studio_id = studio AND i.fts @@ q ORDER BY i.seq DESC LIMIT win) a
        UNION ALL
        SELECT * FROM (SELECT c.item_id, c.id, NULL::text, ts_rank(c.fts, q) FROM public.comments c
                        WHERE c.studio_id = studio AND c.fts @@ q ORDER BY c.seq DESC LIMIT win) b
        UNION ALL
        SELECT * FROM (SELECT o.decision_id, NULL::text, o.id, ts_rank(o.fts, q)
                         FROM public.options o JOIN public.items d ON d.id = o.decision_id
                        WHERE d.studio_id = studio AND o.fts @@ q ORDER BY o.created_at DESC, o.id DESC LIMIT win) c
    )
    SELECT (SELECT count(*) FROM hits),
           coalesce(array_agg(h.item_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST, h.option_id NULLS FIRST), '{}'),
           coalesce(array_agg(h.comment_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST, h.option_id NULLS FIRST), '{}'),
           coalesce(array_agg(h.option_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST, h.option_id NULLS FIRST), '{}')
      INTO total, item_ids, comment_ids, option_ids
      FROM (SELECT * FROM hits ORDER BY rank DESC, item_id, comment_id NULLS FIRST, option_id NULLS FIRST
             LIMIT lim OFFSET skip) h;
END $$;
REVOKE ALL ON FUNCTION navmcp.search_page(text, text, integer, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_page(text, text, integer, integer, integer) TO navmcp_app;
