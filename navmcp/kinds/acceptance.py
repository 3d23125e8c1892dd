"""Acceptance voting, the first kind and the default: members accept every option they could live
with and prefer their favourite; the most accepted option wins, prefers break ties. Its actions
(add_option, vote, close_decision) are in navmcp/actions/decisions.py."""

from __future__ import annotations

from typing import Any

from navmcp import kinds
from navmcp.content import domain
from navmcp.pages.request import Request
from navmcp.render import quoted
from navmcp.store import Row


class Acceptance(kinds.Kind):
    name = "acceptance"
    label = "decision"
    actions = ("add_option", "vote", "close_decision", "remind", "edit_decision")

    def view(self, req: Request, data: dict[str, Any]) -> None:
        options = data["options"]
        # Your vote is in the tally (its `my_` columns), in the options' own order here, oldest first.
        data["your_votes"] = [{"title": o["title"], "accept": o["my_accept"], "prefer": o["my_prefer"]}
                              for o in sorted(options, key=_oldest_first) if o.get("my_accept") is not None]
        data["responded"] = data.get("voters", 0)
        data["result"] = None if data.get("open", True) else domain.winners(options)

    def result(self, req: Request, data: dict[str, Any]) -> kinds.Verdict:
        winners = domain.winners(data["options"])
        if not winners:
            return kinds.Verdict(False, "no option was accepted")
        return kinds.Verdict(len(winners) == 1, " / tie with ".join(quoted(o["title"]) for o in winners))

    def closing_data(self, req: Request) -> dict[str, Any]:
        voters = req.tx.scalar(
            """SELECT count(DISTINCT v.user_id) FROM votes v WHERE v.decision_id = ? AND EXISTS (
                   SELECT 1 FROM memberships m WHERE m.studio_id = ? AND m.user_id = v.user_id)""",
            (req.item["id"], req.studio["id"]))
        return {"options": domain.tally(req.tx, req.item["id"]), "open": False, "voters": voters,
                "members": kinds.members_now(req)}


def _oldest_first(option: Row) -> tuple[str, str]:
    return option["created_at"], option["id"]


KIND = kinds.register(Acceptance())
