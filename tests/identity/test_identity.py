"""Identity: the CLI's tokens, the secret file, refused tokens, and studios seen only by members."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import jwt
import pytest

from nav_helpers import add_member, text_of
from navmcp.app import App
from navmcp.config import Config
from navmcp.demo.walkthrough import StdioClient
from navmcp.errors import AuthError, NotFound
from navmcp.identity import AUDIENCE, mint_token, verify_token


def cli(home, *args, env=None, umask=None):
    full = {**os.environ, "NAVMCP_HOME": str(home), **(env or {})}
    full.pop("NAVMCP_TOKEN", None) if "NAVMCP_TOKEN" not in (env or {}) else None
    return subprocess.run([sys.executable, "-m", "navmcp", *args], capture_output=True, env=full, timeout=30,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def test_token_prints_only_the_token_and_the_secret_is_0600(tmp_path):
    home = tmp_path / "home"
    added = cli(home, "user", "add", "bob", "--name", "Bob B", umask=0)
    assert added.returncode == 0 and added.stdout == b"" and b"@bob" in added.stderr
    out = cli(home, "token", "bob", env={"NAVMCP_LOG_LEVEL": "DEBUG"})
    assert out.returncode == 0
    token = out.stdout.decode()
    assert token.endswith("\n") and token.count("\n") == 1
    token = token.strip()
    assert token.count(".") == 2 and " " not in token
    secret = home / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600  # even though the umask was 0
    assert verify_token(secret.read_bytes().strip(), token) == (jwt.decode(token, options={"verify_signature": False})["sub"], None)
    claims = jwt.decode(token, secret.read_bytes().strip(), algorithms=["HS256"], audience=AUDIENCE)
    assert claims["aud"] == AUDIENCE and claims["exp"] > time.time() + 29 * 86400
    # The token acts as bob.
    whoami = cli(home, "get", "/whoami", env={"NAVMCP_TOKEN": token})
    assert whoami.returncode == 0 and b"| Handle | @bob |" in whoami.stdout


def test_token_for_an_unknown_user_prints_nothing(tmp_path):
    out = cli(tmp_path / "home", "token", "nobody")
    assert out.returncode == 1 and out.stdout == b"" and b"no user 'nobody'" in out.stderr


def test_user_add_refuses_bad_and_duplicate_handles(tmp_path):
    home = tmp_path / "home"
    assert cli(home, "user", "add", "Bad Handle").returncode == 1
    assert cli(home, "user", "add", "ann").returncode == 0
    dup = cli(home, "user", "add", "ann")
    assert dup.returncode == 1 and b"already exists" in dup.stderr and dup.stdout == b""
    # a display name is one line, as the actions' Name takes it
    for bad in ("two\nlines", "\u202eeman", "x" * 101):
        refused = cli(home, "user", "add", "bea", "--name", bad)
        assert refused.returncode == 1 and b"invalid name" in refused.stderr
    assert cli(home, "user", "add", "bea", "--name", "  Bea \u00d6 ").returncode == 0


def test_cli_refuses_what_it_cannot_honour_with_one_line(tmp_path):
    """Each of these ended in a traceback, a dead link or token, or a wrong store: a junk database
    URL was read as the embedded store by `user add` and as a hosted one by `get`; nan/inf/negative
    days or minutes and out-of-range ports were taken; a deleted handle was to be re-added."""
    home = tmp_path / "home"
    for args in (["token", "owner", "--days", "nan"], ["token", "owner", "--days", "-1"],
                 ["login-link", "owner", "--minutes", "inf"], ["web", "--port", "99999"], ["demo", "--port", "0"]):
        out = cli(home, *args)
        assert out.returncode == 2 and out.stdout == b"" and b"Traceback" not in out.stderr, args
    for args in (["user", "add", "zed"], ["get", "/"], ["token", "zed"]):
        out = cli(home, *args, env={"NAVMCP_DATABASE_URL": "mysql://x/y"})
        assert out.returncode == 1 and out.stdout == b"" and b"is not a postgresql:// URL" in out.stderr, (args, out.stderr)
    assert not (home / "navmcp.db").exists()
    # A server that refuses: named with its reason (the pool waited 30 s, then raised PoolTimeout,
    # which gives none).
    out = cli(home, "user", "add", "zed", env={"NAVMCP_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"})
    assert out.returncode == 1 and b"cannot connect to PostgreSQL" in out.stderr and b"Traceback" not in out.stderr
    assert b"refused" in out.stderr.lower() and b"PoolTimeout" not in out.stderr, out.stderr
    assert cli(home, "user", "add", "bob").returncode == 0 and cli(home, "user", "delete", "bob").returncode == 0
    out = cli(home, "token", "bob")
    assert out.returncode == 1 and out.stdout == b"" and b"@bob's account was deleted" in out.stderr and b"user add" not in out.stderr


def test_a_home_that_is_a_file_is_named_not_a_traceback_or_an_internal_error(tmp_path):
    home = tmp_path / "home"
    home.write_text("not a directory")
    out = cli(home, "get", "/")
    assert out.returncode == 1 and out.stdout == b"" and b"Traceback" not in out.stderr
    assert b"cannot use" in out.stderr and b"NAVMCP_HOME" in out.stderr
    with StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": None, "NAVMCP_DATABASE_URL": None}) as agent:
        agent.initialize()
        result = agent.navigate("/")
        assert result["isError"] is True and "NAVMCP_HOME" in text_of(result)


def test_opening_a_migrated_database_does_not_wait_for_another_writer(tmp_path):
    """Every open took the write lock once per migration, applied or not: a reader (`navmcp get`,
    a server's first call) queued behind any other process's write transaction."""
    import sqlite3

    home = tmp_path / "home"
    assert cli(home, "get", "/").returncode == 0  # creates and migrates the file
    writer = sqlite3.connect(home / "navmcp.db", isolation_level=None, timeout=0)
    writer.execute("BEGIN IMMEDIATE")
    try:  # the writer holds its lock until `get` is done: had `get` needed it, it would have failed
        out = cli(home, "get", "/")
        assert out.returncode == 0 and b"# Home" in out.stdout
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_get_with_a_bad_token_is_refused_not_downgraded(tmp_path):
    home = tmp_path / "home"
    owner_page = cli(home, "get", "/whoami")
    assert owner_page.returncode == 0
    out = cli(home, "get", "/whoami", env={"NAVMCP_TOKEN": "not-a-token"})
    assert out.returncode == 1 and out.stdout == b""
    assert b"token is not valid" in out.stderr


# --- token checks, directly -----------------------------------------------------------------------


@pytest.fixture
def bob(make_user):
    return make_user("bob")


def forge(secret: bytes, **claims) -> str:
    now = int(time.time())
    base = {"sub": "x", "aud": AUDIENCE, "iss": "navmcp", "iat": now, "nbf": now, "exp": now + 3600}
    base.update(claims)
    return jwt.encode({k: v for k, v in base.items() if v is not None}, secret, algorithm="HS256")


def test_a_good_token_acts_as_its_user(app, bob):
    user, token = bob
    assert app.authenticate(token)["id"] == user["id"]


@pytest.mark.parametrize("case,reason", [
    ("garbage", "token is not valid"),
    ("other_secret", "signature is invalid"),
    ("expired", "token expired"),
    ("wrong_audience", "another audience"),
    ("no_audience", "lacks the 'aud' claim"),
    ("no_expiry", "lacks the 'exp' claim"),
    ("future", "not yet valid"),
    ("alg_none", "not accepted"),
    ("unknown_user", "does not exist"),
    ("empty", "token is empty"),
])
def test_bad_tokens_are_refused_with_a_reason(app, bob, case, reason):
    user, _ = bob
    uid = user["id"]
    token = {
        "garbage": "abc.def.ghi",
        "other_secret": forge(b"another secret, long enough for HS256 keys", sub=uid),
        "expired": forge(app.secret, sub=uid, exp=int(time.time()) - 10),
        "wrong_audience": forge(app.secret, sub=uid, aud="someone-else"),
        "no_audience": forge(app.secret, sub=uid, aud=None),
        "no_expiry": forge(app.secret, sub=uid, exp=None),
        "future": forge(app.secret, sub=uid, nbf=int(time.time()) + 3600),
        "alg_none": jwt.encode({"sub": uid, "aud": AUDIENCE, "exp": int(time.time()) + 60}, None, algorithm="none"),
        "unknown_user": forge(app.secret, sub="nosuchuser"),
        "empty": "",
    }[case]
    with pytest.raises(AuthError, match=reason):
        app.authenticate(token)


def test_a_deleted_users_token_is_refused(app, bob):
    user, token = bob
    with app.store.write() as tx:
        tx.execute("UPDATE users SET deleted_at = '2026-01-01T00:00:00Z' WHERE id = ?", (user["id"],))
    with pytest.raises(AuthError, match="does not exist"):
        app.authenticate(token)


def test_a_hosted_store_requires_a_token(home):
    app = App(Config(home=home, database_url="postgresql://127.0.0.1:1/none", token=None))
    with pytest.raises(AuthError, match="token is required"):
        app.authenticate(None)


def test_the_server_refuses_a_bad_token_and_never_acts_as_the_owner(app, owner, home):
    expired = mint_token(app.secret, owner["id"], days=-1)
    for token in ("garbage", expired):
        with StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": token}) as client:
            assert client.initialize()["result"]["serverInfo"]["name"] == "navmcp"  # the session still opens
            for result in (client.navigate("/whoami"),
                           client.act("create_studio", "/", handle="sneaky", name="Sneaky")):
                assert result["isError"] is True
                assert text_of(result).startswith("authentication failed: ")
                assert owner["handle"] not in text_of(result)
    with app.store.read() as tx:
        assert tx.one("SELECT 1 FROM studios WHERE handle = 'sneaky'") is None


# --- studios are private to their members ---------------------------------------------------------


def test_users_see_only_their_studios(app, owner, make_user):
    ws = app.workspace
    ann, _ = make_user("ann")
    ben, _ = make_user("ben")
    ws.execute(ann, "/", "create_studio", {"handle": "anns", "name": "Ann's"})
    note = ws.execute(ann, "/studios/anns", "create_note", {"title": "Ann only", "body": "x"}).url
    ws.execute(ben, "/", "create_studio", {"handle": "bens", "name": "Ben's"})
    assert "Ann's" not in ws.page(ben, "/").markdown and "Ben's" in ws.page(ben, "/").markdown
    assert "Ann's" not in ws.page(ben, "/whoami").markdown

    def not_found(url):
        with pytest.raises(NotFound) as e:
            ws.page(ben, url)
        return e.value.message

    for real, fake in (("/studios/anns", "/studios/nope"), (note, note.replace("anns", "nope")),
                       ("/studios/anns/members", "/studios/nope/members"),
                       ("/studios/anns/audit", "/studios/nope/audit")):
        assert not_found(real) == not_found(fake).replace(fake, real)
    with pytest.raises(NotFound):
        ws.execute(ben, note, "add_comment", {"body": "hi"})
    with pytest.raises(NotFound):
        add_member(ws, ben, "/studios/anns/members", {"handle": "ben", "role": "admin"})


@pytest.mark.parametrize("handle", ["bob\n", "Bob", "-bob", "a" * 33, "bo b", ""])
def test_bad_handles_are_refused(app, owner, handle):
    from navmcp.errors import NavError
    from navmcp.identity import create_user

    with pytest.raises(NavError, match="invalid handle"):
        with app.store.write() as tx:
            create_user(tx, handle, findable=True)


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_navmcp_token_is_refused_not_the_local_owner(tmp_path, empty):
    """Issue 24, item 14: `NAVMCP_TOKEN=` (set, to nothing) acted as the local owner, silently."""
    home = tmp_path / "home"
    out = cli(home, "get", "/whoami", env={"NAVMCP_TOKEN": empty})
    assert out.returncode == 1 and out.stdout == b"" and b"token is empty" in out.stderr
    with StdioClient(env={"NAVMCP_HOME": str(home), "NAVMCP_TOKEN": empty, "NAVMCP_DATABASE_URL": None}) as agent:
        agent.initialize()
        page = agent.navigate("/whoami")
        assert page["isError"] is True and "token is empty" in text_of(page)
        made = agent.act("create_studio", url="/", handle="mine", name="Mine")
        assert made["isError"] is True and "token is empty" in text_of(made)
    assert cli(home, "get", "/whoami").returncode == 0  # unset: the local owner, as before


def test_an_empty_token_is_refused_on_both_stores(any_app):
    from navmcp.mcp.tools import Session

    config = Config.from_env({"NAVMCP_HOME": str(any_app.config.home), "NAVMCP_TOKEN": "",
                              **({"NAVMCP_DATABASE_URL": any_app.config.database_url} if not any_app.embedded else {})})
    assert config.token == ""
    app = App(config)
    try:
        result = Session(app, config.token).call_tool("navigate", {"url": "/whoami"})
        assert result["isError"] is True and "token is empty" in text_of(result)
        with pytest.raises(AuthError, match="token is empty"):
            app.authenticate(config.token)
    finally:
        if "store" in app.__dict__:
            app.store.close()


def test_user_add_reads_a_handle_and_a_name_as_they_look(tmp_path):
    """Issue 24, item 9: a fullwidth or zero-width-spaced handle is the handle it looks like, and a
    name is stored without its invisible characters."""
    home = tmp_path / "home"
    added = cli(home, "user", "add", "\uff43\uff41\uff52\u200b\uff4f\uff4c", "--name", "Ca\u00adrol\ufeff")
    assert added.returncode == 0 and b"@carol" in added.stderr, added.stderr
    assert cli(home, "user", "add", "carol").returncode == 1  # the same handle
    app = App(Config(home=home, database_url=None, token=None))
    try:
        with app.store.read() as tx:
            assert tx.one("SELECT handle, name FROM users WHERE handle = 'carol'") == {"handle": "carol", "name": "Carol"}
    finally:
        app.store.close()
