"""Export and import of a studio (`navmcp export`, `navmcp import`): one zip archive that is the
studio's, readable without navmcp.

The archive: `manifest.json` (format `FORMAT`, navmcp's version, when, the count of rows per table,
the SHA-256 of every other file), `data/{table}.jsonl` (one row a line, in the order they are
written back), `people.jsonl` (the handle and name of everyone its rows name, and in the operator's export
with Supabase Auth their verified e-mail: navmcp.archive.people), `files/{id}` (the
attachments' bytes) and `pages/{n|d|c}-{id}.md` (every item's markdown page as it read on export
day). Never in it: sessions, tokens, login links, OAuth grants, invitations, the audit, the inbox,
the change feed, idempotency keys.

`TABLES` says which rows are the studio's and what each column of them refers to, once for both
directions: an import gives every studio, item, option, comment and file a new id, finds each
person here (navmcp.archive.people; a placeholder account when nobody here is them), and rewrites the
navmcp URLs in the text.
"""

from __future__ import annotations

FORMAT = "navmcp-export/1"
# An archive larger than this is refused before it is opened: a studio's files are at most 500 MiB
# (navmcp.content.attachments.STUDIO_QUOTA_BYTES), and its rows and pages are small beside them.
MAX_ARCHIVE_BYTES = 768 * 1024 * 1024
MAX_ENTRIES = 200_000  # files in an archive: a studio's items' pages, its files, its tables

# Kinds of reference a column holds: the studio, an item, an option, a comment, a file, a person.
# A table's rows are the studio's by `where` (`?` is the studio's id); each column named in `refs`
# is renumbered on import (a person's is found by handle); `dropped` columns are the store's own
# (row numbers, counts its triggers keep) and are neither exported nor written back.
ITEMS_OF = "IN (SELECT id FROM items WHERE studio_id = ?)"
TABLES: list[tuple[str, str, dict[str, str], tuple[str, ...]]] = [
    ("studios", "id = ?", {"id": "studio", "created_by": "user"}, ()),
    ("memberships", "studio_id = ?", {"studio_id": "studio", "user_id": "user"}, ()),
    ("items", "studio_id = ?", {"id": "item", "studio_id": "studio", "created_by": "user"},
     ("seq", "participant_count", "option_count")),
    ("item_tags", f"item_id {ITEMS_OF}", {"item_id": "item", "studio_id": "studio"}, ("seq", "updated_at")),
    ("options", f"decision_id {ITEMS_OF}", {"id": "option", "decision_id": "item", "created_by": "user"}, ()),
    ("votes", f"decision_id {ITEMS_OF}", {"decision_id": "item", "option_id": "option", "user_id": "user"}, ()),
    ("participants", f"commitment_id {ITEMS_OF}", {"commitment_id": "item", "user_id": "user"}, ()),
    ("comments", "studio_id = ?", {"id": "comment", "item_id": "item", "studio_id": "studio", "created_by": "user",
                                   "parent_id": "comment", "deleted_by": "user"}, ("seq",)),
    ("reads", f"note_id {ITEMS_OF}", {"note_id": "item", "user_id": "user"}, ()),
    ("links", f"from_item {ITEMS_OF}", {"from_item": "item", "to_item": "item"}, ()),
    ("revisions", "studio_id = ?", {"item_id": "item", "comment_id": "comment", "studio_id": "studio",
                                    "created_by": "user"}, ("seq",)),
    ("responses", f"decision_id {ITEMS_OF}", {"decision_id": "item", "user_id": "user", "option_id": "option"}, ()),
    ("proposal_versions", f"decision_id {ITEMS_OF}", {"decision_id": "item", "created_by": "user"}, ()),
    ("reminders", f"item_id {ITEMS_OF}", {"item_id": "item"}, ()),
    ("attachments", "studio_id = ?", {"id": "file", "studio_id": "studio", "item_id": "item", "comment_id": "comment",
                                      "created_by": "user"}, ("data",)),
]
# Columns one store keeps of its own, derived from the others: neither exported nor written back
# (PostgreSQL's full-text vectors).
STORE_OWN = ("fts",)
# The text columns whose navmcp URLs an import rewrites to the new studio's handle and ids.
TEXT = {"items": ("title", "body", "outcome"), "comments": ("body",), "options": ("title",),
        "revisions": ("changes",), "proposal_versions": ("body", "note")}
# Row order within a table, sorted by navmcp in Python's order (both stores then write the same):
# rows that refer to rows of the same table after them (a reply after its thread), and an order
# that ids renumbered in their own order keep (navmcp.archive.importer), so that an archive
# exported again after an import lists its rows as the first did.
ORDER = {"studios": "id", "memberships": "created_at, user_id", "items": "seq", "item_tags": "item_id, tag",
         "options": "decision_id, created_at, id", "votes": "option_id, user_id", "participants": "commitment_id, user_id",
         "comments": "seq", "reads": "note_id, user_id", "links": "from_item, to_item", "revisions": "seq",
         "responses": "decision_id, user_id, option_id", "proposal_versions": "decision_id, version",
         "reminders": "item_id, reminded_at", "attachments": "created_at, id"}


class ArchiveError(Exception):
    """An archive refused, in words: nothing was written."""
