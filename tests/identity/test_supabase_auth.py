"""Supabase Auth access tokens as identities, on both stores: HS256 with the project's JWT secret, and
RS256/ES256 through the project's JWKS, served here by a loopback HTTP server standing in for
`{SUPABASE_URL}/auth/v1/.well-known/jwks.json`. Refusals say why."""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from nav_helpers import add_member
from navmcp.app import App
from navmcp.config import Config
from navmcp.errors import AuthError
from navmcp.identity import mint_token

SECRET = "super-secret-jwt-token-with-at-least-32-characters-long"


def supabase_token(key, alg: str = "HS256", *, sub: str | None = None, aud="authenticated", iss: str | None = None,
                   email: str = "ada@example.com", kid: str | None = None, expires_in: int = 3600, **extra) -> str:
    now = int(time.time())
    claims = {"sub": sub or str(uuid.uuid4()), "aud": aud, "exp": now + expires_in, "iat": now, "role": "authenticated",
              "email": email, **extra}
    if iss:
        claims["iss"] = iss
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid} if kid else None)


@pytest.fixture
def supabase_app(any_app, tmp_path):
    """`any_app`'s store, with the Supabase project's JWT secret configured."""
    config = Config(home=any_app.config.home, database_url=any_app.config.database_url, token=None,
                    supabase_jwt_secret=SECRET)
    app = App(config)
    app.__dict__["store"] = any_app.store  # share the one store (closed by any_app)
    return app


def test_hs256_token_creates_the_user_on_first_sight(supabase_app):
    sub = str(uuid.uuid4())
    token = supabase_token(SECRET, sub=sub, email="ada.lovelace@example.com")
    user = supabase_app.authenticate(token)
    # Never the e-mail address as a name (every member of her studios sees it): her handle instead.
    assert user["id"] == sub and user["handle"] == "ada-lovelace" and user["name"] == "ada-lovelace"
    assert supabase_app.authenticate(token)["id"] == sub  # second sight: the same user
    # The user can work: create a studio and see it.
    ws = supabase_app.workspace
    ws.execute(user, "/", "create_studio", {"handle": "ada", "name": "Ada's"})
    assert "/studios/ada" in ws.page(user, "/").markdown


def test_handles_are_made_unique(supabase_app):
    first = supabase_app.authenticate(supabase_token(SECRET, email="sam@one.example"))
    second = supabase_app.authenticate(supabase_token(SECRET, email="sam@two.example"))
    named = supabase_app.authenticate(supabase_token(SECRET, email="x@y.z", user_metadata={"user_name": "Sam"}))
    assert (first["handle"], second["handle"], named["handle"]) == ("sam", "sam-2", "sam-3")


def test_a_supabase_user_is_not_findable_until_they_choose_and_never_named_by_their_email(supabase_app):
    """A Supabase user without a name was shown by their e-mail address, to anyone who added them
    to a studio by a guessable handle. Signing in makes nobody findable; their name is never their
    address (nor an address they typed as their name)."""
    from navmcp.errors import InvalidActionParams
    from navmcp.identity import Principal, add_user

    ws = supabase_app.workspace
    alice = add_user(supabase_app.store, "alice")
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    lin = supabase_app.authenticate(supabase_token(SECRET, email="lin.chen@example.com"))
    assert (lin["handle"], lin["name"], lin["findable"]) == ("lin-chen", "lin-chen", 0)
    with pytest.raises(InvalidActionParams, match="no such person you can add: @lin-chen"):
        add_member(ws, alice, "/studios/team/members", {"handle": "lin-chen"})
    ws.execute(Principal(lin["id"]), "/whoami", "make_findable", None)
    add_member(ws, alice, "/studios/team/members", {"handle": "lin-chen"})
    members = ws.page(alice, "/studios/team/members")
    assert {m["handle"]: (m["name"], m["role"]) for m in members.data["members"]}["lin-chen"] == ("lin-chen", "member")
    assert "example.com" not in members.markdown
    typed = supabase_app.authenticate(supabase_token(SECRET, email="kim@example.com",
                                                     user_metadata={"full_name": "kim@example.com"}))
    named = supabase_app.authenticate(supabase_token(SECRET, email="x@example.com",
                                                     user_metadata={"full_name": "Ada Lovelace"}))
    assert (typed["name"], named["name"]) == ("kim", "Ada Lovelace")

def test_local_tokens_still_work_beside_supabase(supabase_app):
    from navmcp.identity import add_user

    user = add_user(supabase_app.store, "local")
    assert supabase_app.authenticate(mint_token(supabase_app.secret, user["id"]))["id"] == user["id"]


