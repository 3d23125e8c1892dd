"""The official MCP Python SDK client (a peer nobody here wrote) drives bin/mcp-server over stdio."""

from __future__ import annotations

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from navmcp.demo.walkthrough import server_command  # noqa: E402


def run_with_sdk(home, script):
    command = server_command()
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"NAVMCP_HOME": str(home), "NAVMCP_LOG_LEVEL": "WARNING"})

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(30):
                    return await script(session)

    return anyio.run(main)


def test_sdk_lists_navigates_and_executes(home):
    async def script(session: ClientSession):
        init = await session.initialize()
        assert init.server_info.name == "navmcp"
        assert init.protocol_version == "2025-11-25"
        assert "navigate('/')" in (init.instructions or "")
        await session.send_ping()

        tools = (await session.list_tools()).tools
        by_name = {t.name: t for t in tools}
        assert set(by_name) == {"navigate", "execute_action"}
        assert by_name["navigate"].annotations.read_only_hint is True
        assert by_name["navigate"].annotations.idempotent_hint is True
        assert by_name["execute_action"].annotations.destructive_hint is True
        assert by_name["navigate"].output_schema["required"] == ["url", "title", "actions"]

        # call_tool validates structuredContent against the tool's outputSchema; it raises if it doesn't fit.
        home_page = await session.call_tool("navigate", {"url": "/"})
        assert home_page.is_error is False
        assert home_page.structured_content["url"] == "/"
        assert [a["name"] for a in home_page.structured_content["actions"]] == ["create_studio"]
        assert "## Available actions" in home_page.content[0].text

        created = await session.call_tool("execute_action", {"action": "create_studio", "url": "/",
                                                             "params": {"handle": "sdk", "name": "SDK team"}})
        assert created.is_error is False
        assert created.structured_content["ok"] is True and created.structured_content["url"] == "/studios/sdk"

        note = await session.call_tool("execute_action", {"action": "create_note", "url": "/studios/sdk",
                                                          "params": {"title": "From the SDK", "body": "hello"}})
        note_url = note.structured_content["url"]
        page = await session.call_tool("navigate", {"url": note_url})
        assert page.structured_content["title"] == "From the SDK" and "hello" in page.content[0].text

        # without url: the session's current page (the note)
        comment = await session.call_tool("execute_action", {"action": "add_comment", "params": {"body": "hi"}})
        assert comment.is_error is False and comment.structured_content["url"] == note_url

        refused = await session.call_tool("execute_action", {"action": "vote", "url": note_url,
                                                             "params": {"votes": []}})
        assert refused.is_error is True and "Available here:" in refused.content[0].text

        # The SDK's validator is live: content that misses the schema would have been rejected.
        from mcp import types

        bogus = types.CallToolResult(content=[], structured_content={"url": "/"})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await session.validate_tool_result("navigate", bogus)
        await session.validate_tool_result("execute_action", created)

        missing = await session.call_tool("navigate", {})
        assert missing.is_error is True and "'url'" in missing.content[0].text

        whoami = await session.call_tool("navigate", {"url": "/whoami"})
        return whoami.content[0].text

    whoami = run_with_sdk(home, script)
    assert "| Client | mcp |" in whoami  # the SDK's default clientInfo.name


def test_sdk_sees_protocol_errors_as_errors(home):
    from mcp.shared.exceptions import MCPError  # the SDK's error type for JSON-RPC errors

    async def script(session: ClientSession):
        await session.initialize()
        with pytest.raises(MCPError) as e:
            await session.call_tool("no_such_tool", {})
        assert e.value.code == -32602 and "no_such_tool" in str(e.value)
        return True

    assert run_with_sdk(home, script)
