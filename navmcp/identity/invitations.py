"""Invitations: a link a studio's admin shares (`create_invitation` on the members page), which a
person opens in a browser to join the studio (`/invite/SECRET`, navmcp.web.invite) — signing in
first, or creating an account there.

A link grants one role, up to a number of uses, until it expires (INVITE_DAYS by default) or an
admin revokes it. Its secret is shown once, when it is made, and stored hashed. Nobody is added
without opening it and agreeing (the join button); a link that is unknown, expired, revoked or used
up is refused in one text (`REFUSED`) that tells which of these it is to nobody. The person who
opens it is no member yet: on the hosted store, reading it by its secret and joining by it go
through SECURITY DEFINER functions (supabase/migrations/20261128000051_invitations.sql).

An invitation can instead be addressed to a person by a handle they made findable (`invite`): it
waits in their inbox (an `invited` entry, and the list on `/inbox`) until they accept it in their
browser or decline it (`answer`); its secret is never shown. They are no member meanwhile, so on the
hosted store telling them, listing and answering go through SECURITY DEFINER functions as well
(supabase/migrations/20261129000192_invitee.sql).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from navmcp.clock import from_now, now
from navmcp.feeds import changes

if TYPE_CHECKING:
    from navmcp.store import Row, Store, Tx

INVITE_DAYS = 7
MOST_DAYS = 30
MOST_USES = 100
PREFIX = "/invite/"
REFUSED = ("This invitation link does not work: it may have expired, been revoked or been used up. "
           "Ask whoever sent it for a new one.")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(tx: Tx, studio_id: str, user_id: str, role: str, uses: int, days: int,
           invitee: Row | None = None) -> str:
    """A new invitation to `studio_id` by `user_id` (for `invitee_id` alone, if given); returns its
    secret (shown once, stored hashed)."""
    token = secrets.token_urlsafe(24)
    tx.execute("INSERT INTO invitations (id, studio_id, token_hash, role, max_uses, created_by, created_at,"
               " expires_at, invitee_id, invitee_handle) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (secrets.token_hex(4), studio_id, token_hash(token), role, uses, user_id, now(),
                from_now(timedelta(days=days)), invitee and invitee["id"], invitee and invitee["handle"]))
    return token


def invite(tx: Tx, studio_id: str, user_id: str, invitee: Row, role: str, days: int) -> None:
    """An invitation to `studio_id` for `invitee`, by the admin `user_id`: an `invited` entry in
    their inbox (outside any studio: they are in none of its yet) and a change of their own pages."""
    invitee_id = invitee["id"]
    create(tx, studio_id, user_id, role, 1, days, invitee)
    made = tx.scalar("SELECT id FROM invitations WHERE studio_id = ? AND invitee_id = ? ORDER BY created_at DESC LIMIT 1",
                     (studio_id, invitee_id))
    at, entry = now(), secrets.token_hex(8)
    if tx.hosted:
        tx.execute("SELECT navmcp.note_invited(?, ?, ?)", (made, at, entry))
        return
    tx.execute("INSERT INTO inbox (id, user_id, kind, studio_id, item_id, actor_id, client, created_at, updated_at)"
               " VALUES (?, ?, 'invited', NULL, NULL, ?, '', ?, ?)", (entry, invitee_id, user_id, at, at))
    changes.record(tx, invitee_id, None, None, "invited")


def pending_for(tx: Tx, studio_id: str, invitee_id: str) -> bool:
    """Whether an invitation of `studio_id` waits for `invitee_id` already (admins read it)."""
    return tx.one("SELECT 1 FROM invitations WHERE studio_id = ? AND invitee_id = ? AND revoked_at IS NULL"
                  " AND declined_at IS NULL AND expires_at > ? AND uses < max_uses", (studio_id, invitee_id, now())) is not None


_FOR_ME = """SELECT i.id, s.handle AS studio, s.name AS studio_name, i.role, u.handle AS inviter, i.expires_at
               FROM invitations i JOIN studios s ON s.id = i.studio_id LEFT JOIN users u ON u.id = i.created_by
              WHERE i.invitee_id = ? AND i.revoked_at IS NULL AND i.declined_at IS NULL
                AND i.expires_at > ? AND i.uses < i.max_uses
              ORDER BY i.created_at DESC, i.id LIMIT 50"""


def addressed_to(tx: Tx, user_id: str) -> list[dict[str, Any]]:
    """The invitations waiting for `user_id`'s answer, newest first: studio, its name, role, inviter."""
    if tx.hosted:
        return tx.all("SELECT * FROM navmcp.invitations_for_me(?)", (now(),))
    return tx.all(_FOR_ME, (user_id, now()))


