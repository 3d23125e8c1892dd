"""A studio's Deleted list (`/studios/{h}/deleted`, navmcp.content.deletion): the items deleted in the last
KEEP_DAYS that you may restore (an admin: all of them; anyone else: their own), newest first, with
who deleted each, when, and when it goes for good; `restore_item` brings one back."""

from __future__ import annotations

from typing import Any

from navmcp.content import deletion
from navmcp.content.domain import item_url
from navmcp.pages.request import PAGE_SIZE, Request, paginate
from navmcp.pages.studio import crumbs, resolve_studio


def resolve_deleted(req: Request) -> None:
    resolve_studio(req)
    assert req.studio is not None
    req.facts["deleted_count"] = deletion.count_listed(req.tx, req.studio["id"], req.user["id"], req.role)


def view_deleted(req: Request) -> dict[str, Any]:
    assert req.studio is not None
    total = req.facts["deleted_count"]
    pager = paginate(req, total)
    rows = deletion.listed(req.tx, req.studio["id"], req.user["id"], req.role, PAGE_SIZE, pager["offset"])
    for row in rows:
        row["url"] = item_url(req.studio["handle"], row)
        del row["created_by"]
    return {"title": f"Deleted in {req.studio['name']}",
            "breadcrumb": crumbs(req, ("Deleted", f"/studios/{req.studio['handle']}/deleted")),
            "studio": req.studio, "role": req.role, "items": rows, "pager": pager, "keep_days": deletion.KEEP_DAYS}
