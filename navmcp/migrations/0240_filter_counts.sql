-- Filters alone (`/search?q=type:decision status:open tag:planning`) state an exact count
-- (tests/test_counts.py): it counted every row the filters select, reading a common tag's 23,000
-- items at a million (70 ms where the page is 0.1 ms at a thousand). The number is now kept per
-- studio, tag ('' for every item), type, decision kind and state by triggers, in the write's
-- transaction, as tag_counts (0202) and cycle_days (0200) are. "Open" changes with the clock, not
-- only with writes (a deadline passing closes a decision without a write), so the state kept is
-- what a write decides: closed (0), open with no deadline (1), or not closed with a deadline (2);
-- the search counts those of state 2 whose deadline is still ahead when it runs (an index walk over
-- the studio's open items with deadlines: navmcp/store/sqlite_tx.py `_filter_count`).
-- A deleted item counts nowhere; an item is removed for good only once deleted (the purge) or with
-- its studio, whose rows go with it, so a count goes down only by the triggers below.
CREATE TABLE filter_counts (
    studio_id     TEXT NOT NULL REFERENCES studios(id) ON DELETE CASCADE,
    tag           TEXT NOT NULL,
    kind          TEXT NOT NULL,
    decision_kind TEXT NOT NULL,  -- a decision's ('acceptance' when none is stored), '' otherwise
    state         INTEGER NOT NULL,
    n             INTEGER NOT NULL,
    PRIMARY KEY (studio_id, tag, kind, decision_kind, state)
) WITHOUT ROWID;
INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n)
    SELECT i.studio_id, '', i.kind, CASE WHEN i.kind = 'decision' THEN coalesce(i.decision_kind, 'acceptance') ELSE '' END, CASE WHEN i.closed_at IS NOT NULL THEN 0 WHEN i.deadline IS NULL THEN 1 ELSE 2 END, count(*)
      FROM items i WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5
    UNION ALL
    SELECT i.studio_id, t.tag, i.kind, CASE WHEN i.kind = 'decision' THEN coalesce(i.decision_kind, 'acceptance') ELSE '' END, CASE WHEN i.closed_at IS NOT NULL THEN 0 WHEN i.deadline IS NULL THEN 1 ELSE 2 END, count(*)
      FROM item_tags t JOIN items i ON i.id = t.item_id WHERE i.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5;

