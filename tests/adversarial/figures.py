"""Counters the long run reports (fuzz cases, sessions, kills, attacks). A no-op in CI.

Tests call `add(name, n)`; when NAVMCP_ADV_FIGURES names a file, the totals are appended to it
as one JSON object when the process exits, and `longrun` sums them into its report.
"""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter

_totals: Counter[str] = Counter()


def add(name: str, amount: int = 1) -> None:
    _totals[name] += amount


def peak(name: str, value: int) -> None:
    """Keep the largest value seen (names start with "max."; `longrun` merges them by max)."""
    _totals[name] = max(_totals[name], value)


def scale() -> str:
    """"ci" (small, the default) or "long" (NAVMCP_ADV_SCALE=long, what `longrun` sets)."""
    return "long" if os.environ.get("NAVMCP_ADV_SCALE") == "long" else "ci"


def pick(ci, long):
    return long if scale() == "long" else ci


@atexit.register
def _flush() -> None:
    path = os.environ.get("NAVMCP_ADV_FIGURES")
    if path and _totals:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(dict(_totals)) + "\n")
