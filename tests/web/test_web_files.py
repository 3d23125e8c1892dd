"""Attachments in the web app: a file's bytes checked as its page is and sent inert (type,
`nosniff`, `Content-Disposition`, a sandboxing CSP); in Chromium, a person sees the image inline,
downloads the CSV, and an HTML file uploaded as text/plain runs nothing."""

from __future__ import annotations

import base64
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import httpx
import pytest

from nav_helpers import accepts_at
from navmcp.identity import add_user, mint_token
from webclient import Client

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
CSV = b"city,votes\nLisbon,3\nBerlin,2\n"
HTML = b"<html><body><script>window.pwned = 1; alert('ran')</script><h1 id=x>owned</h1></body></html>"


def png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG, red pixels, that a browser decodes."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def attach(http, url: str, filename: str, content_type: str, data: bytes) -> str:
    reply = http.post(f"{url}/actions/attach", json={"filename": filename, "content_type": content_type,
                                                    "data": base64.b64encode(data).decode()})
    assert reply.status_code == 200, reply.text
    return reply.json()["url"]


def _studio(http) -> str:
    assert http.post("/actions/create_studio", json={"handle": "team", "name": "Team"}).status_code == 200
    reply = http.post("/studios/team/actions/create_note", json={"title": "Votes", "body": "see the files"})
    return reply.json()["url"]


def test_a_files_bytes_are_sent_inert_and_only_to_members(api, app, web):
    note = _studio(api)
    image = attach(api, note, "red.png", "image/png", png())
    sheet = attach(api, note, "votes.csv", "text/csv", CSV)
    page = attach(api, note, "page.html", "text/plain", HTML)
    shown = api.get(image + "?raw=1")
    assert shown.status_code == 200 and shown.content == png()
    assert shown.headers["content-type"] == "image/png"
    assert shown.headers["content-disposition"].startswith("inline; filename=\"red.png\"")
    assert shown.headers["x-content-type-options"] == "nosniff"
    assert shown.headers["content-security-policy"].startswith("sandbox; default-src 'none'")
    down = api.get(sheet + "?download=1")
    assert down.content == CSV and down.headers["content-type"] == "text/csv; charset=utf-8"
    assert down.headers["content-disposition"] == "attachment; filename=\"votes.csv\"; filename*=UTF-8''votes.csv"
    html = api.get(page + "?raw=1")  # raw, but not an image: a download, as plain text, sandboxed
    assert html.headers["content-type"] == "text/plain; charset=utf-8"
    assert html.headers["content-disposition"].startswith("attachment;")
    assert "sandbox" in html.headers["content-security-policy"]
    as_page = api.get(page)  # its page shows it as text, escaped
    assert "&lt;script&gt;window.pwned" in as_page.text and "<script>window.pwned" not in as_page.text
    listing = api.get(note).text
    assert f'<img class="thumb" src="{image}?raw=1"' in listing and f"{sheet}?download=1" in listing
    eve = add_user(app.store, "eve")
    stranger = Client(web, {"Authorization": f"Bearer {mint_token(app.secret, eve['id'])}"})
    try:
        for url in (image + "?raw=1", sheet + "?download=1", sheet, image.rsplit("/", 1)[0] + "/zzzzzzzz?raw=1"):
            refused = stranger.get(url)
            assert refused.status_code == 404 and CSV not in refused.content and png() not in refused.content
    finally:
        stranger.close()
    assert api.get(note.replace("/n/", "/d/") + "/files/" + image.rsplit("/", 1)[1] + "?raw=1").status_code == 404


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_in_chromium_the_image_shows_the_csv_downloads_and_uploaded_html_runs_nothing(server, tmp_path):
    from playwright.sync_api import sync_playwright

    from test_web_pages_browser import check_layout

    def navmcp(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "navmcp", *args], env=server.env, capture_output=True,
                              text=True, check=True).stdout.strip()

    navmcp("user", "add", "alice")
    agent = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.token()}"})
    note = _studio(agent)
    assert agent.post("/studios/team/members/actions/add_member", json={"handle": "alice"}).status_code == 200
    accepts_at(server.home, "alice")
    image = attach(agent, note, "red.png", "image/png", png())
    sheet = attach(agent, note, "votes.csv", "text/csv", CSV)
    page_file = attach(agent, note, "page.html", "text/plain", HTML)
    wide = attach(agent, note, "wide.txt", "text/plain", b"unbroken-" * 60)
    agent.close()
    link = navmcp("login-link", "alice", "--base-url", server.base)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            context = browser.new_context(accept_downloads=True)
            page = context.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(link)
            page.get_by_role("button", name="Sign in as @alice").click()
            page.wait_for_load_state()
            page.goto(server.base + note)
            thumb = page.locator("img.thumb")
            thumb.wait_for()
            page.wait_for_function("() => document.querySelector('img.thumb').complete")
            assert page.evaluate("document.querySelector('img.thumb').naturalWidth") == 3  # shown, decoded
            with page.expect_download() as got:
                page.locator(f'a[href="{sheet}?download=1"]').click()
            download = got.value
            assert download.suggested_filename == "votes.csv"
            assert Path(download.path()).read_bytes() == CSV
            page.goto(server.base + page_file)  # the file's page: the HTML as text
            assert "<script>window.pwned" in page.locator("pre.file-text").inner_text()
            assert page.evaluate("window.pwned") is None
            with page.expect_download():  # opened directly: a download, never a page of this origin
                try:
                    page.goto(server.base + page_file + "?raw=1")
                except Exception as e:  # noqa: BLE001 - Chromium reports a navigation that became a download
                    assert "Download is starting" in str(e)
            page.goto(server.base + image + "?raw=1")  # an image opened directly is an image, sandboxed
            assert page.evaluate("window.pwned") is None and page.evaluate("document.contentType") == "image/png"
            assert dialogs == []
            page.set_viewport_size({"width": 390, "height": 900})  # a long line fits a phone's width
            page.goto(server.base + wide)
            assert "unbroken-unbroken" in page.locator("pre.file-text").inner_text()
            check_layout(page, "file", 390)
        finally:
            browser.close()
