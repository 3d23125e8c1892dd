"""Plain phrases for a day, as people write a deadline: "tomorrow", "next friday", "in 3 days".

One reader for every surface: the `Deadline` parameter type reads them (navmcp.actions.fields), so a
person's form and an agent's call turn the same phrase into the same day, and the params schema says
so. Days are UTC days, counted from today in UTC; the caller decides what time of that day it means.

What is understood (case and extra spaces aside):

| Phrase | Day |
| --- | --- |
| `today`, `tonight` | today |
| `tomorrow` | today + 1 |
| `friday`, `this friday`, `on friday` | the coming Friday (today, if it is Friday) |
| `next friday` | the coming Friday after today (1 to 7 days ahead) |
| `in 3 days`, `in a week`, `in two weeks`, `in 1 month` | that far ahead (a month: the same date, or the month's last day) |
| `next week`, `next month` | in a week, in a month |
| `end of week`, `end of next week` | Sunday of this week, of next week |
| `end of month`, `end of next month`, `end of year` | the last day of it |
| `1 december`, `dec 1`, `december 1st` | its next occurrence (today included) |

Any of them may end with a time of day (`time_of_day`): `friday 17:00`, `tomorrow at 9:30`,
`next monday 5pm`, in UTC unless the phrase ends with a zone (`UTC`, `Z`, `+02:00`).
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, time, timedelta, timezone

WEEKDAYS = {name: i for i, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                                "sunday"))}
WEEKDAYS.update({name[:3]: i for name, i in list(WEEKDAYS.items())})
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
MAX_AHEAD = 3660  # days ("in 10000 weeks" is a typo, not a plan)

EXAMPLES = "today, tomorrow, friday, next friday, in 3 days, in 2 weeks, end of month, 1 december"

_IN = re.compile(r"in (\d{1,4}|[a-z]+) (day|week|month|year)s?")
_END = re.compile(r"(?:the )?end of (?:the )?(this |next )?(week|month|year)")
_DAY_MONTH = re.compile(r"(\d{1,2})(?:st|nd|rd|th)? (?:of )?([a-z]+)")
_MONTH_DAY = re.compile(r"([a-z]+) (\d{1,2})(?:st|nd|rd|th)?")


def date_from_phrase(text: str, today: date) -> date | None:
    """The day a plain phrase names (see the module's table), or None when it names none."""
    phrase = " ".join(text.lower().replace(",", " ").split())
    if phrase in ("today", "tonight"):
        return today
    if phrase == "tomorrow":
        return today + timedelta(days=1)
    words = phrase.split(" ")
    if words[-1] in WEEKDAYS and len(words) <= 2 and words[0] in (words[-1], "this", "on", "next", "coming"):
        ahead = (WEEKDAYS[words[-1]] - today.weekday()) % 7
        return today + timedelta(days=ahead or 7) if words[0] == "next" else today + timedelta(days=ahead)
    if phrase in ("next week", "next month", "next year"):
        return _ahead(today, 1, phrase.split()[1])
    if m := _IN.fullmatch(phrase):
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBERS.get(m.group(1))
        return None if n is None else _ahead(today, n, m.group(2))
    if m := _END.fullmatch(phrase):
        return _end_of(today, m.group(2), next_one=m.group(1) == "next ")
    for pattern, day_at, month_at in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        if (m := pattern.fullmatch(phrase)) and m.group(month_at) in MONTHS:
            return _next_occurrence(today, MONTHS[m.group(month_at)], int(m.group(day_at)))
    return None


_TIME = re.compile(r"(.*?)(?:,? at)?,? (\d{1,2})(?::(\d{2}))? ?(am|pm)?(?: ?(utc|z|gmt|[+-]\d{2}:?\d{2}))?")


def time_of_day(text: str) -> tuple[str, time, timezone] | None:
    """A phrase's trailing time of day ("friday 17:00", "tomorrow at 9pm", "dec 1 9:30 +02:00"):
    the phrase before it, the time, and its zone (UTC unless named); None when it ends with none.
    A bare number is a time only with am/pm or a minute ("in 3 days" keeps its 3)."""
    phrase = " ".join(text.lower().split())
    m = _TIME.fullmatch(phrase)
    if m is None or not (m.group(3) or m.group(4)):
        return None
    hour, minute = int(m.group(2)), int(m.group(3) or 0)
    if m.group(4):
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m.group(4) == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    zone: timezone = UTC
    if m.group(5) and m.group(5)[0] in "+-":
        digits = m.group(5)[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        if offset >= timedelta(hours=24):
            return None
        zone = timezone(-offset if m.group(5)[0] == "-" else offset)
    return m.group(1), time(hour, minute), zone


def _ahead(today: date, n: int, unit: str) -> date | None:
    if unit in ("day", "week"):
        days = n * (7 if unit == "week" else 1)
        return today + timedelta(days=days) if days <= MAX_AHEAD else None
    months = n * (12 if unit == "year" else 1)
    if months * 30 > MAX_AHEAD:
        return None
    year, month = divmod(today.month - 1 + months, 12)
    year += today.year
    return date(year, month + 1, min(today.day, calendar.monthrange(year, month + 1)[1]))


def _end_of(today: date, unit: str, next_one: bool) -> date:
    if unit == "week":
        return today + timedelta(days=6 - today.weekday() + (7 if next_one else 0))
    if unit == "year":
        return date(today.year + next_one, 12, 31)
    year, month = (today.year + today.month // 12, today.month % 12 + 1) if next_one else (today.year, today.month)
    return date(year, month, calendar.monthrange(year, month)[1])


def _next_occurrence(today: date, month: int, day: int) -> date | None:
    for year in range(today.year, today.year + 5):  # 29 February waits for a leap year
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            return candidate
    return None
