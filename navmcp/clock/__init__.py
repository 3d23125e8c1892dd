"""The clock, and time as the stores keep it.

A moment is stored as UTC ISO-8601 text with microseconds, `2026-11-22T05:06:07.123456Z` (`FORMAT`):
it sorts and compares as text on both stores, so "newer than" is a string comparison in SQL. This
module is the one place that writes that text; the PostgreSQL functions that stamp times themselves
write the same (`to_char(..., 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`, migrations 20261122000004 and
20261126000011).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_SECOND = "%Y-%m-%dT%H:%M:%S"  # FORMAT up to its fraction, for `time.strftime` (which has no %f)

_second: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def now() -> str:
    """The current time as stored text. The text of a second is made once: `strftime` with `%f`
    runs in Python and cost more than the rest of a write's bookkeeping."""
    global _second
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    last = _second  # one read: another thread may replace it meanwhile
    if last[0] != seconds:
        last = _second = (seconds, time.strftime(_SECOND, time.gmtime(seconds)))
    return "%s.%06dZ" % (last[1], micros)  # half the time of the f-string with a format spec


def ago(seconds: float) -> str:
    """The time `seconds` ago, as stored text (so it compares with `now()`'s); the text of its second
    is made once per second (this runs on every /mcp call)."""
    whole, micros = divmod(int((time.time() - seconds) * 1_000_000), 1_000_000)
    known = _ago_seconds.get(seconds)  # one read: another thread may replace it meanwhile
    if known is None or known[0] != whole:
        if len(_ago_seconds) > 16:
            _ago_seconds.clear()
        known = _ago_seconds[seconds] = (whole, time.strftime(_SECOND, time.gmtime(whole)))
    return "%s.%06dZ" % (known[1], micros)


_ago_seconds: dict[float, tuple[int, str]] = {}  # seconds ago → (the last second, its text)


def from_now(delta: timedelta) -> str:
    """The time `delta` from now (an expiry), as stored text: on the same source as `now`, so a
    clock moved for a test moves both."""
    return stamp(datetime.fromtimestamp(time.time(), UTC) + delta)


def stamp(moment: datetime) -> str:
    """A moment as stored text; a naive one is taken to be UTC already."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime(FORMAT)


def moment(text: str) -> datetime:
    """Stored text as an aware UTC datetime (the inverse of `stamp`). Raises ValueError."""
    parsed = datetime.fromisoformat(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed
