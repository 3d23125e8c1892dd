-- Search covers a decision's options (DESIGN: full-text search over the studio's decisions): an
-- option's title is indexed as an item's and a comment's words are, and a hit names its decision.
-- External content keyed by the options table's rowid, kept by triggers; existing options are
-- indexed once here ('rebuild').
CREATE VIRTUAL TABLE options_fts USING fts5(
    title, content = 'options', content_rowid = 'rowid', tokenize = 'porter unicode61'
);
INSERT INTO options_fts(options_fts) VALUES ('rebuild');
CREATE TRIGGER options_ai AFTER INSERT ON options BEGIN
    INSERT INTO options_fts(rowid, title) VALUES (new.rowid, new.title);
END;
CREATE TRIGGER options_au AFTER UPDATE OF title ON options BEGIN
    INSERT INTO options_fts(options_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
    INSERT INTO options_fts(rowid, title) VALUES (new.rowid, new.title);
END;
CREATE TRIGGER options_ad AFTER DELETE ON options BEGIN
    INSERT INTO options_fts(options_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
END;
