"""`make test` ends by saying which suites were skipped and why; `make test-all` (the NAVMCP_REQUIRE_*
variables) fails instead of skipping. Run as pytest subprocesses, as a newcomer runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SKIPPING = '''
import pytest

def test_runs():
    pass

def test_on_postgres():
    pytest.skip("PostgreSQL not reachable at postgresql://nowhere: connection refused")

def test_in_a_browser():
    pytest.skip("needs Debian's chromium (.ci/run installs it)")
'''


def pytest_run(where: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(TESTS), **(env or {})}
    for name in ("NAVMCP_REQUIRE_POSTGRES", "NAVMCP_REQUIRE_CHROMIUM", "NAVMCP_REQUIRE_CONFORMANCE"):
        if name not in (env or {}):
            full.pop(name, None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "skip_summary", "-q", "-p", "no:cacheprovider",
                           *args], cwd=where, env=full, capture_output=True, text=True, timeout=300)


def test_the_end_of_a_run_names_each_skipped_suite_and_why(tmp_path):
    (tmp_path / "test_mixed.py").write_text(SKIPPING)
    run = pytest_run(tmp_path, "test_mixed.py")
    assert run.returncode == 0, run.stdout
    summary = run.stdout.split("what did not run", 1)[1]
    assert "PostgreSQL: 1 test(s) skipped in test_mixed.py" in summary
    assert "because: PostgreSQL not reachable at postgresql://nowhere" in summary
    assert "Chromium: 1 test(s) skipped in test_mixed.py" in summary and "because: needs Debian's chromium" in summary
    assert "`make test-all`" in summary


def test_a_required_suite_that_was_skipped_fails_the_run(tmp_path):
    (tmp_path / "test_mixed.py").write_text(SKIPPING)
    for variable in ("NAVMCP_REQUIRE_CHROMIUM", "NAVMCP_REQUIRE_POSTGRES"):
        run = pytest_run(tmp_path, "test_mixed.py", env={variable: "1"})
        assert run.returncode == 1 and f"FAILED: {variable} is set" in run.stdout, run.stdout


def test_nothing_skipped_says_so(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_runs():\n    pass\n")
    run = pytest_run(tmp_path, "test_plain.py", env={"NAVMCP_REQUIRE_CHROMIUM": "1"})
    assert run.returncode == 0 and "Nothing was skipped." in run.stdout


def test_the_real_suite_without_postgres_names_it(tmp_path):
    """The PostgreSQL half of the real suite, with no server where it looks: skipped, and said so."""
    root = TESTS.parent
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/store/test_pg_rls.py"],
                         cwd=root, capture_output=True, text=True, timeout=300,
                         env={**{k: v for k, v in os.environ.items() if k != "NAVMCP_REQUIRE_POSTGRES"},
                              "NAVMCP_TEST_PG": "postgresql://postgres@127.0.0.1:1/postgres"})
    assert run.returncode == 0, run.stdout[-3000:]
    summary = run.stdout.split("what did not run", 1)[1]
    assert "PostgreSQL:" in summary and "tests/store/test_pg_rls.py" in summary and "PostgreSQL not reachable" in summary


def test_a_missing_conformance_suite_is_named_and_fails_when_required(tmp_path):
    (tmp_path / "test_conf.py").write_text("import pytest\n\ndef test_suite():\n"
                                           "    pytest.skip('the MCP conformance suite is not installed at x')\n")
    run = pytest_run(tmp_path, "test_conf.py")
    assert run.returncode == 0 and "MCP conformance: 1 test(s) skipped" in run.stdout, run.stdout
    run = pytest_run(tmp_path, "test_conf.py", env={"NAVMCP_REQUIRE_CONFORMANCE": "1"})
    assert run.returncode == 1 and "FAILED: NAVMCP_REQUIRE_CONFORMANCE is set" in run.stdout, run.stdout
