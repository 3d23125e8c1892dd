"""The end of every test run says which suites did not run here and why: the PostgreSQL half of
the suite skips when no server answers, the browser tests when Chromium is missing, and a line in
`-ra`'s list is easy to miss. With NAVMCP_REQUIRE_POSTGRES=1 / NAVMCP_REQUIRE_CHROMIUM=1 /
NAVMCP_REQUIRE_CONFORMANCE=1 (what `make test-all` and CI set) a skipped suite fails the run instead. Hooks loaded by conftest.py."""

from __future__ import annotations

import os

import pytest

# suite → the variable that makes its absence a failure, and what it needs
SUITES = {
    "PostgreSQL": ("NAVMCP_REQUIRE_POSTGRES", "a PostgreSQL server at 127.0.0.1:5432 (or NAVMCP_TEST_PG)"),
    "Chromium": ("NAVMCP_REQUIRE_CHROMIUM", "Debian's chromium at /usr/bin/chromium"),
    "MCP conformance": ("NAVMCP_REQUIRE_CONFORMANCE", "npm (`make test` installs the MCP conformance suite with it)"),
}
_skipped: dict[str, dict[str, list[str]]] = {}  # suite → reason → test ids


def suite_of(reason: str) -> str:
    low = reason.lower()
    if "postgres" in low or "psycopg" in low:
        return "PostgreSQL"
    if "chromium" in low or "playwright" in low:
        return "Chromium"
    if "conformance" in low:
        return "MCP conformance"
    return "other"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        _skipped.setdefault(suite_of(reason), {}).setdefault(reason, []).append(report.nodeid)


def _missing_required() -> list[str]:
    return [suite for suite, (variable, _) in SUITES.items() if suite in _skipped and os.environ.get(variable)]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _missing_required() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    write = terminalreporter.write_line
    terminalreporter.section("what did not run")
    if not _skipped:
        write("Nothing was skipped.")
        return
    for suite, reasons in sorted(_skipped.items()):
        ids = [nodeid for nodeids in reasons.values() for nodeid in nodeids]
        files = sorted({nodeid.split("::", 1)[0] for nodeid in ids})
        write(f"{suite}: {len(ids)} test(s) skipped in {', '.join(files)}")
        for reason in reasons:
            write(f"  because: {reason}")
    for suite in _missing_required():
        write(f"FAILED: {SUITES[suite][0]} is set, so the {suite} suite must run, and it did not.", red=True)
    absent = [suite for suite in SUITES if suite in _skipped]
    if absent:
        write("To run everything: provide " + " and ".join(SUITES[s][1] for s in absent)
              + ", then `make test-all` (it fails where a suite would be skipped). See docs/testing.md.")
