"""The reference docs name what is in the tree: docs/architecture.md's layout table every module
of the package, docs/testing.md every test file. A new module or test file without its row fails
here, with the row to add."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _named_in(doc: str) -> str:
    return (ROOT / "docs" / doc).read_text()


def test_the_layout_table_names_every_module():
    layout = _named_in("architecture.md")
    modules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "navmcp").rglob("*.py"))
    missing = [m for m in modules if f"`{m}`" not in layout]
    assert not missing, ("docs/architecture.md's layout table has no row for " + ", ".join(missing)
                         + ": add `| `path` | what it owns |` under ## Layout")


def test_the_testing_page_names_every_test_file():
    testing = _named_in("testing.md")
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py"))
    missing = [f for f in files if f"`{f}`" not in testing]
    assert not missing, ("docs/testing.md has no row for " + ", ".join(missing)
                         + ": add `| `path` | what it holds the code to |` to the table of its kind")


def test_the_readme_says_how_to_run_navmcp_and_stays_short():
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme and ".venv/bin/navmcp" in readme
    assert len(readme.splitlines()) <= 150


def test_the_benchmarks_page_keeps_current_tables_and_method_only():
    page = ROOT / "docs" / "benchmarks.md"
    size = len(page.read_bytes())
    assert size <= 40_000, (f"docs/benchmarks.md is {size:,} bytes (at most 40,000): keep current tables and "
                            "method only; move older runs, before/after figures and superseded tables to "
                            "CHANGELOG.md under the entry of their date")
