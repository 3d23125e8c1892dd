"""The stdio transport: one JSON-RPC message per line in, one per line out.

It only frames and moves bytes; the protocol lives in `navmcp.protocol`. A message that arrives
alone is answered and flushed at once. Messages that arrive together (a client that pipelines) are
received in one `Connection.group()`, which commits their writes at once, and their replies are
sent after it, flushed when no more input is waiting. stdout carries nothing but responses
(logging goes to stderr). A line over MAX_LINE_BYTES is answered with an error and skipped; EOF or
SIGTERM end the server with exit code 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from typing import BinaryIO

from navmcp.mcp.codec import encode
from navmcp.protocol import InternalError, InvalidRequest, error_object, rolled_back

MAX_LINE_BYTES = 4 * 1024 * 1024
PIPE_BYTES = 1024 * 1024  # Linux's default /proc/sys/fs/pipe-max-size for unprivileged processes
MAX_GROUP = 64  # pipelined messages that share one unit of work at most (bounds how long it holds locks)
log = logging.getLogger("navmcp.mcp.stdio")


def serve(connection, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
          max_line: int = MAX_LINE_BYTES) -> int:
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    lines = _Lines(stdin, max_line)
    _widen_pipe(stdout)
    signal.signal(signal.SIGTERM, _terminate)
    # Notifications of watched pages come from another thread (the change feed): every write to
    # stdout holds this lock, so a message is never cut into by another.
    writing = threading.Lock()

    def send(message) -> None:
        try:
            with writing:
                stdout.write(encode(message) + b"\n")
                stdout.flush()
        except (OSError, ValueError):  # the client is gone; the main loop ends on its own
            pass

    connection.outbound = send
    try:
        while True:
            line = lines.next()
            if line is None:
                return 0
            if not lines.pending():  # the usual case: one message, answered at once
                reply = _answer(connection, line, max_line)
                with writing:
                    if reply is not None:
                        stdout.write(reply + b"\n")
                    stdout.flush()
                continue
            # A client that pipelines: the messages already read share one unit of work (their
            # writes are committed together), and their replies go out after it has committed.
            replies: list[bytes | None] = []
            epochs: list[int | None] = []  # each reply: the group's commits before its last write (None: it only read)
            unit = None
            try:
                with connection.group() as unit:
                    while True:
                        writes = _writes(unit)
                        replies.append(_answer(connection, line, max_line))
                        epochs.append(unit.last_write if _writes(unit) > writes else None)
                        if len(replies) >= MAX_GROUP or not lines.pending():
                            break
                        line = lines.next()
            except Exception:
                log.exception("a group of %d messages could not be committed", len(replies))
                # Writes that a commit of the group applied stand; so do reads' results (a read never
                # sees writes not yet committed); the rest is answered as not applied.
                held = getattr(unit, "commits", 0)
                replies = [reply if epoch is not None and epoch < held else rolled_back(reply, results_stand=epoch is None)
                           for reply, epoch in zip(replies, epochs)]
            with writing:
                stdout.write(b"".join(reply + b"\n" for reply in replies if reply is not None))
                # Flush before waiting for input, not after every group: a client that pipelines
                # gets its replies in fewer, larger writes.
                if not lines.pending():
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
    finally:
        connection.close()


def _writes(unit) -> int:
    """The writes a group has begun so far (a store without group commit counts none)."""
    return getattr(unit, "writes", 0)


def _widen_pipe(stream: BinaryIO) -> None:
    """Let a pipe hold a whole group's replies (64 pages of a few KiB; Linux gives a pipe 64 KiB), so
    that writing them doesn't wait for the client to read: the server goes on with the next group
    while the client reads these. Anything but a pipe on Linux is left as it is."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (AttributeError, OSError, ValueError):  # not Linux, not a pipe, above the system's limit
        pass


def _answer(connection, line, max_line: int) -> bytes | None:
    """The reply to one line (None for a notification or a blank line)."""
    if line is _TOO_LONG:
        return encode(error_object(InvalidRequest(f"Invalid Request: message larger than {max_line} bytes")))
    line = line.strip()
    if not line:
        return None
    try:
        return connection.receive_bytes(line)
    except Exception:  # the protocol core answers every fault; this is the last guard
        log.exception("unhandled error on one message")
        return encode(error_object(InternalError("Internal error (details are in the server log)")))


class _TooLong:
    """A line that exceeded max_line and was skipped."""


_TOO_LONG = _TooLong()


class _Lines:
    """Lines from a binary stream, with what has arrived but not been read yet kept in view, so the
    server knows whether another message is already waiting (`pending`). A line longer than
    `max_line` bytes (without its newline) is read to its end, dropped, and reported as `_TOO_LONG`."""

    CHUNK = 65536

    def __init__(self, stream: BinaryIO, max_line: int):
        self.stream, self.max_line = stream, max_line
        self.buf = bytearray()
        self.eof = False

    def pending(self) -> bool:
        return b"\n" in self.buf or (self.eof and bool(self.buf))

    def _fill(self) -> bool:
        if self.eof:
            return False
        read1 = getattr(self.stream, "read1", None)
        chunk = read1(self.CHUNK) if read1 else self.stream.read(self.CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def next(self) -> bytes | _TooLong | None:
        """The next line (with its newline, if it had one), `_TOO_LONG`, or None at the end."""
        start = 0
        while True:
            end = self.buf.find(b"\n", start)
            if end >= 0:
                if end > self.max_line:
                    del self.buf[:end + 1]
                    return _TOO_LONG
                line = bytes(self.buf[:end + 1])
                del self.buf[:end + 1]
                return line
            if len(self.buf) > self.max_line:  # too long already: drop it up to its newline
                self.buf.clear()
                while self._fill():
                    end = self.buf.find(b"\n")
                    if end >= 0:
                        del self.buf[:end + 1]
                        return _TOO_LONG
                    self.buf.clear()
                return _TOO_LONG
            start = len(self.buf)
            if not self._fill():
                if not self.buf:
                    return None
                line = bytes(self.buf)
                self.buf.clear()
                return line


def _terminate(signum, frame):
    raise SystemExit(0)
