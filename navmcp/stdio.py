"""The stdio transport: one JSON-RPC message per line in, one per line out, flushed each time.

It only frames and moves bytes; the protocol lives in `navmcp.protocol`. stdout carries nothing
but responses (logging goes to stderr). A line over MAX_LINE_BYTES is answered with an error and
skipped; EOF or SIGTERM end the server with exit code 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import BinaryIO

from navmcp.protocol import InternalError, InvalidRequest, encode, error_object

MAX_LINE_BYTES = 4 * 1024 * 1024
log = logging.getLogger("navmcp.stdio")


def serve(connection, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
          max_line: int = MAX_LINE_BYTES) -> int:
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    signal.signal(signal.SIGTERM, _terminate)
    try:
        while True:
            line = stdin.readline(max_line + 1)
            if not line:
                return 0
            if len(line) > max_line and not line.endswith(b"\n"):
                _skip_rest_of_line(stdin, max_line)
                reply = encode(error_object(InvalidRequest(
                    f"Invalid Request: message larger than {max_line} bytes")))
            else:
                line = line.strip()
                if not line:
                    continue
                try:
                    reply = connection.receive_bytes(line)
                except Exception:  # the protocol core answers every fault; this is the last guard
                    log.exception("unhandled error on one message")
                    reply = encode(error_object(InternalError("Internal error (details are in the server log)")))
            if reply is not None:
                stdout.write(reply + b"\n")
                stdout.flush()
    except BrokenPipeError:
        # The client stopped reading: a disconnect, not a failure. Point stdout at /dev/null so the
        # interpreter's final flush doesn't fail too (Python would exit 120).
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except KeyboardInterrupt:
        return 0


def _skip_rest_of_line(stdin: BinaryIO, chunk: int) -> None:
    while True:
        rest = stdin.readline(chunk)
        if not rest or rest.endswith(b"\n"):
            return


def _terminate(signum, frame):
    raise SystemExit(0)
