-- Full-text search under row-level security read every item of the studio: `@@` is not leakproof,
-- so PostgreSQL may not test it through the GIN index ahead of the items policy, and filtered a
-- sequential scan instead (a search for an absent word: 136 ms at 100,000 items, 1 s at a
-- million). A search page now comes from this function, which runs as the owner (the index
-- applies) and answers only for a studio of the acting user's, as the items and comments policies
-- would: the number of hits, and the page's hits (items and comments ranked together, higher
-- ts_rank first; a comment hit names its item) in order.
CREATE OR REPLACE FUNCTION navmcp.search_page(studio text, query text, lim integer, skip integer,
                                              OUT total bigint, OUT item_ids text[], OUT comment_ids text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    q tsquery := to_tsquery('english', query);
BEGIN
    SELECT 0, '{}', '{}' INTO total, item_ids, comment_ids;
    IF NOT studio = ANY (navmcp.my_studios()) THEN
        RETURN;
    END IF;
    -- Counted apart from the ranking: a count needs no ts_rank.
    total := (SELECT count(*) FROM public.items i WHERE i.studio_id = studio AND i.fts @@ q)
           + (SELECT count(*) FROM public.comments c WHERE c.studio_id = studio AND c.fts @@ q);
    SELECT coalesce(array_agg(h.item_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST), '{}'),
           coalesce(array_agg(h.comment_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST), '{}')
      INTO item_ids, comment_ids
      FROM (SELECT i.id AS item_id, NULL::text AS comment_id, ts_rank(i.fts, q) AS rank
              FROM public.items i WHERE i.studio_id = studio AND i.fts @@ q
            UNION ALL
            SELECT c.item_id, c.id, ts_rank(c.fts, q)
              FROM public.comments c WHERE c.studio_id = studio AND c.fts @@ q
             ORDER BY rank DESC, item_id, comment_id NULLS FIRST LIMIT lim OFFSET skip) h;
END $$;
REVOKE ALL ON FUNCTION navmcp.search_page(text, text, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_page(text, text, integer, integer) TO navmcp_app;
