"""The people an archive names, and who each of them is on the instance that imports it.

An archive's `people.jsonl` gives each person's handle and name. A handle is only a name someone
chose on one instance: on another, the same handle may be someone else. Where Supabase Auth signs
people in (PostgreSQL with Supabase's `auth.users`), an e-mail address is who they are, verified by
the sign-in code Supabase sent to it; so:

- The operator's export (`navmcp export`, as the database's owner, who can read `auth.users`
  anyway) adds the `email` of each person Supabase knows. A studio admin's export from the web
  app never does: navmcp shows no one another person's address (docs/privacy.md), and the admin
  of a studio is not the operator of the instance. Neither carries a hash instead: an address is
  easy to guess, and a hash of it would let the archive's holder confirm a guess.
- An import on an instance with Supabase Auth finds a person by that address first, whatever
  their handle is here (they may have chosen another). Failing that, by handle, unless the one
  holding the handle here signs in with another address: a namesake, not them, who must not be
  handed their writing; they become a placeholder as anyone unknown does
  (navmcp.archive.importer). Without addresses on either side, by handle as before.

navmcp's own digest address (navmcp.feeds.mail) is never used: anyone may type any address there,
so it proves nothing.
"""

from __future__ import annotations

from typing import Any

from navmcp.store import Row

# Supabase Auth's table of accounts (schema `auth`, from the Supabase project), if it is there and
# the owner's role may read it (a project may restrict it): else no one is matched by address.
SUPABASE_USERS = ("SELECT CASE WHEN to_regclass('auth.users') IS NULL THEN false"
                  " ELSE has_table_privilege('auth.users', 'SELECT') END")


def knows_emails(tx: Any, hosted: bool) -> bool:
    """Whether this store's people sign in with Supabase Auth, whose accounts have addresses."""
    return hosted and bool(tx.scalar(SUPABASE_USERS))


def add_emails(tx: Any, hosted: bool, people: list[Row]) -> None:
    """Each of `people` whom Supabase Auth knows gains their `email` (the operator's export only)."""
    if not people or not knows_emails(tx, hosted):
        return
    emails = {r["id"]: r["email"] for r in tx.all(
        "SELECT id::text AS id, lower(email) AS email FROM auth.users WHERE email IS NOT NULL AND id::text = ANY(?)",
        ([p["id"] for p in people],))}
    for person in people:
        if person["id"] in emails:
            person["email"] = emails[person["id"]]


def find_person(tx: Any, emails: bool, person: dict[str, Any]) -> tuple[str, str] | None:
    """The id of the account here that is the archive's `person`, and how it was found ("email",
    "handle"); None: nobody here is them. `emails`: this store knows addresses (knows_emails)."""
    email = person.get("email") if emails else None
    if isinstance(email, str) and email:
        found = tx.one("SELECT u.id FROM auth.users a JOIN users u ON u.id = a.id::text"
                       " WHERE lower(a.email) = lower(?) AND u.deleted_at IS NULL ORDER BY u.id LIMIT 1", (email,))
        if found:
            return found["id"], "email"
    found = tx.one("SELECT id FROM users WHERE handle = ? AND deleted_at IS NULL", (person.get("handle"),))
    if found is None:
        return None
    if isinstance(email, str) and email and tx.scalar(
            "SELECT 1 FROM auth.users WHERE id::text = ? AND email IS NOT NULL", (found["id"],)):
        return None  # the handle's holder here signs in with another address: a namesake
    return found["id"], "handle"
