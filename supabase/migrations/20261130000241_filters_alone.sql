-- Filters alone (no words) in find_items: each studio's walk of its newest items (a tag's from the
-- tag's index) stops at the page's end, and the number found is the one kept by the triggers of
-- 20261130000240 (mirrors navmcp/store/sqlite_tx.py `_filtered`). It read and counted every item
-- the filters select: 23,000 for a common tag at a million items. Words left out (`tag:x -draft`)
-- are no key of the counts: that query goes on as before, through search_hits.
CREATE OR REPLACE FUNCTION navmcp.find_items(studios text[], want_q text, want_title text, want_out text, want_tag_word text,
                                  want_kind text, want_status text, want_tag text, want_at text,
                                  lim integer, skip integer, win integer, want_decision_kind text,
                                  OUT total bigint, OUT windowed boolean, OUT item_ids text[], OUT tiers integer[],
                                  OUT option_ids text[], OUT comment_ids text[], OUT option_counts bigint[],
                                  OUT comment_counts bigint[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = '' AS $$
DECLARE
    mine text[] := ARRAY(SELECT unnest(studios) INTERSECT SELECT unnest(navmcp.my_studios()));
    kept bigint[];
    ahead bigint := 0;
BEGIN
    IF want_q IS NULL AND want_out IS NULL THEN
        IF want_tag IS NOT NULL THEN
            item_ids := ARRAY(
                SELECT w.id FROM unnest(mine) s(studio) CROSS JOIN LATERAL (
                    SELECT i.id, t.updated_at FROM public.item_tags t JOIN public.items i ON i.seq = t.seq
                     WHERE t.studio_id = s.studio AND t.tag = want_tag AND i.deleted_at IS NULL
                       AND (want_kind IS NULL OR i.kind = want_kind)
                       AND (want_status IS NULL OR (want_status = 'open') =
                            (i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > want_at)))
                       AND (want_decision_kind IS NULL OR coalesce(i.decision_kind, 'acceptance') = want_decision_kind)
                     ORDER BY t.updated_at DESC, i.id LIMIT lim + skip) w
                 ORDER BY w.updated_at DESC, w.id LIMIT lim OFFSET skip);
        ELSE
            item_ids := ARRAY(
                SELECT w.id FROM unnest(mine) s(studio) CROSS JOIN LATERAL (
                    SELECT i.id, i.updated_at FROM public.items i
                     WHERE i.studio_id = s.studio AND i.deleted_at IS NULL
                       AND (want_kind IS NULL OR i.kind = want_kind)
                       AND (want_status IS NULL OR (want_status = 'open') =
                            (i.closed_at IS NULL AND (i.deadline IS NULL OR i.deadline > want_at)))
                       AND (want_decision_kind IS NULL OR coalesce(i.decision_kind, 'acceptance') = want_decision_kind)
                     ORDER BY i.updated_at DESC, i.id LIMIT lim + skip) w
                 ORDER BY w.updated_at DESC, w.id LIMIT lim OFFSET skip);
        END IF;
        SELECT ARRAY[coalesce(sum(c.n) FILTER (WHERE c.state = 0), 0), coalesce(sum(c.n) FILTER (WHERE c.state = 1), 0),
                     coalesce(sum(c.n) FILTER (WHERE c.state = 2), 0)] INTO kept
          FROM public.filter_counts c
         WHERE c.studio_id = ANY (mine) AND c.tag = coalesce(want_tag, '')
           AND (want_kind IS NULL OR c.kind = want_kind)
           AND (want_decision_kind IS NULL OR c.decision_kind = want_decision_kind);
        IF want_status IS NOT NULL AND kept[3] > 0 THEN  -- not closed, with a deadline: open while it is ahead
            ahead := (SELECT count(*) FROM public.items i
                       WHERE i.studio_id = ANY (mine) AND i.closed_at IS NULL AND i.deadline > want_at
                         AND i.deleted_at IS NULL AND (want_kind IS NULL OR i.kind = want_kind)
                         AND (want_decision_kind IS NULL OR coalesce(i.decision_kind, 'acceptance') = want_decision_kind)
                         AND (want_tag IS NULL OR EXISTS (SELECT 1 FROM public.item_tags t
                                                           WHERE t.item_id = i.id AND t.tag = want_tag)));
        END IF;
        total := CASE want_status WHEN 'open' THEN kept[2] + ahead WHEN 'closed' THEN kept[1] + kept[3] - ahead
                                  ELSE kept[1] + kept[2] + kept[3] END;
        windowed := false;
        tiers := array_fill(0, ARRAY[cardinality(item_ids)]);
        option_ids := array_fill(NULL::text, ARRAY[cardinality(item_ids)]);
        comment_ids := option_ids;
        option_counts := array_fill(0::bigint, ARRAY[cardinality(item_ids)]);
        comment_counts := option_counts;
        RETURN;
    END IF;
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
