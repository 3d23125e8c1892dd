"""navmcp over HTTP: the web app for people (HTML, markdown and JSON renditions of every page, actions as
forms, login links) and MCP over Streamable HTTP for remote agents, in one ASGI application.

Modules: `app` (the ASGI app, routing, renditions, the action API), `html` (HTML pages and forms from
action schemas), `auth` (login links, cookie sessions, CSRF, Bearer tokens), `mcp_http` (`/mcp`).
"""

from navmcp.web.app import WebApp, create_app

__all__ = ["WebApp", "create_app"]
