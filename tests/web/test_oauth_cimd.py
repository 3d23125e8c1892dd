"""Client ID Metadata Documents: the client id is the URL of a JSON document that navmcp fetches.
Here the document is served by a loopback server in the test, which navmcp accepts only under
its development setting (NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS=1); every bad document is refused with
`invalid_client` on a page, never by a redirect to a URI the document did not vouch for."""

from __future__ import annotations

import http.server
import json
import threading

import httpx
import pytest

from navmcp.oauth import documents as fetched
from oauthflow import authorization_url, consent, exchange, mcp, pkce
from webclient import WebServer, follow_login_link

REDIRECT = "http://127.0.0.1:9999/callback"


class Documents:
    """A loopback server of client metadata documents: path → (status, body, headers)."""

    def __init__(self):
        answers = self.answers = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                status, body, headers = answers.get(self.path, (404, b"{}", {}))
                self.send_response(status)
                for k, v in {"content-type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def document(self, path: str, **fields) -> str:
        url = self.base + path
        doc = {"client_id": url, "client_name": "Doc Client", "redirect_uris": [REDIRECT],
               "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
               "token_endpoint_auth_method": "none", **fields}
        self.answers[path] = (200, json.dumps(doc).encode(), {})
        return url

    def raw(self, path: str, status: int, body: bytes, **headers) -> str:
        self.answers[path] = (status, body, headers)
        return self.base + path

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def documents():
    docs = Documents()
    yield docs
    docs.close()


@pytest.fixture
def dev(monkeypatch):
    monkeypatch.setenv("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", "1")


def refused_page(browser, client_id: str) -> str:
    reply = browser.get(authorization_url(client_id, pkce()[1]))
    assert reply.status_code == 400 and "location" not in reply.headers, reply.text[:500]
    assert "invalid_client" in reply.text
    return reply.text


def test_a_metadata_document_client_is_allowed_and_gets_tokens(anon, browser, documents, dev):
    client_id = documents.document("/client.json", client_name="Doc Client")
    verifier, challenge = pkce()
    page = browser.get(authorization_url(client_id, challenge))
    assert page.status_code == 200 and "Allow Doc Client" in page.text and client_id in page.text
    back = consent(browser, authorization_url(client_id, challenge))
    tokens = exchange(anon, client_id, back["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    assert mcp(anon, tokens.json()["access_token"]).status_code == 200
    apps = browser.get("/connected-apps").text
    assert "Doc Client" in apps and client_id in apps


def test_loopback_http_client_ids_are_refused_without_the_development_setting(browser, documents, monkeypatch):
    monkeypatch.delenv("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", raising=False)
    client_id = documents.document("/client.json")
    assert "must use https" in refused_page(browser, client_id)


def test_https_client_ids_on_private_or_loopback_addresses_are_refused(browser, monkeypatch):
    monkeypatch.delenv("NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS", raising=False)
    for url in ("https://10.1.2.3/client.json", "https://127.0.0.1/client.json", "https://[::1]/c.json",
                "https://169.254.169.254/latest/meta-data", "https://localhost/client.json"):
        assert "not a public address" in refused_page(browser, url), url


def test_an_unreachable_document_is_invalid_client(browser, dev):
    from webproc import free_port

    assert "could not be fetched" in refused_page(browser, f"http://127.0.0.1:{free_port()}/client.json")


def test_an_oversized_document_is_invalid_client(browser, documents, dev):
    url = documents.raw("/big.json", 200, b'{"x": "' + b"a" * (fetched.MAX_BYTES + 10) + b'"}')
    assert "larger than" in refused_page(browser, url)


def test_a_malformed_document_is_invalid_client(browser, documents, dev):
    for path, body in (("/notjson.json", b"<html>"), ("/list.json", b"[1, 2]")):
        refused_page(browser, documents.raw(path, 200, body))
    refused_page(browser, documents.raw("/gone.json", 404, b"{}"))
    refused_page(browser, documents.raw("/moved.json", 302, b"", location="https://evil.example/c.json"))
    # a document naming another client id, or none of the required fields
    other = documents.base + "/other.json"
    documents.answers["/other.json"] = (200, json.dumps({"client_id": "https://x.example/c.json", "client_name": "X",
                                                         "redirect_uris": [REDIRECT]}).encode(), {})
    assert "not its own URL" in refused_page(browser, other)
    assert "client_name" in refused_page(browser, documents.document("/noname.json", client_name=""))
    assert "plain http is allowed only" in refused_page(browser, documents.document("/badredirect.json",
                                                                  redirect_uris=["http://evil.example/cb"]))


def test_a_redirect_uri_the_document_does_not_list_is_refused(browser, documents, dev):
    client_id = documents.document("/client.json")
    reply = browser.get(authorization_url(client_id, pkce()[1], redirect_uri="http://127.0.0.1:9999/elsewhere"))
    assert reply.status_code == 400 and "location" not in reply.headers


def test_a_document_client_authenticating_with_a_secret_is_refused(browser, documents, dev):
    client_id = documents.document("/secretive.json", token_endpoint_auth_method="client_secret_basic")
    assert "not supported" in refused_page(browser, client_id)


def test_the_cimd_flow_on_a_real_server_process(tmp_path, documents):
    """`navmcp web` with the development setting: authorize with a document's URL as client id,
    exchange, call /mcp, refresh; the same process without the setting refuses it."""
    server = WebServer(tmp_path / "home", env={"NAVMCP_OAUTH_LOOPBACK_CLIENT_IDS": "1"})
    try:
        client_id = documents.document("/agent.json", client_name="Loopback Agent")
        with httpx.Client(base_url=server.base, timeout=30) as browser:
            assert follow_login_link(browser, server.login_link).status_code == 303
            verifier, challenge = pkce()
            back = consent(browser, authorization_url(client_id, challenge))
            assert back["iss"] == server.base
            with httpx.Client(base_url=server.base, timeout=30) as agent:
                tokens = exchange(agent, client_id, back["code"], verifier).json()
                assert mcp(agent, tokens["access_token"]).status_code == 200
                newer = agent.post("/token", data={"grant_type": "refresh_token", "client_id": client_id,
                                                   "refresh_token": tokens["refresh_token"]})
                assert newer.status_code == 200, newer.text
    finally:
        server.stop()
    plain = WebServer(tmp_path / "home2")
    try:
        with httpx.Client(base_url=plain.base, timeout=30) as browser:
            follow_login_link(browser, plain.login_link)
            reply = browser.get(authorization_url(client_id, pkce()[1]))
            assert reply.status_code == 400 and "must use https" in reply.text
    finally:
        plain.stop()
