"""The official MCP Python SDK client (a peer nobody here wrote) in each of its modes — pinned to
2026-07-28, "auto" (which must now negotiate 2026-07-28) and "legacy" (the initialize handshake) —
over both transports: bin/mcp-server over stdio and a real `navmcp web` process's /mcp. One test
body: tools, pages as resources, prompts and completion; what differs between the eras is said
where it differs."""

from __future__ import annotations

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import PromptReference, ResourceTemplateReference  # noqa: E402

from mcp import Client  # noqa: E402
from navmcp.app import App  # noqa: E402
from navmcp.config import Config  # noqa: E402
from navmcp.demo.walkthrough import server_command  # noqa: E402
from navmcp.identity import ensure_owner, mint_token  # noqa: E402
from webproc import navmcp_web  # noqa: E402

MODES = ["2026-07-28", "auto", "legacy"]


@pytest.fixture(scope="module")
def web_server(tmp_path_factory):
    """A `navmcp web` process and a token of its owner."""
    home = tmp_path_factory.mktemp("sdk-eras") / "home"
    app = App(Config(home=home, database_url=None, token=None))
    token = mint_token(app.secret, ensure_owner(app.store)["id"])
    app.store.close()
    with navmcp_web(home) as port:
        yield f"http://127.0.0.1:{port}/mcp", token


def run_client(transport: str, mode: str, home, web_server, script):
    async def main():
        with anyio.fail_after(60):
            if transport == "stdio":
                command = server_command()
                params = StdioServerParameters(command=command[0], args=command[1:],
                                               env={"NAVMCP_HOME": str(home), "NAVMCP_LOG_LEVEL": "WARNING"})
                async with Client(params, mode=mode) as client:
                    return await script(client)
            url, token = web_server
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
                async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                    return await script(client)

    return anyio.run(main)


@pytest.fixture(params=["stdio", "http"])
def transport(request):
    return request.param


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_works_in_every_mode(transport, mode, home, request):
    web_server = request.getfixturevalue("web_server") if transport == "http" else None
    handle = f"sdk-{transport}-{mode.replace('-', '')}"
    modern = mode != "legacy"

    async def script(client: Client):
        assert client.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        if mode == "2026-07-28":  # pinned: no probe was sent (the client made up a discover result), so ask
            discovered = mcp.types.DiscoverResult.model_validate(await client.session.send_discover("2026-07-28"))
            assert discovered.supported_versions == ["2026-07-28"] and discovered.ttl_ms > 0
            client.session.adopt(discovered)
        assert client.server_info.name == "navmcp"
        assert "navigate('/')" in (client.instructions or "")

        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["navigate", "execute_action"]
        if modern:
            assert tools.ttl_ms > 0 and tools.cache_scope == "public"

        home_page = await client.call_tool("navigate", {"url": "/"})
        assert home_page.is_error is False and home_page.structured_content["url"] == "/"
        created = await client.call_tool("execute_action", {"action": "create_studio", "url": "/",
                                                            "params": {"handle": handle, "name": "SDK team"}})
        assert created.is_error is False and created.structured_content["url"] == f"/studios/{handle}"

        # without url: the page navigated to last — where a conversation exists (stdio, a legacy session);
        # a modern HTTP request stands alone and is told to pass url.
        await client.call_tool("navigate", {"url": f"/studios/{handle}"})
        note = await client.call_tool("execute_action", {"action": "create_note",
                                                         "params": {"title": "From the SDK", "body": "hello"}})
        if transport == "http" and modern:
            assert note.is_error is True and "pass `url`" in note.content[0].text
            note = await client.call_tool("execute_action", {"action": "create_note", "url": f"/studios/{handle}",
                                                             "params": {"title": "From the SDK", "body": "hello"}})
        assert note.is_error is False and f"/studios/{handle}/n/" in note.structured_content["url"]
        # an action does not move the page a url-less call means: still the studio
        if not (transport == "http" and modern):
            again = await client.call_tool("execute_action", {"action": "create_note",
                                                              "params": {"title": "Second", "body": "x"}})
            assert again.is_error is False and again.structured_content["url"] != note.structured_content["url"]

        refused = await client.call_tool("execute_action", {"action": "vote", "url": note.structured_content["url"]})
        assert refused.is_error is True and "Available here:" in refused.content[0].text
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        assert unknown.value.code == -32602

        # pages as resources
        templates = await client.list_resource_templates()
        assert "navmcp:///studios/{studio}/n/{item}" in [t.uri_template for t in templates.resource_templates]
        listed = await client.list_resources()
        assert f"navmcp:///studios/{handle}" in [str(r.uri) for r in listed.resources]
        note_uri = "navmcp://" + note.structured_content["url"]
        read = await client.read_resource(note_uri)
        assert read.contents[0].mime_type == "text/markdown" and "From the SDK" in read.contents[0].text
        with pytest.raises(MCPError) as missing:
            await client.read_resource("navmcp:///studios/nobody-here")
        assert missing.value.code == -32602 and missing.value.error.data == {"uri": "navmcp:///studios/nobody-here"}

        # prompts and completion
        prompts = await client.list_prompts()
        assert {"standup", "decide", "what-needs-me", "weekly-review"} <= {p.name for p in prompts.prompts}
        standup = await client.get_prompt("standup", {"studio": handle})
        assert f"/studios/{handle}/cycles/yesterday" in standup.messages[0].content.text
        completed = await client.complete(PromptReference(type="ref/prompt", name="standup"),
                                          {"name": "studio", "value": handle[:6]})
        assert handle in completed.completion.values
        item = note.structured_content["url"].rsplit("/", 1)[1]
        items = await client.complete(ResourceTemplateReference(type="ref/resource",
                                                                uri="navmcp:///studios/{studio}/n/{item}"),
                                      {"name": "item", "value": item[:3]}, context_arguments={"studio": handle})
        assert item in items.completion.values

        whoami = await client.call_tool("navigate", {"url": "/whoami"})
        return whoami.content[0].text

    whoami = run_client(transport, mode, home, web_server, script)
    assert "| Client | mcp |" in whoami  # the SDK's clientInfo, from the handshake or from each request's _meta
