"""A person's time zone: the IANA name they set on /whoami (`set_time_zone`), kept on their user row.

Times are stored in UTC. A deadline typed without a zone is read in the person's zone
(`navmcp.actions.fields.Deadline`); pages show a deadline in it: markdown as ISO 8601 with its
offset and the zone's name ("2026-12-04T18:00+01:00 Europe/Paris"), the web app as local time (the
browser's zone for someone who set none). Someone with no zone set reads and writes UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

MAX_NAME = 64


@lru_cache(maxsize=1)
def _known() -> dict[str, str]:
    """Every IANA zone name the system knows, by its lowercase form (a name is typed in any case)."""
    return {name.lower(): name for name in available_timezones()} | {"utc": "UTC"}


def canonical(name: str) -> str:
    """A zone name as given ("europe/lisbon", " Europe/Lisbon ") in its IANA spelling, else ValueError."""
    found = _known().get(name.strip().lower())
    if found is None:
        raise ValueError(f"no time zone {name.strip()[:MAX_NAME]!r}: give an IANA name such as Europe/Lisbon, "
                         "America/New_York or UTC")
    return found


def zone(name: str | None) -> tzinfo:
    """The zone a stored name names; UTC for none (or a name the system no longer knows)."""
    if not name or name == "UTC":
        return UTC
    try:
        return _zone(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


@lru_cache(maxsize=256)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def of(user: dict[str, Any] | None) -> str | None:
    """The zone a user set, or None (the row of a store without the column has none)."""
    return (user or {}).get("time_zone") or None


def local_iso(value: str, name: str) -> str:
    """A stored UTC time in the zone `name`, as ISO 8601 to the minute with its offset and the name:
    "2026-12-04T18:00+01:00 Europe/Paris"."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zone(name))
    return f"{moment.isoformat(timespec='minutes')} {name}"
