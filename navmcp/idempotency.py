"""Idempotency keys: a write sent again with the same key is applied at most once, and answered as
the first was (issue 41). A client that got no answer (a lost connection, a 503 after a commit it
could not see) sends the call again with its key and learns what happened.

The key is claimed in the action's own write transaction, before anything else is written there
(`claim`): a first call inserts the key's row and, once the action ran, stores its answer in it
(`settle`), both committed with the action or rolled back with it. A repeat finds the row and gets
the stored answer; one that comes while the first is still running waits for it (PostgreSQL's
unique index; SQLite's writers take turns). A refused action stores nothing: nothing was applied,
so its repeat runs again. Keys are the user's own, kept KEPT_HOURS.

Where a key comes from: the action API's `Idempotency-Key` header; an MCP `tools/call`'s
`_meta[META_KEY]`.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from navmcp.clock import ago, now
from navmcp.errors import IdempotencyKeyRefused

META_KEY = "io.github.navmcp/idempotencyKey"
HEADER = "idempotency-key"
KEPT_HOURS = 24
MAX_LENGTH = 200
PRUNE_EVERY = 64  # claims by this process between two prunes of a user's expired keys
_KEY = re.compile(r"[\x21-\x7e]{1,%d}" % MAX_LENGTH)
_claims = itertools.count(1)


def checked(key: Any) -> str | None:
    """The key as given (None: no key), or a refusal naming what a key may be."""
    if key is None:
        return None
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise IdempotencyKeyRefused(f"an idempotency key is 1 to {MAX_LENGTH} visible ASCII characters "
                                    "(a UUID, say); this one is not")
    return key


def claim(tx, user_id: str, key: str, action: str, url: str) -> dict[str, Any] | None:
    """In the action's write transaction, first: None if this call is the key's first (go on, then
    `settle`), else the answer the first call gave."""
    if next(_claims) % PRUNE_EVERY == 0:
        tx.execute("DELETE FROM idempotency_keys WHERE user_id = ? AND at < ?", (user_id, ago(KEPT_HOURS * 3600)))
    if tx.execute("INSERT INTO idempotency_keys (user_id, key, at, action, url) VALUES (?, ?, ?, ?, ?)"
                  " ON CONFLICT DO NOTHING", (user_id, key, now(), action, url[:2000])):
        return None
    row = tx.one("SELECT action, url, result FROM idempotency_keys WHERE user_id = ? AND key = ?", (user_id, key))
    if row is None or row["result"] is None:  # (only its own transaction sees a row without its answer)
        raise IdempotencyKeyRefused("this idempotency key is in use by a call still running; send it again in a moment")
    if row["action"] != action or row["url"] != url[:2000]:
        raise IdempotencyKeyRefused(f"this idempotency key was used for {row['action']} on {row['url']}: a key "
                                    "names one call; use a new key for a new call")
    return json.loads(row["result"])


def settle(tx, user_id: str, key: str, answer: dict[str, Any]) -> None:
    """Store the answer of the key's first call, in its transaction."""
    tx.execute("UPDATE idempotency_keys SET result = ? WHERE user_id = ? AND key = ?",
               (json.dumps(answer, ensure_ascii=False), user_id, key))