def answer(tx: Tx, user_id: str, invitation_id: str, accept: bool) -> str | None:
    """`user_id` accepts (joins with its role) or declines one of the invitations waiting for them:
    the studio's handle, or None (none such waits). Their `invited` entries are read once none waits."""
    at = now()
    if tx.hosted:
        handle = tx.scalar("SELECT navmcp.answer_invitation(?, ?, ?)", (invitation_id, accept, at))
        studio_id = handle and accept and tx.scalar("SELECT id FROM studios WHERE handle = ?", (handle,))
    else:
        inv = tx.one("SELECT i.id, i.studio_id, i.role, s.handle FROM invitations i JOIN studios s ON s.id = i.studio_id"
                     " WHERE i.id = ? AND i.invitee_id = ? AND i.revoked_at IS NULL AND i.declined_at IS NULL"
                     " AND i.expires_at > ? AND i.uses < i.max_uses", (invitation_id, user_id, at))
        if inv is None:
            return None
        handle, studio_id = inv["handle"], inv["studio_id"] if accept else None
        if not accept:
            tx.execute("UPDATE invitations SET declined_at = ? WHERE id = ?", (at, inv["id"]))
        else:
            if not tx.one("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ?", (inv["studio_id"], user_id)):
                tx.execute("INSERT INTO memberships (studio_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
                           (inv["studio_id"], user_id, inv["role"], at))
            tx.execute("UPDATE invitations SET uses = uses + 1 WHERE id = ?", (inv["id"],))
            tx.execute("INSERT INTO invitation_uses (invitation_id, user_id, used_at) VALUES (?, ?, ?)"
                       " ON CONFLICT DO NOTHING", (inv["id"], user_id, at))
    if handle is None:
        return None
    if studio_id:
        changes.record(tx, user_id, studio_id, None, "accept_invitation")  # the members page, and their pages
    if not addressed_to(tx, user_id):
        tx.execute("UPDATE inbox SET read_at = ? WHERE user_id = ? AND kind = 'invited' AND read_at IS NULL", (at, user_id))
    return handle


def revoke(tx: Tx, studio_id: str, invitation_id: str) -> bool:
    return bool(tx.execute("UPDATE invitations SET revoked_at = ? WHERE id = ? AND studio_id = ? AND revoked_at IS NULL",
                           (now(), invitation_id, studio_id)))


def listing(tx: Tx, studio_id: str, most: int = 20) -> list[dict[str, Any]]:
    """A studio's newest invitations (admins: the policies show them nobody else), each with its
    state and who joined by it."""
    at = now()
    rows = tx.all("SELECT i.id, i.role, i.max_uses, i.uses, i.created_at, i.expires_at, i.revoked_at, i.declined_at,"
                  " u.handle AS creator, i.invitee_handle AS invitee FROM invitations i"
                  " LEFT JOIN users u ON u.id = i.created_by"
                  " WHERE i.studio_id = ? ORDER BY i.created_at DESC, i.id LIMIT ?", (studio_id, most))
    for row in rows:
        row["state"] = ("revoked" if row["revoked_at"] else "declined" if row["declined_at"]
                        else "accepted" if row["invitee"] and row["uses"] else "expired" if row["expires_at"] <= at
                        else "used up" if row["uses"] >= row["max_uses"] else "open")
        row["used_by"] = [r["handle"] for r in tx.all(
            "SELECT u.handle FROM invitation_uses w JOIN users u ON u.id = w.user_id WHERE w.invitation_id = ?"
            " ORDER BY w.used_at, u.handle LIMIT 100", (row["id"],))]
    return rows


def open_count(tx: Tx, studio_id: str) -> int:
    return tx.scalar("SELECT count(*) FROM invitations WHERE studio_id = ? AND revoked_at IS NULL AND expires_at > ?"
                     " AND uses < max_uses AND declined_at IS NULL", (studio_id, now()))


def offered(store: Store, token: str) -> dict[str, Any] | None:
    """The studio (`handle`, `name`) and `role` a live invitation offers, or None."""
    if not token or len(token) > 100:
        return None
    with store.read() as tx:
        if store.hosted:
            return tx.one("SELECT * FROM navmcp.invitation(?, ?)", (token_hash(token), now()))
        return tx.one("SELECT s.id AS studio_id, s.handle, s.name, i.role FROM invitations i"
                      " JOIN studios s ON s.id = i.studio_id WHERE i.token_hash = ? AND i.revoked_at IS NULL"
                      " AND i.expires_at > ? AND i.uses < i.max_uses", (token_hash(token), now()))


def redeem(store: Store, token: str, user_id: str) -> str | None:
    """`user_id` joins by a live invitation, in one write: returns the studio's handle, or None (the
    link does not work). One already a member keeps their role and spends no use."""
    if not token or len(token) > 100:
        return None
    at = now()
    with store.write(user_id=user_id) as tx:
        if store.hosted:
            handle = tx.scalar("SELECT navmcp.redeem_invitation(?, ?)", (token_hash(token), at))
            studio_id = handle and tx.scalar("SELECT id FROM studios WHERE handle = ?", (handle,))
        else:
            handle, studio_id = _redeem(tx, token_hash(token), user_id, at)
        if studio_id:
            changes.record(tx, user_id, studio_id, None)  # the members page, and the person's own pages
        return handle


def _redeem(tx: Tx, hashed: str, user_id: str, at: str) -> tuple[str | None, str | None]:
    """What navmcp.redeem_invitation does on the hosted store."""
    inv = tx.one("SELECT i.id, i.studio_id, i.role, s.handle FROM invitations i JOIN studios s ON s.id = i.studio_id"
                 " WHERE i.token_hash = ? AND i.revoked_at IS NULL AND i.expires_at > ? AND i.uses < i.max_uses",
                 (hashed, at))
    if inv is None:
        return None, None
    if tx.one("SELECT 1 FROM memberships WHERE studio_id = ? AND user_id = ?", (inv["studio_id"], user_id)):
        return inv["handle"], inv["studio_id"]
    tx.execute("INSERT INTO memberships (studio_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
               (inv["studio_id"], user_id, inv["role"], at))
    tx.execute("UPDATE invitations SET uses = uses + 1 WHERE id = ?", (inv["id"],))
    tx.execute("INSERT INTO invitation_uses (invitation_id, user_id, used_at) VALUES (?, ?, ?)", (inv["id"], user_id, at))
    return inv["handle"], inv["studio_id"]
