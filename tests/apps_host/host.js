// The test host's bridge for tests/mcp/test_views_browser.py: the MCP Apps SDK's own AppBridge and
// PostMessageTransport (npm @modelcontextprotocol/ext-apps), bundled by `make` into
// .mcp-apps/host.js for a page in Chromium. Nothing here imitates a host: it only exposes them.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.McpApps = { AppBridge, PostMessageTransport };
