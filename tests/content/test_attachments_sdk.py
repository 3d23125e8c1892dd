"""Attachments through the official MCP Python SDK client over stdio: one agent attaches a CSV and
a PNG, a second agent (another member) reads both as resources and navigates to the image; a
non-member's agent gets nothing by resource or by URL."""

from __future__ import annotations

import base64

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from nav_helpers import add_member  # noqa: E402
from navmcp.app import App  # noqa: E402
from navmcp.config import Config  # noqa: E402
from navmcp.demo.walkthrough import server_command  # noqa: E402
from navmcp.identity import add_user, ensure_owner, mint_token  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
CSV = "city,votes\nLisbon,3\nBerlin,2\n"


def run_as(home, token, script):
    command = server_command()
    env = {"NAVMCP_HOME": str(home), "NAVMCP_LOG_LEVEL": "WARNING", **({"NAVMCP_TOKEN": token} if token else {})}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(30):
                    await session.initialize()
                    return await script(session)

    return anyio.run(main)


def test_one_agent_attaches_another_reads_a_stranger_gets_nothing(home):
    app = App(Config(home=home, database_url=None, token=None))
    owner = ensure_owner(app.store)
    bob, eve = add_user(app.store, "bob"), add_user(app.store, "eve")
    app.workspace.execute(owner, "/", "create_studio", {"handle": "team", "name": "Team"})
    add_member(app.workspace, owner, "/studios/team/members", {"handle": "bob"})
    note = app.workspace.execute(owner, "/studios/team", "create_note", {"title": "Votes", "body": "see files"}).url
    bob_token, eve_token = mint_token(app.secret, bob["id"]), mint_token(app.secret, eve["id"])
    app.store.close()

    async def attach(session: ClientSession):
        urls = []
        for name, kind, data in (("votes.csv", "text/csv", CSV.encode()), ("dot.png", "image/png", PNG)):
            done = await session.call_tool("execute_action", {"action": "attach", "url": note, "params": {
                "filename": name, "content_type": kind, "data": base64.b64encode(data).decode()}})
            assert done.is_error is False, done.content[0].text
            urls.append(done.structured_content["url"])
        return urls

    csv_url, png_url = run_as(home, None, attach)

    async def read(session: ClientSession):
        csv = (await session.read_resource("navmcp://" + csv_url)).contents[0]
        png = (await session.read_resource("navmcp://" + png_url)).contents[0]
        page = await session.call_tool("navigate", {"url": png_url})
        listing = await session.call_tool("navigate", {"url": note})
        return csv, png, page, listing

    csv, png, page, listing = run_as(home, bob_token, read)
    assert csv.mime_type == "text/csv" and csv.text == CSV
    assert png.mime_type == "image/png" and base64.b64decode(png.blob) == PNG
    assert [c.type for c in page.content] == ["text", "image"] and base64.b64decode(page.content[1].data) == PNG
    assert "## Files (2)" in listing.content[0].text and "votes.csv" in listing.content[0].text

    async def stranger(session: ClientSession):
        for url in (csv_url, png_url):
            with pytest.raises(MCPError, match="Resource not found"):
                await session.read_resource("navmcp://" + url)
            seen = await session.call_tool("navigate", {"url": url})
            assert seen.is_error is True and "no page" in seen.content[0].text
            assert CSV not in seen.content[0].text
        return True

    assert run_as(home, eve_token, stranger)
