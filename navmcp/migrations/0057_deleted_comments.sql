-- A deleted comment (delete_comment): its text and revisions go at once; a comment with replies
-- keeps its row, blank, as "[deleted]" so that its replies keep their place, with who deleted it
-- and when. One without replies is deleted outright.
ALTER TABLE comments ADD COLUMN deleted_at TEXT;
ALTER TABLE comments ADD COLUMN deleted_by TEXT REFERENCES users(id);
