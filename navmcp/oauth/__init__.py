"""navmcp as an OAuth 2.1 authorization server for its own `/mcp` (docs/oauth.md).

`/mcp` is the protected resource (RFC 9728); this package is the authorization server beside it:

- `metadata`: who we are (issuer, resource) and what we publish (RFC 9728 and RFC 8414 documents,
  the `WWW-Authenticate` challenge);
- `clients`: registered clients (RFC 7591) and Client ID Metadata Documents, and the redirect-URI rule;
- `grants`: what people approved, their codes and rotating refresh tokens, in the database (both stores);
- `server`: the OAuth grammar, Authlib's authorization server wired to the above;
- the HTTP handlers the web app routes to, with the consent and "Connected apps" pages, are the web
  app's: `navmcp.web.oauth_endpoints` (it imports this package; nothing here imports the web app).

Access tokens are short-lived JWTs signed with the local secret (`navmcp.identity.mint_access_token`),
checked per request without a database read except a cached look at whether their grant was revoked.
"""

from __future__ import annotations

import os

# The scopes, what each lets a client do as the consent page says it, in the order shown. `read`
# covers navigate, resources, prompts and completion; `write` running actions (`scopes_needed`).
SCOPES = {
    "read": "see what you see: your studios, their notes, decisions and commitments",
    "write": "act as you: write notes and comments, vote, join and close things",
}
# Access tokens are short-lived; NAVMCP_OAUTH_ACCESS_SECONDS shortens them (tests watch clients refresh).
ACCESS_TOKEN_SECONDS = int(os.environ.get("NAVMCP_OAUTH_ACCESS_SECONDS") or 3600)
CODE_SECONDS = 600
REFRESH_TOKEN_DAYS = 30


def scopes_needed(message: object) -> frozenset[str]:
    """The scopes a JSON-RPC message (or batch) to /mcp needs: `write` to run an action, else `read`."""
    messages = message if isinstance(message, list) else [message]
    needed = {"read"}
    for m in messages:
        if isinstance(m, dict) and m.get("method") == "tools/call" and isinstance(m.get("params"), dict) \
                and m["params"].get("name") == "execute_action":
            needed.add("write")
    return frozenset(needed)
