"""`/mcp` with an OAuth access token vs a `navmcp token` Bearer token, in-process (no sockets).

    .venv/bin/python -m bench.oauth_http --size 1000 [--calls 300]

Both clients send the same navigate calls through the ASGI app; the only difference is the token,
so the difference per call is the OAuth check (a verified-token cache hit, the resource
comparison and the cached look at the grant). Rounds alternate between the two; the figure is
the ratio of CPU time per call (issue 27 wants OAuth within 5% of Bearer).
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.profile import seeded_workspace
from bench.profile_http import McpClient, navigate_frame


def oauth_token(app) -> str:
    """An access token for the local owner, from a grant approved and exchanged as /token would."""
    from navmcp.identity import Access, ensure_owner, mint_access_token
    from navmcp.oauth import grants

    owner = ensure_owner(app.store)["id"]
    resource = "http://127.0.0.1:8765/mcp"  # the issuer the bench's Host header names
    code = grants.new_code()
    grant_id = grants.approve(app.store, code, owner, "bench", "bench", "read write", resource, "", "x" * 43)
    assert grants.take_code(app.store, code)["problem"] is None
    access = Access(grant_id, "bench", "bench", frozenset({"read", "write"}), resource)
    return mint_access_token(app.secret, issuer="http://127.0.0.1:8765", user_id=owner, access=access, seconds=3600)


def main(argv: list[str] | None = None) -> int:
    args, fx = seeded_workspace("python -m bench.oauth_http", __doc__, argv)

    from navmcp.app import App

    app = App()
    bearer = McpClient(app)
    oauth = McpClient(app, token=oauth_token(app))
    frames = [navigate_frame(u) for u in fx.urls]
    for client in (bearer, oauth):  # warm up: first verification, parsed states, page caches
        for f in frames * 5:
            status, _, body = client.call(f)
            assert status == 200 and b'"isError":false' in body, body[:300]
    # CPU time of this process per call, in many short alternating rounds: on a shared machine the
    # wall clock measures the neighbours; the fastest rounds and the lower quartile measure us.
    times: dict[str, list[float]] = {"bearer": [], "oauth": []}
    per_round = 50
    for round_ in range(max(2, args.calls * len(frames) // per_round)):
        pair = (("bearer", bearer), ("oauth", oauth))
        for name, client in pair if round_ % 2 == 0 else pair[::-1]:
            started = time.process_time()
            for n in range(per_round):
                client.call(frames[n % len(frames)])
            times[name].append((time.process_time() - started) / per_round)
    low = {k: min(v) for k, v in times.items()}
    quartile = {k: statistics.quantiles(v, n=4)[0] for k, v in times.items()}
    print(f"{args.size:,} items: /mcp navigate, in-process ASGI, CPU per call (fastest round / lower quartile): "
          f"Bearer {low['bearer'] * 1000:.3f} / {quartile['bearer'] * 1000:.3f} ms, "
          f"OAuth {low['oauth'] * 1000:.3f} / {quartile['oauth'] * 1000:.3f} ms; OAuth/Bearer "
          f"{low['oauth'] / low['bearer']:.3f} / {quartile['oauth'] / quartile['bearer']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
