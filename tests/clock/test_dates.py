"""navmcp.clock.dates: plain phrases for a deadline's day, read the same for people's forms and agents' calls."""

from __future__ import annotations

from datetime import date

import pytest

from navmcp.actions import BY_PAGE
from navmcp.clock.dates import EXAMPLES, date_from_phrase

THURSDAY = date(2026, 11, 26)


@pytest.mark.parametrize("phrase, day", [
    ("today", "2026-11-26"), ("Tonight", "2026-11-26"), ("tomorrow", "2026-11-27"),
    ("friday", "2026-11-27"), ("on Friday", "2026-11-27"), ("next friday", "2026-11-27"), ("thu", "2026-11-26"),
    ("this thursday", "2026-11-26"), ("next thursday", "2026-12-03"), ("next  Monday", "2026-11-30"),
    ("in 3 days", "2026-11-29"), ("in a day", "2026-11-27"), ("in two weeks", "2026-12-10"),
    ("in 1 month", "2026-12-26"), ("in a year", "2027-11-26"), ("next week", "2026-12-03"),
    ("next month", "2026-12-26"), ("end of week", "2026-11-29"), ("end of next week", "2026-12-06"),
    ("end of month", "2026-11-30"), ("the end of the month", "2026-11-30"), ("end of next month", "2026-12-31"),
    ("end of year", "2026-12-31"), ("1 december", "2026-12-01"), ("Dec 1st", "2026-12-01"),
    ("3 march", "2027-03-03"), ("29 feb", "2028-02-29"),
])
def test_phrases_name_their_day(phrase, day):
    assert date_from_phrase(phrase, THURSDAY) == date.fromisoformat(day)


def test_months_ahead_keep_the_day_or_take_the_months_last():
    assert date_from_phrase("in a month", date(2026, 1, 31)) == date(2026, 2, 28)
    assert date_from_phrase("end of next month", date(2026, 12, 5)) == date(2027, 1, 31)


@pytest.mark.parametrize("phrase", ["", "soon", "next fortnight", "friday week", "in many days", "feb 30",
                                    "in 99999 days", "in 1000 years", "32 december", "2026-13-01"])
def test_anything_else_names_no_day(phrase):
    assert date_from_phrase(phrase, THURSDAY) is None


def test_the_agents_schema_says_phrases_are_read():
    """The params schema stays truthful: what the form accepts, the agents are told."""
    schema = BY_PAGE["studio"]["create_decision"].input_schema
    deadline = schema["properties"]["deadline"]
    assert EXAMPLES in str(deadline) and "ISO 8601" in str(deadline)


@pytest.mark.parametrize("phrase, before, at, offset_minutes", [
    ("friday 17:00", "friday", "17:00", 0), ("tomorrow at 9am", "tomorrow", "09:00", 0),
    ("next monday 5pm UTC", "next monday", "17:00", 0), ("dec 1 9:30 +02:00", "dec 1", "09:30", 120),
    ("Friday, at 12am", "friday", "00:00", 0), ("in 3 days 08:15 -0500", "in 3 days", "08:15", -300),
])
def test_a_phrase_may_end_with_a_time_of_day_and_its_zone(phrase, before, at, offset_minutes):
    from navmcp.clock.dates import time_of_day

    day_phrase, moment, zone = time_of_day(phrase)
    assert (day_phrase, moment.strftime("%H:%M")) == (before, at)
    assert zone.utcoffset(None).total_seconds() == offset_minutes * 60


@pytest.mark.parametrize("phrase", ["in 3 days", "december 1", "friday 25:00", "friday 13pm", "friday 9:75"])
def test_numbers_that_are_no_time_are_left_to_the_day(phrase):
    from navmcp.clock.dates import time_of_day

    assert time_of_day(phrase) is None


def test_a_deadline_in_words_with_a_time_is_that_moment_in_utc():
    from navmcp.actions.fields import _deadline

    stamped = _deadline("tomorrow at 9:30 +02:00")
    assert stamped.endswith("T07:30:00.000000Z")
    assert _deadline("tomorrow").endswith("T23:59:59.000000Z")  # a day alone: its end, as before


@pytest.mark.parametrize("deadline, said", [
    ("2026-12-04T17:00:00.000000Z", "2026-12-04 17:00 UTC (in 6 days)"),
    ("2026-11-28T15:00:00.000000Z", "2026-11-28 15:00 UTC (2 hours ago)"),
    ("2026-11-28T17:00:30.000000Z", "2026-11-28 17:00 UTC (in 1 minute)"),
    ("2027-03-01T00:00:00.000000Z", "2027-03-01 00:00 UTC (in 3 months)"),
])
def test_an_items_deadline_says_how_far_off_it_is(deadline, said):
    from navmcp.render import due

    assert due(deadline, "2026-11-28T17:00:00.000000Z") == said
