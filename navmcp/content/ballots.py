"""Who has voted on a decision, and how, and who has not: what a decision page names (unless the
decision is anonymous: then counts only, to everyone, for good) and whom `remind` tells. Who has
not voted is who has neither a ballot (acceptance) nor an answer (the other kinds, navmcp.kinds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from navmcp.store import Tx

MOST_NAMED = 50  # voters, and members who have not voted, named on a page (then "and N more")


def who_voted(tx: Tx, decision_id: str, most: int = MOST_NAMED) -> list[dict[str, Any]]:
    """The first `most` voters by handle, each with the options they accepted and preferred (in the
    options' own order)."""
    rows = tx.all("""SELECT u.handle, o.title, v.accept, v.prefer FROM votes v
                       JOIN users u ON u.id = v.user_id JOIN options o ON o.id = v.option_id
                      WHERE v.decision_id = ? AND v.user_id IN (SELECT w.user_id FROM votes w
                              JOIN users x ON x.id = w.user_id WHERE w.decision_id = ?
                              GROUP BY w.user_id, x.handle ORDER BY x.handle LIMIT ?)
                      ORDER BY u.handle, o.created_at, o.id""", (decision_id, decision_id, most))
    ballots: dict[str, dict[str, Any]] = {}
    for row in rows:
        ballot = ballots.setdefault(row["handle"], {"handle": row["handle"], "accepts": [], "prefers": []})
        if row["accept"]:
            ballot["accepts"].append(row["title"])
            if row["prefer"]:
                ballot["prefers"].append(row["title"])
    return list(ballots.values())


_NOT_VOTED = """FROM memberships m JOIN users u ON u.id = m.user_id
                WHERE m.studio_id = ? AND u.deleted_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM votes v WHERE v.decision_id = ? AND v.user_id = m.user_id)
                  AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.decision_id = ? AND r.user_id = m.user_id)"""


def not_voted(tx: Tx, studio_id: str, decision_id: str, most: int = MOST_NAMED) -> list[dict[str, Any]]:
    """Members (accounts not deleted) who have not voted: ids and handles, by handle, at most `most`."""
    return tx.all(f"SELECT u.id, u.handle {_NOT_VOTED} ORDER BY u.handle LIMIT ?",
                  (studio_id, decision_id, decision_id, most))


def not_voted_count(tx: Tx, studio_id: str, decision_id: str) -> int:
    return tx.scalar(f"SELECT count(*) {_NOT_VOTED}", (studio_id, decision_id, decision_id))
