"""Deleting an item and restoring it (navmcp.content.deletion): `delete_item` on its page, `restore_item`
on the deleted item's page and on the studio's Deleted list. Who may is one rule for both: the
item's creator or a studio admin (`rules.creator_or_admin`), as the store's own rules say on
PostgreSQL (migration 20261129000160)."""

from __future__ import annotations

from pydantic import Field

from navmcp.actions import rules
from navmcp.actions.action import Action, Outcome, Params
from navmcp.clock import now
from navmcp.content import deletion
from navmcp.content.domain import item_url
from navmcp.errors import ActionFailed, FieldError, InvalidActionParams
from navmcp.pages import Request
from navmcp.store import Row

ITEM_PAGES = ("note", "decision", "commitment")
_REFUSED = "the database refused the change (your role here may have just changed): reload the page"


class DeleteItem(Params):
    confirm: str = Field(min_length=1, max_length=500, title="Confirm",
                         description="the item's title (or its id or URL), to say which item you mean to delete")


def _named(item: Row, given: str) -> bool:
    """The item's title (spaces and case aside), its id, or its URL."""
    said = " ".join(given.split()).casefold()
    if said.startswith("/studios/"):
        said = said.rsplit("/", 1)[-1]
    return said in (" ".join(item["title"].split()).casefold(), item["id"].casefold())


def delete_item(req: Request, p: DeleteItem) -> Outcome:
    item = req.item
    assert item is not None and req.studio is not None
    if not _named(item, p.confirm):
        raise InvalidActionParams(f"'confirm': give the {item['kind']}'s title as its page shows it (or its id, "
                                  f"{item['id']}) to delete it",
                                  fields=(FieldError("confirm", f"must be the {item['kind']}'s title or its id"),))
    if not req.tx.execute("UPDATE items SET deleted_at = ?, deleted_by = ? WHERE id = ? AND deleted_at IS NULL",
                          (now(), req.user["id"], item["id"])):
        raise ActionFailed(_REFUSED)
    deletion.purge(req.tx)
    return Outcome(f"Deleted the {item['kind']}. Its creator and the studio's admins can restore it for "
                   f"{deletion.KEEP_DAYS} days (restore_item, here or on /studios/{req.studio['handle']}/deleted); "
                   "then it is gone for good.", req.path)


def _restore(req: Request, item: Row) -> Outcome:
    assert req.studio is not None
    if not req.tx.execute("UPDATE items SET deleted_at = NULL, deleted_by = NULL WHERE id = ? AND deleted_at IS NOT NULL",
                          (item["id"],)):
        raise ActionFailed(_REFUSED)
    deletion.purge(req.tx)
    return Outcome(f"Restored the {item['kind']}: it is back in the studio's lists, search and counts.",
                   item_url(req.studio["handle"], item))


def restore_item(req: Request, p: Params) -> Outcome:
    assert req.item is not None
    return _restore(req, req.item)


def is_deleted(req: Request) -> str | None:
    return None if req.facts.get("deleted") else f"the {req.item['kind']} is not deleted"


class RestoreListed(Params):
    item: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]{1,64}$", title="Which item",
                      description="a deleted item's id, as the list shows it")


def restore_listed(req: Request, p: RestoreListed) -> Outcome:
    """restore_item on the Deleted list: the item named, judged by the same rule as on its page."""
    assert req.studio is not None
    item = deletion.find_listed(req.tx, req.studio["id"], p.item)
    if item is None or not deletion.may_restore(item, req.user["id"], req.role):
        raise InvalidActionParams(f"'item': no deleted item {p.item!r} here that you may restore",
                                  fields=(FieldError("item", "no such deleted item of yours here"),))
    req.tx.lock("items", item["id"])
    return _restore(req, item)


def has_deleted(req: Request) -> str | None:
    """A member with something on the list to restore (an admin: anything deleted; else their own)."""
    if reason := rules.member(req):
        return reason
    return None if req.facts.get("deleted_count") else "nothing here is yours to restore"


ACTIONS = [
    Action("delete_item", ITEM_PAGES, "Delete this item (its creator or an admin; name it in confirm): it leaves "
           f"every list, search and count at once; restore_item brings it back within {deletion.KEEP_DAYS} days.",
           delete_item, DeleteItem, who=rules.creator_or_admin),
    Action("restore_item", ITEM_PAGES, "Bring this deleted item back, as it was.", restore_item,
           who=rules.creator_or_admin, when=is_deleted, on_deleted=True),
    Action("restore_item", ("deleted",), "Bring a deleted item back, as it was (item: its id).", restore_listed,
           RestoreListed, who=has_deleted),
]
