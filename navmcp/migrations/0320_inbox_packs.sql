-- A large fan-out is one row (navmcp/store/sqlite_tx.py `note_inbox`, navmcp/feeds/inbox.py): a
-- comment that @mentions 20 members wrote 20 entries, each a row in five b-trees and a leaf of the
-- per-person index (a WAL page each); a pack is one row in three, whoever it tells. `recipients`
-- is ",id,id,…," (a reader finds itself with instr). Its id is the time it was written, in
-- nanoseconds (writes take turns, microseconds each): it says nothing of how many packs were
-- written, and a deleted pack's id is never another's. What a person does with a pack's entry is their own row in `inbox_marks`: read or
-- dismissed at a time, which holds until the pack changes after it. A pack of a kind that folds
-- (`fold` 1) counts the next burst on its item for the same people, one upsert on
-- `inbox_packs_fold` (NULLs are distinct: no other pack conflicts), which also finds an item's
-- packs. No foreign keys (a probe each per write): the triggers below delete the packs of a purged
-- item or a deleted studio, and a reader joins the actor's handle.
CREATE TABLE inbox_packs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    studio_id   TEXT NOT NULL,
    item_id     TEXT,
    actor_id    TEXT,
    client      TEXT NOT NULL DEFAULT '',
    count       INTEGER NOT NULL DEFAULT 1,
    fold        INTEGER,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    recipients  TEXT NOT NULL
);
CREATE INDEX inbox_packs_age ON inbox_packs (updated_at);
CREATE UNIQUE INDEX inbox_packs_fold ON inbox_packs (item_id, kind, recipients, fold);

CREATE TABLE inbox_marks (
    pack_id      INTEGER NOT NULL REFERENCES inbox_packs(id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL,
    read_at      TEXT,
    dismissed_at TEXT,
    PRIMARY KEY (pack_id, user_id)
) WITHOUT ROWID;

CREATE TRIGGER inbox_packs_item_gone AFTER DELETE ON items BEGIN
    DELETE FROM inbox_packs WHERE item_id = old.id;
END;
CREATE TRIGGER inbox_packs_studio_gone AFTER DELETE ON studios BEGIN
    DELETE FROM inbox_packs WHERE studio_id = old.id;
END;
CREATE TRIGGER inbox_marks_user_gone AFTER DELETE ON users BEGIN
    DELETE FROM inbox_marks WHERE user_id = old.id;
END;
