-- Search covers a decision's options (DESIGN: full-text search over the studio's decisions), as
-- SQLite's migration 0010 does: an option's title is indexed with the words of items and comments
-- (navmcp.search_words, 20261125000021), and search_page gives a third kind of hit, naming the
-- option and its decision. Options carry no studio: a hit is kept to the studio through its
-- decision. The new OUT column changes the function's type, so it is dropped and made again.
ALTER TABLE options
    ADD COLUMN fts TSVECTOR GENERATED ALWAYS AS (
        to_tsvector('navmcp.search_words'::regconfig, translate(title, 'ς', 'σ'))) STORED;
CREATE INDEX options_fts ON options USING GIN (fts);

DROP FUNCTION navmcp.search_page(text, text, integer, integer);
CREATE FUNCTION navmcp.search_page(studio text, query text, lim integer, skip integer,
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
    -- Counted apart from the ranking: a count needs no ts_rank.
    total := (SELECT count(*) FROM public.items i WHERE i.studio_id = studio AND i.fts @@ q)
           + (SELECT count(*) FROM public.comments c WHERE c.studio_id = studio AND c.fts @@ q)
           + (SELECT count(*) FROM public.options o JOIN public.items d ON d.id = o.decision_id
               WHERE d.studio_id = studio AND o.fts @@ q);
    SELECT coalesce(array_agg(h.item_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST, h.option_id NULLS FIRST), '{}'),
           coalesce(array_agg(h.comment_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST, h.option_id NULLS FIRST), '{}'),
           coalesce(array_agg(h.option_id ORDER BY h.rank DESC, h.item_id, h.comment_id NULLS FIRST, h.option_id NULLS FIRST), '{}')
      INTO item_ids, comment_ids, option_ids
      FROM (SELECT i.id AS item_id, NULL::text AS comment_id, NULL::text AS option_id, ts_rank(i.fts, q) AS rank
              FROM public.items i WHERE i.studio_id = studio AND i.fts @@ q
            UNION ALL
            SELECT c.item_id, c.id, NULL::text, ts_rank(c.fts, q)
              FROM public.comments c WHERE c.studio_id = studio AND c.fts @@ q
            UNION ALL
            SELECT o.decision_id, NULL::text, o.id, ts_rank(o.fts, q)
              FROM public.options o JOIN public.items d ON d.id = o.decision_id
             WHERE d.studio_id = studio AND o.fts @@ q
             ORDER BY rank DESC, item_id, comment_id NULLS FIRST, option_id NULLS FIRST LIMIT lim OFFSET skip) h;
END $$;
REVOKE ALL ON FUNCTION navmcp.search_page(text, text, integer, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION navmcp.search_page(text, text, integer, integer) TO navmcp_app;
