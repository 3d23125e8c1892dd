"""A loopback HTTP proxy that adds `Authorization: Bearer <token>` to every request it forwards.

The MCP conformance suite cannot send headers of its own, and /mcp always wants a token: the suite
talks to this proxy, which passes everything else through unchanged (Host and Origin included, so
the DNS-rebinding checks still see what the suite sent) and sends the answer back as it came.
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


class BearerProxy:
    def __init__(self, upstream_port: int, token: str):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in HOP_BY_HOP and k.lower() != "authorization"}
                headers["Authorization"] = f"Bearer {token}"
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    reply = upstream.getresponse()
                    if (reply.getheader("content-type") or "").startswith("text/event-stream"):
                        return self._stream(reply)  # a subscriptions/listen answer: passed on as it comes
                    data = reply.read()
                finally:
                    upstream.close()
                self.send_response(reply.status, reply.reason)
                for k, v in reply.getheaders():
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                proxy.forwarded += 1

            def _stream(self, reply) -> None:
                self.send_response(reply.status, reply.reason)
                for k, v in reply.getheaders():
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                proxy.forwarded += 1
                try:
                    while chunk := reply.read1(65536):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client stopped reading: closing upstream ends the stream there
                    self.close_connection = True

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _forward

            def log_message(self, format, *args):  # quiet: the test reads the suite's report
                pass

        self.forwarded = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> BearerProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
