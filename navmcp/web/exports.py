"""Exports for people, in their browser session only (never over MCP or with a token: an export
is a person's act, not an agent's): a studio's admin downloads the studio's archive
(`/studios/{h}/export`, navmcp.archive.export), and anyone everything they wrote (`/whoami/export`,
navmcp.archive.personal). GET shows what the archive holds, with a button; its POST (the form's
CSRF token, from this site's page) answers the zip as a download, sent from a temporary file. A
studio's export is a line of its audit; a person's, a line of theirs in no studio.

Anyone else — a token's caller, a member who is not an admin, a stranger — gets the page that does
not exist, as for any page they may not see."""

from __future__ import annotations

import re
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from navmcp.archive import ArchiveError
from navmcp.archive.export import export_studio
from navmcp.archive.personal import export_person
from navmcp.clock import now
from navmcp.web import auth, html
from navmcp.web.renditions import RENDITIONS, error_response
from navmcp.web.request import Request
from navmcp.web.response import HTML_CSP, Download, Response, redirect, text
from navmcp.web.signin import posted_from_this_site
from navmcp.web.site import Site
from navmcp.workspace import write_audit

PERSONAL = "/whoami/export"
STUDIO = re.compile(r"/studios/([a-z0-9][a-z0-9-]{0,39})/export")
NOT_FOUND = "no such page here (or it is not yours to see)"
STUDIO_HOLDS = ["its notes, decisions, commitments, options, votes, comments, replies and their revisions, as JSON lines",
                "its files, each with its SHA-256 in the manifest",
                "every item's page in markdown, as it reads today: readable without navmcp",
                "the handles and names of the people its rows name"]
PERSONAL_HOLDS = ["what you wrote (notes, decisions, commitments, options, comments and their revisions), and your "
                  "votes, answers, joins and reads, in the studios you are in, as JSON lines",
                  "the files you uploaded", "your items' pages in markdown, as they read today", "your account's facts"]


def route(path: str) -> Callable[[Site, Request], Any] | None:
    """The handler of an export's path, or None."""
    if path == PERSONAL:
        return personal
    if STUDIO.fullmatch(path):
        return studio
    return None


async def studio(site: Site, req: Request) -> Response:
    match = STUDIO.fullmatch(req.path)
    assert match is not None
    handle = match.group(1)
    page = {"title": f"Export @{handle}", "back": f"/studios/{handle}/members", "back_label": "Members",
            "lede": "One zip archive of this studio, to keep or to import elsewhere (`navmcp import`). It holds:",
            "holds": STUDIO_HOLDS, "never": "Never in it: sessions, tokens, OAuth grants, invitations, the audit, "
                                            "anyone's inbox."}

    def admin_of(user: dict[str, Any]) -> bool:
        with site.app.store.read(user["id"]) as tx:
            return tx.scalar("SELECT m.role FROM memberships m JOIN studios s ON s.id = m.studio_id"
                             " WHERE s.handle = ? AND m.user_id = ?", (handle, user["id"])) == "admin"

    def write(user: dict[str, Any], out: Path) -> None:
        started = time.perf_counter()
        export_studio(site.app.workspace, handle, out, by=user)
        # The studio's admins see who took a copy of it; "unchanged": an export writes nothing, and
        # PostgreSQL accepts an "ok" line only beside the write it records (audit_tied).
        with site.app.store.write(user["id"], "web") as tx:
            studio_id = tx.scalar("SELECT id FROM studios WHERE handle = ?", (handle,))
            write_audit(tx, user["id"], "web", studio_id, req.path, "export_studio", {}, "unchanged", started)

    return await _export(site, req, page, admin_of, write, handle)


async def personal(site: Site, req: Request) -> Response:
    page = {"title": "Export what you wrote", "back": "/whoami", "back_label": "Who am I",
            "lede": "One zip archive of everything you wrote here. It holds:", "holds": PERSONAL_HOLDS,
            "never": "Never in it: other people's writing, sessions, tokens, the audit, your inbox."}

    def write(user: dict[str, Any], out: Path) -> None:
        started = time.perf_counter()
        export_person(site.app.workspace, user, out)
        # A line of the person's own, in no studio: it is about their own writing, which they could
        # read already, so no studio's admins are told; the operator's audit keeps it.
        with site.app.store.write(user["id"], "web") as tx:
            write_audit(tx, user["id"], "web", None, req.path, "export_person", {}, "unchanged", started)

    return await _export(site, req, page, lambda user: True, write, None)


async def _export(site: Site, req: Request, page: dict[str, Any], allowed: Callable[[dict[str, Any]], bool],
                  write: Callable[[dict[str, Any], Path], Any], handle: str | None) -> Response:
    rendition = req.target.rendition if req.target is not None else "html"
    if req.header("authorization") is not None:  # a token's caller: an agent, never a person's act
        return error_response(rendition, 404, NOT_FOUND)
    session = site.web_session(req)
    if session is None:
        if req.method == "GET":
            return redirect("/login?next=" + quote(req.path, safe="/"))
        return error_response(rendition, 404, NOT_FOUND)
    user = session.user
    if req.method not in ("GET", "HEAD", "POST"):
        return error_response(rendition, 405, "open the page, then press its button", headers=[("allow", "GET, POST")])
    if not allowed(user):
        return error_response(rendition, 404, NOT_FOUND)
    csrf = auth.csrf_token(site.app.secret, session.id)
    if req.method != "POST":
        body = html.render("export.html.j2", {**page, "action": req.path, "csrf": csrf})
        return text(200, body, RENDITIONS["html"], headers=[("content-security-policy", HTML_CSP),
                                                            ("cache-control", "no-store")])
    form = await req.form()
    if not posted_from_this_site(req) or not auth.csrf_ok(site.app.secret, session.id,
                                                           (form.get("csrf_token") or [""])[0]):
        return error_response("html", 403, "the form's CSRF token is missing or wrong: reload the page and press "
                                           "its button again")
    name = f"{handle or user['handle']}-{now()[:10]}.navmcp.zip"
    # Written to a file of its own and sent from it a part at a time (response.Download), which
    # deletes it once sent: memory holds a part of the archive, never the whole of it.
    out = Path(tempfile.gettempdir()) / f"navmcp-export-{secrets.token_hex(8)}.zip"
    try:
        write(user, out)
    except ArchiveError:  # the studio went, or its admin stopped being one, since the page
        return error_response("html", 404, NOT_FOUND)
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return Download(200, b"", "application/zip", [
        ("content-disposition", f'attachment; filename="{name}"'), ("cache-control", "no-store"),
        ("content-security-policy", "sandbox; default-src 'none'")], path=out)
