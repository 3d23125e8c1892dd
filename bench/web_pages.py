"""The web app's pages as a person's browser gets them: server time and size per page type.

    .venv/bin/python -m bench.web_pages --size 100000

Seeds (or reuses) a workspace of `--size` items like `python -m bench`, signs in with a login link
(a cookie session, as a browser), then GETs each page type's HTML through the ASGI app in-process
(no sockets, no uvicorn) and prints the median server time and the HTML size. The issue's targets:
p50 at most 15 ms per page at 100,000 items on SQLite, HTML at most 60 KB. Beside the wall-clock
median it prints the median CPU time of this process: on a machine shared with other work the
wall clock includes waiting for a core, the CPU time does not.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
import time

from bench.profile import seeded_workspace

TARGET_MS, TARGET_KB = 15.0, 60.0


class Browser:
    """A signed-in browser's requests, made straight into the ASGI app."""

    def __init__(self, app):
        from navmcp.identity import ensure_owner
        from navmcp.web import create_app
        from navmcp.web.auth import create_login_link

        self.web = create_app(app)
        self.loop = asyncio.new_event_loop()
        self.cookie = ""
        link = create_login_link(app.store, ensure_owner(app.store)["id"], "http://127.0.0.1:8765")
        path = link.removeprefix("http://127.0.0.1:8765")
        status, _, _ = self.call("POST", path, {"origin": "http://127.0.0.1:8765"})
        assert status == 303, status
        # the session cookie, among the others the sign-in sets or clears (an emptied one is dropped)
        self.cookie = "; ".join(c for c in self.cookies if not c.endswith("="))

    def call(self, method: str, url: str, extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        path, _, query = url.partition("?")
        headers = {"host": "127.0.0.1:8765", "accept": "text/html", **({"cookie": self.cookie} if self.cookie else {}),
                   **(extra or {})}
        scope = {"type": "http", "method": method, "path": path, "query_string": query.encode(),
                 "headers": [(k.encode(), v.encode()) for k, v in headers.items()], "scheme": "http",
                 "client": ("127.0.0.1", 1)}
        sent: list[dict] = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        self.loop.run_until_complete(self.web(scope, receive, send))
        start = sent[0]
        self.cookies = [v.decode().split(";", 1)[0] for k, v in start["headers"] if k == b"set-cookie"]
        return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, sent[1]["body"]


def main(argv: list[str] | None = None) -> int:
    args, fx = seeded_workspace("python -m bench.web_pages", __doc__, argv)
    from navmcp.app import App

    browser = Browser(App())
    urls = ["/", "/help", "/whoami", *fx.urls]
    studio = next((u for u in fx.urls if re.fullmatch(r"/studios/[^/]+", u)), None)
    if studio:
        urls += [f"{studio}/members", f"{studio}/audit", f"{studio}/cycles/this-week"]
    print(f"{args.size:,} items, medians of {args.calls} GETs (HTML, signed in), milliseconds")
    print(f"{'URL':<44} {'p50 ms':>8} {'CPU ms':>8} {'HTML KB':>8}")
    worst_ms = worst_kb = 0.0
    for url in dict.fromkeys(urls):
        status, _, body = browser.call("GET", url)
        assert status == 200, (url, status, body[:300])
        times, cpu = [], []
        for _ in range(args.calls):
            started, started_cpu = time.perf_counter(), time.process_time()
            browser.call("GET", url)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        p50, p50_cpu, kb = statistics.median(times) * 1000, statistics.median(cpu) * 1000, len(body) / 1024
        worst_ms, worst_kb = max(worst_ms, p50), max(worst_kb, kb)
        print(f"{url:<44} {p50:>8.2f} {p50_cpu:>8.2f} {kb:>8.1f}")
    print(f"worst: {worst_ms:.2f} ms (target {TARGET_MS:g}), {worst_kb:.1f} KB (target {TARGET_KB:g})")
    return 0 if worst_ms <= TARGET_MS and worst_kb <= TARGET_KB else 1


if __name__ == "__main__":
    sys.exit(main())
