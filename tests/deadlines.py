"""How long a test waits for something that must happen.

A test asserts what happens, never how fast (speed is measured in bench/): it waits for an event
(a queued message, a lock seen held, a status that changed), and gives up only after HANG seconds,
a deadline no healthy run reaches even on a machine busy with other work, so that a hang fails
the test instead of stalling the suite. Timers of the code itself are checked on a clock of the
test's own (tests/web/test_web_head_timer.py) or through what they report (a Busy message naming
its limit), not with a stopwatch.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

HANG = 60.0  # seconds: only a hang takes this long

T = TypeVar("T")


def wait_for(check: Callable[[], T], what: str, seconds: float = HANG, every: float = 0.02) -> T:
    """Call `check` until it returns something true, and return that; fail naming `what` if
    `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s")
        time.sleep(every)
