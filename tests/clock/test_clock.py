"""The clock: stored times are one text format, made by `navmcp.clock` alone, that sorts as time does.

- `now()` formats the time itself (a second's text made once): the same text as `datetime.strftime`;
- `ago`, `from_now` and `stamp` write the same format, so stored times compare as text;
- `moment` reads it back.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone
from unittest import mock

import pytest

from navmcp import clock


@pytest.mark.parametrize("ns", [0, 1_700_000_000_123_456_789, 1_700_000_000_999_999_999, 1_800_000_000_000_000_000,
                                4_102_444_799_999_999_000])
def test_now_is_the_strftime_text(ns):
    expected = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=ns // 1000)
    with mock.patch("time.time_ns", return_value=ns):
        assert clock.now() == expected.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_now_follows_the_clock():
    before = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    stamp = clock.now()
    after = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert before <= stamp <= after


def test_times_before_and_after_now_compare_as_text():
    earlier, current, later = clock.ago(3600), clock.now(), clock.from_now(timedelta(hours=1))
    assert earlier < current < later
    assert all(len(t) == len(current) and t.endswith("Z") for t in (earlier, later))
    assert abs((clock.moment(current) - clock.moment(earlier)).total_seconds() - 3600) < 5


def test_ago_keeps_following_the_clock_for_each_span():
    first = clock.ago(60)
    time.sleep(0.002)
    assert clock.ago(60) > first  # the cached text of a second is only its second, never the whole stamp


def test_stamp_writes_utc_and_moment_reads_it_back():
    berlin = timezone(timedelta(hours=1))
    moment = datetime(2026, 11, 22, 6, 6, 7, 123456, tzinfo=berlin)
    assert clock.stamp(moment) == "2026-11-22T05:06:07.123456Z"
    assert clock.stamp(moment.replace(tzinfo=None)) == "2026-11-22T06:06:07.123456Z"  # naive: already UTC
    assert clock.moment("2026-11-22T05:06:07.123456Z") == moment
    assert clock.moment("2026-11-22T05:06:07").tzinfo is not None


def test_now_ago_and_from_now_share_one_source():
    """A clock moved for a test (time.time and time.time_ns) moves every stored time alike."""
    moved = 1_800_000_000.0
    with mock.patch("time.time", return_value=moved), mock.patch("time.time_ns", return_value=int(moved * 10**9)):
        assert clock.from_now(timedelta(hours=1)) == clock.stamp(datetime.fromtimestamp(moved + 3600, UTC))
        assert clock.ago(3600) < clock.now() < clock.from_now(timedelta(seconds=1))
