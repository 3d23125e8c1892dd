"""Shared fixtures: a fresh NAVMCP_HOME per test, the app over it, users and their tokens."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import create_user, ensure_owner, mint_token

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "bin" / "mcp-server"

# tests/ mirrors navmcp's folders, and a test imports another's helpers by module name wherever it
# sits; pytest puts a test's folder on sys.path only when it collects that test, so every folder of
# tests is put there now, whatever is collected first.
sys.path[1:1] = [str(d) for d in sorted(ROOT.joinpath("tests").iterdir())
                 if any(d.glob("test_*.py")) and str(d) not in sys.path]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def app(home: Path) -> App:
    app = App(Config(home=home, database_url=None, token=None))
    yield app
    if "store" in app.__dict__:
        app.store.close()


@pytest.fixture
def owner(app: App):
    return ensure_owner(app.store)


@pytest.fixture
def ws(app, owner):
    """The workspace of a fresh home whose local owner exists."""
    return app.workspace


@pytest.fixture
def make_user(app: App, owner):
    def make(handle: str):
        with app.store.write() as tx:
            user = create_user(tx, handle, findable=True)
        return user, mint_token(app.secret, user["id"])
    return make


# Both stores (SQLite file, throwaway PostgreSQL database): see tests/store_fixtures.py.
# The end of the run says which suites were skipped and why (tests/skip_summary.py).
from skip_summary import pytest_runtest_logreport, pytest_sessionfinish, pytest_terminal_summary  # noqa: E402,F401
from store_fixtures import any_app, new_user, pg_database, pg_url, store_kind  # noqa: E402,F401


@pytest.fixture
def smtp_server():
    """A real SMTP server on loopback (aiosmtpd): the messages it receives, and its `NAVMCP_SMTP_URL`."""
    pytest.importorskip("aiosmtpd")
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    from webproc import free_port

    received: list = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    controller = Controller(Keep(), hostname="127.0.0.1", port=free_port())
    controller.start()
    yield received, f"smtp://127.0.0.1:{controller.port}?from=navmcp@example.org"
    controller.stop()


class _Errors(logging.Handler):
    """Errors the server logs (and would otherwise swallow, e.g. a failed audit write)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


@pytest.fixture(scope="module")
def logged_errors():
    """The error records of navmcp's loggers during a test module (the fuzz suites fail on any)."""
    handler = _Errors()
    logger = logging.getLogger("navmcp")
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def httptools_web(tmp_path_factory):
    """A real `navmcp web` on httptools over the adversarial world, and one of its users' tokens;
    at the end, it must stop cleanly having logged no error."""
    from adversarial import world
    from adversarial.http import WebProcess

    w = world.build(tmp_path_factory.mktemp("httptools-web") / "home")
    srv = WebProcess(w.home, {"NAVMCP_WEB_HTTP": "httptools"})
    yield srv, next(iter(w.tokens.values()))
    assert srv.stop() == 0
    assert not srv.errors(), srv.stderr_text()[-3000:]
