"""Parameter types shared by the action models, with the limits that keep pages bounded."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, WithJsonSchema

from navmcp.clock import stamp, zones
from navmcp.clock.dates import EXAMPLES, date_from_phrase, time_of_day
from navmcp.content.text import handle_text, look_alike_key, normalized
from navmcp.render import DIRECTION_CONTROLS, quoted


def _one_line(value: str) -> str:
    """One line as stored (`text.normalized`: NFC, invisible characters dropped), refused if what is
    left holds a line break or control, a direction control, or nothing visible."""
    value = normalized(value)
    if any(ch in value for ch in "\r\n\x00") or any(ord(ch) < 32 and ch != "\t" for ch in value):
        raise ValueError("must be a single line without control characters")
    value = value.strip()
    if not value or not value.isprintable():  # only then can it hold a format character (the common case skips both scans)
        if any(ch in DIRECTION_CONTROLS for ch in value):
            raise ValueError("must not contain text-direction controls (U+202A to U+202E, U+2066 to U+2069)")
        if not any(ch.isprintable() and not ch.isspace() for ch in value):
            raise ValueError("must contain a visible character")
    return value


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _is_date(value: str) -> bool:
    """A date without a time, in any ISO form (2026-12-01, 20261201, 2026-W49-2)."""
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


_NAMED_ZONE = re.compile(r"(?:utc|z|gmt|[+-]\d{2}:?\d{2})$")


def _deadline(value: object, zone: str | None = None) -> str:
    """An ISO date or date-time in the future, or a plain phrase for a day (navmcp.clock.dates), stored as
    UTC text. What names no zone is read in the zone of the person acting (the validation context's
    `zone`, `navmcp.clock.zones`; UTC when they set none): their "friday 17:00" is five o'clock their time."""
    local = zones.zone(zone)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            timed = time_of_day(value)  # "friday 17:00": the day's phrase, then its time
            day = date_from_phrase(timed[0] if timed else value, datetime.now(local).date())
            if day is None:
                raise ValueError(f"must be a date (2026-12-01), a date and time (2026-12-01T17:00:00Z) or a day in "
                                 f"words ({EXAMPLES}), with a time if you like (friday 17:00)") from None
            if timed:
                named = _NAMED_ZONE.search(" ".join(value.lower().split()))
                moment = datetime.combine(day, timed[1], tzinfo=timed[2] if named else local)
            else:
                value, moment = day.isoformat(), datetime(day.year, day.month, day.day)
    elif isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        raise ValueError("must be an ISO 8601 date or date-time string")
    if isinstance(value, str) and _is_date(value):  # a bare date means the end of that day
        moment = moment.replace(hour=23, minute=59, second=59)
    try:
        moment = moment.replace(tzinfo=local) if moment.tzinfo is None else moment
        moment = moment.astimezone(UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-14:00 is past the last representable UTC moment
        raise ValueError("must be a date between the years 1 and 9999 in UTC") from None
    if moment <= datetime.now(UTC):
        raise ValueError("must be in the future")
    return stamp(moment)


def _distinct(options: list[str]) -> list[str]:
    """Options of one decision must not look alike: compared by `look_alike_key`, so an option
    can't pass for another with a zero-width space, a soft hyphen or a Cyrillic 'а' in it."""
    seen: dict[str, str] = {}
    for option in options:
        key = look_alike_key(option)
        if key in seen:
            said = "are the same" if seen[key] == option else "look the same"
            raise ValueError(f"options must be distinct: {quoted(seen[key])} and {quoted(option)} {said}")
        seen[key] = option
    return options


Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), AfterValidator(_one_line)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), AfterValidator(_one_line)]
Body = Annotated[str, StringConstraints(min_length=1, max_length=100_000), AfterValidator(_no_nul)]
ShortText = Annotated[str, StringConstraints(max_length=5_000), AfterValidator(_no_nul)]
Comment = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20_000), AfterValidator(_no_nul)]
Options = Annotated[list[Title], Field(max_length=20), AfterValidator(_distinct)]
# An option named by a voter: its id, or its title as stored (normalized as titles are, so a title
# typed or copied with an invisible character in it still names its option).
OptionRef = Annotated[str, StringConstraints(min_length=1, max_length=200),
                      AfterValidator(lambda v: normalized(v).strip() or v)]
# A handle as typed is read as NFKC without format characters ("ｂｏｂ", "b\u200bob": bob) before its
# pattern is checked, so the pattern judges what is seen.
Handle = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$"),
                   BeforeValidator(lambda v: handle_text(v) if isinstance(v, str) else v)]
# A user as pages show one ("@carol") or bare: the '@' is not part of the handle.
# Its schema says so too (an HTML form checks the pattern before sending).
UserHandle = Annotated[Handle, BeforeValidator(lambda v: v[1:] if isinstance(v, str) and v.startswith("@") else v),
                       WithJsonSchema({"type": "string", "pattern": "^@?[a-z0-9][a-z0-9-]{0,31}$"})]
Tag = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]
Tags = Annotated[list[Tag], Field(max_length=10, description="lowercase tags, e.g. [\"planning\", \"q4\"]")]
Deadline = Annotated[str, BeforeValidator(lambda v, info: _deadline(v, (info.context or {}).get("zone"))), Field(description=(
    "ISO 8601 date or date-time in the future (your time zone if none given: set it on /whoami; else UTC), "
    "or a day in words: "
    f"{EXAMPLES}; with a time if you like: friday 17:00, tomorrow at 9am, dec 1 9:30 +02:00. "
    "A date alone means the end of that day."))]
