"""navmcp over HTTP: the web app for people (HTML, markdown and JSON renditions of every page,
actions as forms, sign-in) and MCP over Streamable HTTP for remote agents, in one ASGI
application made by `create_app`.

A request goes down through these modules: `app` (the ASGI application: one request's way
through) → `renditions` (what it names, in which rendition it is answered, the error bodies) →
`origins` and `limits` (checks, once) → `routing` (the route table) → a handler: `pages`, `actions`
(the action API and forms), `signin`, `mcp_http` (`/mcp`), `events` (live pages), `static`, or
`oauth_endpoints`. They share a `site.Site` (the app, `tokens`, `auth`'s cookie sessions,
`limits`, live streams); `workers` runs handlers in threads; `request` and `response` are the
HTTP values; `html` renders pages for people (`forms` their actions, `words` their wording,
`assets` the static files), `markdown` what they write, `sse` event streams; `server` runs uvicorn,
holding each connection to `connections`' bounds and answering a whole `POST /mcp` `at_once`.
"""

from navmcp.web.app import WebApp, create_app

__all__ = ["WebApp", "create_app"]
