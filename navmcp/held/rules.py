"""Hold rules: which writes wait, whose, for whom, how many approvals, until when.

A rule is a row of `hold_rules` in a studio: the studio's (`owner_id` NULL, set by an admin) or a
member's own (binding only that member's writes). Rules are written in a person's browser session
only (`Request.browser`): over MCP or a Bearer token the actions that change them are not there, so
an agent cannot lift its own hold. Who may approve is judged each time it is asked (`eligible`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from navmcp.store import Row

if TYPE_CHECKING:
    from navmcp.pages.request import Request
    from navmcp.store import Tx

# Never held, whatever a rule says: a person must always be able to leave, hide, take back their
# own request, decide a held action, and change the rules themselves.
EXEMPT = frozenset({"leave_studio", "make_unfindable", "withdraw", "approve", "reject", "set_hold_rule",
                    "remove_hold_rule"})
DEFAULT_HOURS = 72
BROWSER_ONLY = "hold rules are changed in a person's browser session only, never over MCP or with a token"


def covering(req: Request, action: str) -> Row | None:
    """The first rule (oldest first) that holds `action` asked by this request, or None."""
    if action in EXEMPT or req.studio is None:
        return None
    for rule in req.tx.all("SELECT * FROM hold_rules WHERE studio_id = ? AND (owner_id IS NULL OR owner_id = ?)"
                           " ORDER BY created_at, id", (req.studio["id"], req.user["id"])):
        if rule["whose"] == "agents" and req.browser:
            continue
        if rule["actions"] != "*" and action not in rule["actions"].split(","):
            continue
        return rule
    return None


def approver_words(approvers: str, approvals: int, own_counts: bool, handles: dict[str, str] | None = None) -> str:
    """Who must approve, in words: "1 admin of the studio, not the requester"."""
    n = approvals
    if approvers == "self":
        return "the person the agent acts for"
    who = {"admins": "admin" if n == 1 else "admins", "members": "member" if n == 1 else "members"}.get(approvers)
    if who is None:
        names = ", ".join("@" + (handles or {}).get(u, u) for u in approvers.split(","))
        who = f"of {names}"
        text = f"{n} approval{'s' if n > 1 else ''} {who}"
    else:
        text = f"{n} {who} of the studio"
    return text + ("" if own_counts else ", not the requester")


def describe(rule: Row, handles: dict[str, str] | None = None) -> str:
    whose = "agent writes" if rule["whose"] == "agents" else "writes"
    scope = "of its owner" if rule["owner_id"] else "in the studio"
    actions = "any action" if rule["actions"] == "*" else ", ".join(rule["actions"].split(","))
    needs = approver_words(rule["approvers"], rule["approvals"], bool(rule["own_counts"]), handles)
    return (f"{whose} {scope} ({actions}) need {needs}"
            f"; approval {'in the MCP client or the browser' if rule['in_client'] else 'in the browser only'}"
            f"; expires after {rule['expires_hours']} h")


def eligible(tx: Tx, held: Row, user_id: str) -> str | None:
    """Why `user_id` may not approve `held` now, or None: judged when asked, on this transaction's data."""
    role = tx.scalar("SELECT role FROM memberships WHERE studio_id = ? AND user_id = ?", (held["studio_id"], user_id))
    if role is None:
        return "you are not a member of the studio"
    own = user_id == held["requester_id"]
    approvers = held["approvers"]
    if approvers == "self":
        if not own:
            return "only the person the agent acts for approves this one"
    else:
        if own and not held["own_counts"]:
            return "your own approval does not count for a write you asked for"
        if approvers == "admins" and role != "admin":
            return "it needs an admin of the studio"
        if approvers not in ("admins", "members") and user_id not in approvers.split(","):
            return "it needs one of the people the rule names"
    return None


def candidates(tx: Tx, held: Row) -> list[str]:
    """Everyone who could still approve `held` and has not yet: empty means nobody can any more."""
    done = {r["user_id"] for r in tx.all("SELECT user_id FROM held_approvals WHERE held_id = ?", (held["id"],))}
    approvers = held["approvers"]
    if approvers == "self":
        ids = [held["requester_id"]]
    elif approvers in ("admins", "members"):
        ids = [r["user_id"] for r in tx.all(
            "SELECT user_id FROM memberships WHERE studio_id = ?" + (" AND role = 'admin'" if approvers == "admins" else "")
            + " ORDER BY user_id", (held["studio_id"],))]
    else:
        ids = approvers.split(",")
    return [u for u in ids if u not in done and eligible(tx, held, u) is None]


def counted(tx: Tx, held: Row) -> list[Row]:
    """The approvals given that still count: their givers still eligible now."""
    rows = tx.all("""SELECT a.user_id, a.note, a.created_at, u.handle FROM held_approvals a
                       JOIN users u ON u.id = a.user_id WHERE a.held_id = ? ORDER BY a.created_at""", (held["id"],))
    return [r for r in rows if eligible(tx, held, r["user_id"]) is None]


def awaiting(tx: Tx, user_id: str, at: str) -> list[dict[str, object]]:
    """Per studio of `user_id`'s, the pending held actions they may approve now (home, the app shell):
    [{"studio": handle, "count": n}], studios without any left out."""
    rows = tx.all("""SELECT h.*, s.handle AS studio_handle FROM held_actions h
                       JOIN memberships m ON m.studio_id = h.studio_id AND m.user_id = ?
                       JOIN studios s ON s.id = h.studio_id
                      WHERE h.status = 'pending' AND h.expires_at > ? ORDER BY s.handle, h.created_at LIMIT 200""",
                  (user_id, at))
    if not rows:
        return []
    done = {r["held_id"] for r in tx.all("SELECT held_id FROM held_approvals WHERE user_id = ?", (user_id,))}
    counts: dict[str, int] = {}
    for held in rows:
        if held["id"] not in done and eligible(tx, held, user_id) is None:
            counts[held["studio_handle"]] = counts.get(held["studio_handle"], 0) + 1
    return [{"studio": handle, "count": n} for handle, n in counts.items()]
