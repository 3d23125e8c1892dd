"""Token attacks: every forged, stale or foreign token is refused with a clear reason, through the
real tools layer and the real stdio server, and never falls back to another identity (the
tokenless local owner in particular)."""

from __future__ import annotations

import base64
import json
import subprocess
import time

import jwt
import pytest

from adversarial import figures, world
from adversarial.drivers import ROOT, StdioProcess
from navmcp.identity import AUDIENCE, ISSUER, mint_token
from navmcp.mcp.tools import Session


def _claims(sub: str, **over) -> dict:
    now = int(time.time())
    return {"sub": sub, "aud": AUDIENCE, "iss": ISSUER, "iat": now, "nbf": now, "exp": now + 3600, **over}


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _tamper(token: str, **changes) -> str:
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return ".".join([header, _b64({**claims, **changes}), signature])


def attacks(w: world.World, secret: bytes) -> dict[str, tuple[str, str]]:
    """name → (token, a fragment the refusal must contain)."""
    member, admin = w.users["member"]["id"], w.users["admin"]["id"]
    now = int(time.time())
    return {
        "alg none": (jwt.encode(_claims(admin), None, algorithm="none"), "algorithm not accepted"),
        "alg none, empty signature kept": (_b64({"alg": "none", "typ": "JWT"}) + "." + _b64(_claims(admin)) + ".",
                                           "algorithm not accepted"),
        "alg HS512 with the right key": (jwt.encode(_claims(admin), secret, algorithm="HS512"), "algorithm not accepted"),
        "wrong key": (jwt.encode(_claims(admin), b"x" * 32, algorithm="HS256"), "signature is invalid"),
        "expired": (jwt.encode(_claims(member, iat=now - 7200, nbf=now - 7200, exp=now - 3600), secret,
                               algorithm="HS256"), "expired"),
        "not yet valid": (jwt.encode(_claims(member, nbf=now + 3600, iat=now + 3600), secret, algorithm="HS256"),
                          "not yet valid"),
        "wrong audience": (jwt.encode(_claims(member, aud="someone-else"), secret, algorithm="HS256"), "audience"),
        "no audience": (jwt.encode({k: v for k, v in _claims(member).items() if k != "aud"}, secret,
                                   algorithm="HS256"), "'aud'"),
        "no expiry": (jwt.encode({k: v for k, v in _claims(member).items() if k != "exp"}, secret,
                                 algorithm="HS256"), "'exp'"),
        "tampered subject": (_tamper(mint_token(secret, member), sub=admin), "signature is invalid"),
        "tampered expiry": (_tamper(mint_token(secret, member, days=-1), exp=now + 10**6), "signature is invalid"),
        "unknown subject": (jwt.encode(_claims("nobody-here"), secret, algorithm="HS256"), "does not exist"),
        "garbage": ("not-a-jwt", "not valid"),
        "empty string": ("", "token is empty"),
        "huge": ("a" * 200_000, "not valid"),
    }


@pytest.fixture(scope="module")
def adv_world(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("tokens") / "home")


def _count_writes(app) -> int:
    with app.store.read() as tx:
        return tx.scalar("SELECT count(*) FROM audit WHERE outcome = 'ok'")


def test_token_attacks_are_refused_through_the_tools_layer(adv_world):
    app = adv_world.app()
    try:
        cases = attacks(adv_world, app.secret)
        before = _count_writes(app)
        for name, (token, reason) in cases.items():
            session = Session(app, token)
            for tool, args in (("navigate", {"url": "/whoami"}),
                               ("execute_action", {"action": "create_studio", "url": "/",
                                                   "params": {"handle": "pwned", "name": "P"}})):
                result = session.call_tool(tool, args)
                text = result["content"][0]["text"]
                assert result["isError"] is True, f"{name}: {tool} accepted: {text[:200]}"
                assert text.startswith("authentication failed: ") and reason in text, f"{name}: {text}"
                assert "@" not in text, f"{name}: the refusal names a user: {text}"
                figures.add("tokens.attacks_tried")
        assert _count_writes(app) == before
    finally:
        app.store.close()