CREATE TRIGGER filter_counts_item_new AFTER INSERT ON items WHEN new.deleted_at IS NULL BEGIN
    INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n) VALUES (new.studio_id, '', new.kind, CASE WHEN new.kind = 'decision' THEN coalesce(new.decision_kind, 'acceptance') ELSE '' END, CASE WHEN new.closed_at IS NOT NULL THEN 0 WHEN new.deadline IS NULL THEN 1 ELSE 2 END, 1)
        ON CONFLICT (studio_id, tag, kind, decision_kind, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER filter_counts_item_gone AFTER DELETE ON items WHEN old.deleted_at IS NULL BEGIN
    UPDATE filter_counts SET n = n - 1
     WHERE (studio_id, tag, kind, decision_kind, state) = (old.studio_id, '', old.kind, CASE WHEN old.kind = 'decision' THEN coalesce(old.decision_kind, 'acceptance') ELSE '' END, CASE WHEN old.closed_at IS NOT NULL THEN 0 WHEN old.deadline IS NULL THEN 1 ELSE 2 END);
END;
-- Closing, a deadline set or taken away, deleting or restoring: out of the old key, into the new,
-- for the item and each of its tags.
CREATE TRIGGER filter_counts_item_moved AFTER UPDATE OF studio_id, kind, decision_kind, closed_at, deadline, deleted_at ON items
    WHEN (old.studio_id, old.kind, CASE WHEN old.kind = 'decision' THEN coalesce(old.decision_kind, 'acceptance') ELSE '' END, CASE WHEN old.closed_at IS NOT NULL THEN 0 WHEN old.deadline IS NULL THEN 1 ELSE 2 END, old.deleted_at IS NULL)
         IS NOT (new.studio_id, new.kind, CASE WHEN new.kind = 'decision' THEN coalesce(new.decision_kind, 'acceptance') ELSE '' END, CASE WHEN new.closed_at IS NOT NULL THEN 0 WHEN new.deadline IS NULL THEN 1 ELSE 2 END, new.deleted_at IS NULL) BEGIN
    UPDATE filter_counts SET n = n - 1
     WHERE old.deleted_at IS NULL AND studio_id = old.studio_id AND kind = old.kind
       AND decision_kind = CASE WHEN old.kind = 'decision' THEN coalesce(old.decision_kind, 'acceptance') ELSE '' END AND state = CASE WHEN old.closed_at IS NOT NULL THEN 0 WHEN old.deadline IS NULL THEN 1 ELSE 2 END
       AND (tag = '' OR tag IN (SELECT t.tag FROM item_tags t WHERE t.item_id = old.id));
    INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n)
        SELECT new.studio_id, tags.tag, new.kind, CASE WHEN new.kind = 'decision' THEN coalesce(new.decision_kind, 'acceptance') ELSE '' END, CASE WHEN new.closed_at IS NOT NULL THEN 0 WHEN new.deadline IS NULL THEN 1 ELSE 2 END, 1
          FROM (SELECT '' AS tag UNION ALL SELECT t.tag FROM item_tags t WHERE t.item_id = new.id) tags
         WHERE new.deleted_at IS NULL
        ON CONFLICT (studio_id, tag, kind, decision_kind, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER filter_counts_tag_new AFTER INSERT ON item_tags BEGIN
    INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n)
        SELECT i.studio_id, new.tag, i.kind, CASE WHEN i.kind = 'decision' THEN coalesce(i.decision_kind, 'acceptance') ELSE '' END, CASE WHEN i.closed_at IS NOT NULL THEN 0 WHEN i.deadline IS NULL THEN 1 ELSE 2 END, 1 FROM items i
         WHERE i.id = new.item_id AND i.deleted_at IS NULL
        ON CONFLICT (studio_id, tag, kind, decision_kind, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER filter_counts_tag_gone AFTER DELETE ON item_tags BEGIN
    UPDATE filter_counts SET n = n - 1
     WHERE (studio_id, tag, kind, decision_kind, state) = (SELECT i.studio_id, old.tag, i.kind, CASE WHEN i.kind = 'decision' THEN coalesce(i.decision_kind, 'acceptance') ELSE '' END, CASE WHEN i.closed_at IS NOT NULL THEN 0 WHEN i.deadline IS NULL THEN 1 ELSE 2 END FROM items i
                     WHERE i.id = old.item_id AND i.deleted_at IS NULL);
END;
CREATE TRIGGER filter_counts_tag_renamed AFTER UPDATE OF tag ON item_tags WHEN old.tag IS NOT new.tag BEGIN
    UPDATE filter_counts SET n = n - 1
     WHERE (studio_id, tag, kind, decision_kind, state) = (SELECT i.studio_id, old.tag, i.kind, CASE WHEN i.kind = 'decision' THEN coalesce(i.decision_kind, 'acceptance') ELSE '' END, CASE WHEN i.closed_at IS NOT NULL THEN 0 WHEN i.deadline IS NULL THEN 1 ELSE 2 END FROM items i
                     WHERE i.id = old.item_id AND i.deleted_at IS NULL);
    INSERT INTO filter_counts (studio_id, tag, kind, decision_kind, state, n)
        SELECT i.studio_id, new.tag, i.kind, CASE WHEN i.kind = 'decision' THEN coalesce(i.decision_kind, 'acceptance') ELSE '' END, CASE WHEN i.closed_at IS NOT NULL THEN 0 WHEN i.deadline IS NULL THEN 1 ELSE 2 END, 1 FROM items i
         WHERE i.id = new.item_id AND i.deleted_at IS NULL
        ON CONFLICT (studio_id, tag, kind, decision_kind, state) DO UPDATE SET n = n + 1;
END;
