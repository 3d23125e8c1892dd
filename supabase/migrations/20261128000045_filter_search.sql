-- Filters alone (`tag:planning status:open type:decision`, no words) are exact: every item they
-- select is found and counted, newest first, not the newest `win` items of the kind filtered
-- afterwards (which found 14 of 15 and said "14 in all", issue 42). A tag drives the walk from its
-- index; only word matches are cut at the window and make `widest` (so `windowed` says a word
-- search cut, never a filter-only one). Words left out apply to filter-only queries too.
CREATE OR REPLACE FUNCTION navmcp.search_hits(mine text[], want_q text, want_title text, want_out text, want_tag_word text,
                                   want_kind text, want_status text, want_tag text, want_at text, win integer)
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
       AND (want_out IS NULL OR NOT i.fts @@ q.left_out)
$$;
