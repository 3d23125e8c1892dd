"""What every test that runs a real `navmcp web` process needs: a free loopback port, waiting
until the server answers /healthz (or has died), and the process itself (`navmcp_web`)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from deadlines import HANG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(base: str, proc: subprocess.Popen, deadline: float) -> bool:
    """True once `base`/healthz answers 200; False if the process exits or `deadline` (monotonic) passes."""
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def navmcp_web(home: Path) -> Iterator[int]:
    """A `navmcp web` process on the embedded store in `home`, on a free port: that port. It is
    stopped on leaving; a server that never became healthy fails with its stderr."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("NAVMCP_TOKEN", "NAVMCP_DATABASE_URL")}
    proc = subprocess.Popen([sys.executable, "-m", "navmcp", "web", "--port", str(port)],
                            env={**env, "NAVMCP_HOME": str(home)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        healthy = wait_until_healthy(f"http://127.0.0.1:{port}", proc, time.monotonic() + HANG)
        assert healthy, proc.stderr.read() if proc.poll() is not None else "navmcp web did not answer /healthz"
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stderr.close()