def test_deleted_user_token_is_refused(adv_world, tmp_path):
    w = world.copy(adv_world, tmp_path / "home")
    env = {"NAVMCP_HOME": str(w.home), "PATH": "/usr/bin:/bin"}
    token = w.tokens["member"]
    process = StdioProcess({**w.env("member")})
    try:
        process.initialize()
        assert process.call("navigate", url="/whoami")["isError"] is False
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "navmcp"), "user", "delete", "member"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        # The running session notices at its next call: tokens are checked on every call.
        result = process.call("navigate", url="/whoami")
        assert result["isError"] is True and "does not exist (deleted?)" in result["content"][0]["text"]
    finally:
        assert process.close() == 0
    app = w.app()
    try:
        result = Session(app, token).call_tool("execute_action", {"action": "add_comment", "url": w.urls["note"],
                                                                   "params": {"body": "ghost"}})
        assert result["isError"] is True and "deleted" in result["content"][0]["text"]
        # The handle can't be reused to resurrect the account, and the owner can't be deleted.
        again = subprocess.run([str(ROOT / ".venv" / "bin" / "navmcp"), "user", "delete", "member"], env=env,
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 1 and "no user" in again.stderr
    finally:
        app.store.close()
    figures.add("tokens.attacks_tried")


def test_owner_cannot_be_deleted(tmp_path):
    env = {"NAVMCP_HOME": str(tmp_path / "home"), "NAVMCP_OWNER": "boss", "PATH": "/usr/bin:/bin"}
    navmcp = str(ROOT / ".venv" / "bin" / "navmcp")
    subprocess.run([navmcp, "user", "add", "someone"], env=env, check=True, capture_output=True, timeout=60)
    done = subprocess.run([navmcp, "user", "delete", "boss"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "local owner" in done.stderr


@pytest.mark.parametrize("attack", ["alg none", "wrong key", "expired", "tampered subject"])
def test_bad_token_over_stdio_is_not_the_owner(adv_world, attack):
    """With a bad NAVMCP_TOKEN the stdio server refuses every call; it never acts as the local owner."""
    app = adv_world.app()
    token, reason = attacks(adv_world, app.secret)[attack]
    app.store.close()
    process = StdioProcess({**adv_world.env(None), "NAVMCP_TOKEN": token})
    try:
        process.initialize()
        result = process.call("navigate", url="/whoami")
        assert result["isError"] is True and reason in result["content"][0]["text"]
        result = process.call("execute_action", action="create_studio", url="/", params={"handle": "x1", "name": "x"})
        assert result["isError"] is True
    finally:
        assert process.close() == 0
    figures.add("tokens.stdio_attacks")


@pytest.mark.parametrize("content,reason", [(b"", "is empty"), (b"\n", "is empty"), (b"abc123", "too short")])
def test_regression_empty_or_short_secret_is_refused(tmp_path, content, reason):
    """Regression: the secret was created with O_EXCL and then written, so a crash in between left an
    empty file; every later call then died with an internal error (PyJWT refuses empty keys), and a
    short secret would have been used as a weak key. It is now written atomically (temporary file,
    then link), and an empty or short one is refused with a message saying what to do."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret").write_bytes(content)
    app = world.App(world.Config(home=home, database_url=None, token=None))
    try:
        for token in (None, "x.y.z"):
            result = Session(app, token).call_tool("navigate", {"url": "/"})
            text = result["content"][0]["text"]
            assert result["isError"] is True and reason in text and "delete it" in text, text
    finally:
        if "store" in app.__dict__:
            app.store.close()


def test_secret_is_created_whole_and_private(tmp_path):
    from navmcp.identity import load_secret

    home = tmp_path / "home"
    first = load_secret(home)
    assert len(first) == 64 and load_secret(home) == first
    assert (home / "secret").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in home.iterdir()] == ["secret"]  # no temporary file left behind