@pytest.mark.parametrize("token, reason", [
    (lambda: supabase_token("another-projects-secret-that-is-also-32-chars"), "signature is invalid"),
    (lambda: supabase_token(SECRET, aud="someone-else"), "another audience"),
    (lambda: supabase_token(SECRET, expires_in=-60), "expired"),
    (lambda: supabase_token(SECRET * 2, alg="HS512"), "algorithm 'HS512' not accepted"),
    (lambda: "not-a-jwt", "not valid|another audience"),
    (lambda: supabase_token(rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
     "SUPABASE_URL"),
])
def test_bad_supabase_tokens_are_refused_with_a_reason(supabase_app, token, reason):
    with pytest.raises(AuthError, match=reason):
        supabase_app.authenticate(token())


def test_supabase_tokens_are_refused_when_supabase_is_not_configured(any_app):
    with pytest.raises(AuthError, match="no Supabase project is configured"):
        any_app.authenticate(supabase_token(SECRET))
    with pytest.raises(AuthError, match="another audience"):  # not a Supabase token either
        any_app.authenticate(jwt.encode({"sub": "x", "aud": "elsewhere", "exp": int(time.time()) + 60},
                                        any_app.secret, algorithm="HS256"))


@pytest.fixture(scope="module")
def jwks_server():
    """A loopback stand-in for a Supabase project's JWKS endpoint, with an RSA and an EC key."""
    keys = {"rsa-1": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec-1": ec.generate_private_key(ec.SECP256R1())}
    jwks = {"keys": []}
    for kid, key in keys.items():
        algo = jwt.algorithms.RSAAlgorithm if kid.startswith("rsa") else jwt.algorithms.ECAlgorithm
        jwk = json.loads(algo.to_jwk(key.public_key()))
        jwk.update(kid=kid, use="sig", alg="RS256" if kid.startswith("rsa") else "ES256")
        jwks["keys"].append(jwk)
    hits = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            if self.path != "/auth/v1/.well-known/jwks.json":
                self.send_error(404)
                return
            body = json.dumps(jwks).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", keys, hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def jwks_app(any_app, jwks_server):
    url = jwks_server[0]
    app = App(Config(home=any_app.config.home, database_url=any_app.config.database_url, token=None,
                     supabase_url=url))
    app.__dict__["store"] = any_app.store
    return app


@pytest.mark.parametrize("kid, alg", [("rsa-1", "RS256"), ("ec-1", "ES256")])
def test_asymmetric_tokens_verified_through_the_jwks(jwks_app, jwks_server, kid, alg):
    url, keys, hits = jwks_server
    sub = str(uuid.uuid4())
    token = supabase_token(keys[kid], alg, kid=kid, sub=sub, iss=f"{url}/auth/v1", email="grace@example.com")
    user = jwks_app.authenticate(token)
    assert user["id"] == sub and user["handle"] == "grace"
    assert "/auth/v1/.well-known/jwks.json" in hits


def test_jwks_refusals(jwks_app, jwks_server):
    url, keys, hits = jwks_server
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(AuthError, match="signature is invalid"):
        jwks_app.authenticate(supabase_token(impostor, "RS256", kid="rsa-1", iss=f"{url}/auth/v1"))
    with pytest.raises(AuthError, match="not found in the project's JWKS"):
        jwks_app.authenticate(supabase_token(keys["rsa-1"], "RS256", kid="unknown", iss=f"{url}/auth/v1"))
    with pytest.raises(AuthError, match="another project"):
        jwks_app.authenticate(supabase_token(keys["rsa-1"], "RS256", kid="rsa-1", iss="https://other.supabase.co/auth/v1"))
    with pytest.raises(AuthError, match="SUPABASE_JWT_SECRET"):
        jwks_app.authenticate(supabase_token(SECRET, iss=f"{url}/auth/v1"))


@pytest.fixture
def fake_gotrue():
    """A loopback stand-in for a project's Auth API: /otp accepts an email, /verify answers code 123456."""
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            seen.append((self.path.split("?")[0], body, self.headers.get("apikey")))
            if self.path.startswith("/auth/v1/otp"):
                return self.reply(200, {})
            if self.path.startswith("/auth/v1/verify") and body.get("token") == "123456":
                sub = "6f1f1b8e-5d5e-4b43-9a8c-2a4f0d7f3c11"
                token = supabase_token(SECRET, sub=sub, email=body["email"])
                user = {"id": sub, "aud": "authenticated", "role": "authenticated", "email": body["email"],
                        "app_metadata": {}, "user_metadata": {}, "created_at": "2026-01-01T00:00:00Z"}
                return self.reply(200, {"access_token": token, "token_type": "bearer", "expires_in": 3600,
                                        "expires_at": int(time.time()) + 3600, "refresh_token": "r", "user": user})
            return self.reply(403, {"code": 403, "error_code": "otp_expired", "msg": "Token has expired or is invalid"})

        def reply(self, status, payload):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_web_sign_in_with_an_emailed_code(supabase_app, fake_gotrue):
    pytest.importorskip("supabase")
    from navmcp.identity.supabase_signin import SupabaseSignIn

    url, seen = fake_gotrue
    signin = SupabaseSignIn.from_env({"SUPABASE_URL": url, "SUPABASE_ANON_KEY": "anon-key"})
    signin.send_code("lin@example.com")
    assert seen[0][0] == "/auth/v1/otp" and seen[0][1]["email"] == "lin@example.com" and seen[0][2] == "anon-key"
    with pytest.raises(AuthError, match="not accepted"):
        signin.verify_code("lin@example.com", "000000")
    token = signin.verify_code("lin@example.com", "123456")
    user = supabase_app.authenticate(token)  # the access token is an identity like any other
    assert user["handle"] == "lin" and user["id"] == "6f1f1b8e-5d5e-4b43-9a8c-2a4f0d7f3c11"


def test_web_app_signs_people_in_with_an_emailed_code(supabase_app, fake_gotrue, monkeypatch):
    """`navmcp web` with SUPABASE_URL and SUPABASE_ANON_KEY set: email → code → cookie session
    for the Supabase user (created in navmcp on first sight), on either store."""
    pytest.importorskip("supabase")
    import asyncio

    import httpx

    from navmcp.web import create_app

    url, seen = fake_gotrue
    monkeypatch.setenv("SUPABASE_URL", url)
    monkeypatch.setenv("SUPABASE_ANON_KEY", "anon-key")
    web = create_app(supabase_app)

    async def journey():
        transport = httpx.ASGITransport(app=web)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            login = await client.get("/login")
            assert 'action="/login/email"' in login.text
            asked = await client.post("/login/email", data={"email": "lin@example.com", "next": "/whoami"})
            assert asked.status_code == 200 and 'action="/login/code"' in asked.text
            assert seen[-1][0] == "/auth/v1/otp" and seen[-1][1]["email"] == "lin@example.com"
            wrong = await client.post("/login/code", data={"email": "lin@example.com", "code": "000000"})
            assert wrong.status_code == 401 and "not accepted" in wrong.text and "set-cookie" not in wrong.headers
            signed = await client.post("/login/code", data={"email": "lin@example.com", "code": "123456",
                                                            "next": "//evil.example/"})
            assert signed.status_code == 303 and signed.headers["location"] == "/"  # no open redirect
            assert "HttpOnly" in signed.headers["set-cookie"]
            whoami = await client.get("/whoami")
            assert whoami.status_code == 200 and "@lin" in whoami.text

    asyncio.run(journey())


def test_an_invitation_link_signs_a_newcomer_up_through_supabase_auth(supabase_app, fake_gotrue, monkeypatch):
    """On Supabase, an invitation link sends a person with no account to sign in (Supabase Auth
    makes the account on their first code), back to the link, and they join with its button and
    land in the studio. GoTrue here is a stand-in speaking its API to the real `supabase` client:
    no GoTrue server can run on this machine (docs/testing.md)."""
    pytest.importorskip("supabase")
    import asyncio
    import re

    import httpx

    from navmcp.identity import add_user, invitations
    from navmcp.web import create_app

    url, _ = fake_gotrue
    monkeypatch.setenv("SUPABASE_URL", url)
    monkeypatch.setenv("SUPABASE_ANON_KEY", "anon-key")
    alice = add_user(supabase_app.store, "alice")
    ws = supabase_app.workspace
    ws.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    said = ws.execute(alice, "/studios/team/members", "create_invitation", {}).message
    link = "/invite/" + re.search(r"`/invite/([A-Za-z0-9_-]+)`", said).group(1)
    web = create_app(supabase_app)

    async def journey():
        transport = httpx.ASGITransport(app=web)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1",
                                     headers={"origin": "http://127.0.0.1"}) as client:
            page = await client.get(link)
            assert page.status_code == 200 and "Team" in page.text and "Create your account" not in page.text
            signin = re.search(r'href="(/login\?next=[^"]+)"', page.text).group(1)
            assert (await client.get(signin)).status_code == 200
            await client.post("/login/email", data={"email": "lin@example.com", "next": link})
            signed = await client.post("/login/code", data={"email": "lin@example.com", "code": "123456", "next": link})
            assert signed.status_code == 303 and signed.headers["location"] == link  # back to the invitation
            back = await client.get(link)
            assert "Join as @lin" in back.text
            assert "lin" not in {m["handle"] for m in ws.page(alice, "/studios/team/members").data["members"]}
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', back.text).group(1)
            joined = await client.post(link, data={"csrf_token": csrf})
            assert joined.status_code in (302, 303) and joined.headers["location"] == "/studios/team"
            assert (await client.get("/studios/team")).status_code == 200

    asyncio.run(journey())
    assert "lin" in {m["handle"] for m in ws.page(alice, "/studios/team/members").data["members"]}
    assert invitations.offered(supabase_app.store, link.removeprefix("/invite/")) is None  # used up
