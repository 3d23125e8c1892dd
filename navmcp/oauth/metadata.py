"""Who this server is, as OAuth sees it, and the documents it publishes.

The issuer is this server's origin: `NAVMCP_PUBLIC_URL` when set (a deployment behind a proxy or a
load balancer, where every process must name itself the same), else the request's scheme and Host
(the Host is on the allow-list by then; behind a TLS proxy uvicorn takes the scheme from
X-Forwarded-Proto). The protected resource is `{issuer}/mcp`.
"""

from __future__ import annotations

import os
import re
from typing import Any

from navmcp.oauth import SCOPES

PRM_PATH = "/.well-known/oauth-protected-resource"
ASM_PATH = "/.well-known/oauth-authorization-server"
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?")
# Every well-known path we answer; any other under /.well-known/ is a JSON 404, never a page.
WELL_KNOWN = (PRM_PATH, PRM_PATH + "/mcp", ASM_PATH, ASM_PATH + "/mcp")


def issuer(scheme: str, host: str | None) -> str:
    configured = os.environ.get("NAVMCP_PUBLIC_URL", "").strip().rstrip("/")
    if configured:
        return configured
    host = (host or "").lower()
    if not _HOST.fullmatch(host):  # the allow-list checks the name only: the port part could be anything
        host = "127.0.0.1"
    return f"{'https' if scheme.lower() == 'https' else 'http'}://{host}"


def resource(issuer_url: str) -> str:
    return issuer_url + "/mcp"


def protected_resource(issuer_url: str) -> dict[str, Any]:
    """RFC 9728 §2."""
    return {
        "resource": resource(issuer_url),
        "authorization_servers": [issuer_url],
        "scopes_supported": list(SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": "navmcp",
        "resource_documentation": issuer_url + "/help",
    }


def authorization_server(issuer_url: str) -> dict[str, Any]:
    """RFC 8414 §2 (with RFC 9207's and Client ID Metadata Documents' flags)."""
    return {
        "issuer": issuer_url,
        "authorization_endpoint": issuer_url + "/authorize",
        "token_endpoint": issuer_url + "/token",
        "registration_endpoint": issuer_url + "/register",
        "revocation_endpoint": issuer_url + "/revoke",
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
        "service_documentation": issuer_url + "/help",
    }


def challenge(issuer_url: str, *, error: str | None = None, description: str | None = None,
              scope: str | None = None) -> str:
    """The `WWW-Authenticate` value of a refusal at /mcp (RFC 6750 §3, RFC 9728 §5.1)."""
    parts = ['realm="navmcp"', *([f'error="{error}"'] if error else []),
             f'resource_metadata="{issuer_url}{PRM_PATH}/mcp"', f'scope="{scope or " ".join(SCOPES)}"']
    if description:
        parts.append(f'error_description="{header_text(description)}"')
    return "Bearer " + ", ".join(parts)


def header_text(message: str, limit: int = 200) -> str:
    """`message` as an RFC 6750 quoted value: printable ASCII but `"` and `\\`."""
    text = message.replace('"', "'")[:limit]
    return "".join(c if " " <= c <= "~" and c != "\\" else "?" for c in text)
