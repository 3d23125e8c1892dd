"""What every test that runs a real `navmcp web` process needs: a free loopback port, and waiting
until the server answers /healthz (or has died)."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx


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
