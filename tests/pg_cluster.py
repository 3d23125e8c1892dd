"""A PostgreSQL cluster a test owns: made with initdb in a temporary directory, on a port of its
own, started and stopped at will (the shared server on 5432 is never stopped). As root, the
cluster runs as the `postgres` account, as initdb refuses root."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from webproc import free_port


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for version in sorted(Path("/usr/lib/postgresql").glob("*"), reverse=True):
        if (version / "bin" / name).exists():
            return str(version / "bin" / name)
    return None


def available() -> bool:
    return _bin("initdb") is not None and _bin("pg_ctl") is not None


class OwnCluster:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="navmcp-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.app_url = f"postgresql://navmcp_app@127.0.0.1:{self.port}/postgres"
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.dir, "postgres")
        self._run(_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        self.start()

    def _run(self, *args) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"), "-w", "-t", "60",
                  "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return subprocess.run([*self._as, _bin("pg_ctl"), "-D", str(self.data), "status"],
                              capture_output=True).returncode == 0

    def close(self) -> None:
        try:
            if self.running():
                self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def wait_ready(self, deadline: float = 60) -> None:
        import psycopg

        until = time.monotonic() + deadline
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > until:
                    raise
                time.sleep(0.1)
