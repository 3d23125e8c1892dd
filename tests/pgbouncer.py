"""A PgBouncer in transaction mode that a test owns, in front of the test's PostgreSQL server: on a
free loopback port, its files in a temporary directory, trusting the users it lists. As root it
runs as the `postgres` account (PgBouncer refuses root)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from webproc import free_port


def available() -> bool:
    return shutil.which("pgbouncer") is not None or Path("/usr/sbin/pgbouncer").exists()


class PgBouncer:
    def __init__(self, server_url: str, users: tuple[str, ...] = ("postgres", "navmcp_app")):
        parts = urlsplit(server_url)
        self.dir = Path(tempfile.mkdtemp(prefix="navmcp-pgbouncer-"))
        self.port = free_port()
        (self.dir / "userlist.txt").write_text("".join(f'"{user}" ""\n' for user in users))
        (self.dir / "pgbouncer.ini").write_text(f"""[databases]
* = host={parts.hostname or '127.0.0.1'} port={parts.port or 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = trust
auth_file = {self.dir / 'userlist.txt'}
pool_mode = transaction
max_client_conn = 500
default_pool_size = 8
ignore_startup_parameters = extra_float_digits,options
logfile = {self.dir / 'pgbouncer.log'}
pidfile = {self.dir / 'pgbouncer.pid'}
""")
        as_user = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            for name in ("userlist.txt", "pgbouncer.ini"):
                shutil.chown(self.dir / name, "postgres")
            as_user = ["runuser", "-u", "postgres", "--"]
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        self.proc = subprocess.Popen([*as_user, binary, str(self.dir / "pgbouncer.ini")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("pgbouncer did not start: " + self.log()) from None
                time.sleep(0.05)

    def url(self, user: str, dbname: str) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{dbname}"

    def log(self) -> str:
        path = self.dir / "pgbouncer.log"
        return path.read_text() if path.exists() else ""

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)
