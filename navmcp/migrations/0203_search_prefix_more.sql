-- Migration 0140 gave item titles and texts a prefix index; comments and options, the other two
-- sources of a search, had none, so a query's last word typed as a prefix ("launch review" searches
-- "review"*) made FTS5 merge every doclist the prefix names before the newest hits could be taken:
-- 32-52 ms for each of the two at a million items (items, with their index: 4 ms). Same prefixes
-- (2 to 6 characters), same matches; the external-content tables are rebuilt from their rows and
-- their triggers (0001, 0010, 0055) write to them by name as before.
DROP TABLE comments_fts;
CREATE VIRTUAL TABLE comments_fts USING fts5(
    body, content = 'comments', content_rowid = 'seq', tokenize = 'porter unicode61', prefix = '2 3 4 5 6'
);
INSERT INTO comments_fts(comments_fts) VALUES ('rebuild');
DROP TABLE options_fts;
CREATE VIRTUAL TABLE options_fts USING fts5(
    title, content = 'options', content_rowid = 'rowid', tokenize = 'porter unicode61', prefix = '2 3 4 5 6'
);
INSERT INTO options_fts(options_fts) VALUES ('rebuild');
