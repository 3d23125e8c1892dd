"""The command line against PostgreSQL: `navmcp migrate`, `user add`, `token`, `get`."""

from __future__ import annotations

import os
import subprocess
import sys


def navmcp(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {**os.environ, **env}
    full.pop("NAVMCP_TOKEN", None) if "NAVMCP_TOKEN" not in env else None
    return subprocess.run([sys.executable, "-m", "navmcp", *args], capture_output=True, text=True, env=full,
                          timeout=60)


def test_migrate_user_token_get_on_postgres(tmp_path, pg_url, pg_database):
    env = {"NAVMCP_HOME": str(tmp_path / "home"), "NAVMCP_DATABASE_URL": pg_database.admin_url}
    done = navmcp("migrate", env=env)
    assert done.returncode == 0 and "up to date" in done.stderr and done.stdout == ""
    env["NAVMCP_DATABASE_URL"] = pg_url  # from here on as navmcp_app
    assert navmcp("user", "add", "olga", env=env).returncode == 0
    again = navmcp("user", "add", "olga", env=env)
    assert again.returncode == 1 and "already exists" in again.stderr
    token = navmcp("token", "olga", env=env)
    assert token.returncode == 0 and token.stdout.count(".") == 2
    page = navmcp("get", "/whoami", env={**env, "NAVMCP_TOKEN": token.stdout.strip()})
    assert page.returncode == 0 and "@olga" in page.stdout
    anonymous = navmcp("get", "/", env=env)
    assert anonymous.returncode == 1 and "token is required" in anonymous.stderr


def test_migrate_needs_a_postgres_url(tmp_path):
    done = navmcp("migrate", env={"NAVMCP_HOME": str(tmp_path), "NAVMCP_DATABASE_URL": ""})
    assert done.returncode == 2 and "postgresql://" in done.stderr


def test_an_unmigrated_database_says_how_to_fix_it(tmp_path, pg_database):
    import psycopg

    name = pg_database.name + "_empty"
    with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = pg_database.admin_url.rsplit("/", 1)[0] + "/" + name
        done = navmcp("user", "add", "x", env={"NAVMCP_HOME": str(tmp_path), "NAVMCP_DATABASE_URL": url})
        assert done.returncode == 1 and done.stderr.startswith("navmcp: the database has no navmcp schema")
        assert "navmcp migrate" in done.stderr and "Traceback" not in done.stderr
    finally:
        with psycopg.connect(pg_database.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_user_delete_on_postgres(tmp_path, pg_url, pg_database):
    """`user delete` acts as the user (a user's row is theirs alone to change under RLS): it used to
    fail on the local owner, and as nobody it would have changed nothing and said it had."""
    env = {"NAVMCP_HOME": str(tmp_path / "home"), "NAVMCP_DATABASE_URL": pg_url}
    assert navmcp("user", "add", "zed", env=env).returncode == 0
    token = navmcp("token", "zed", env=env).stdout.strip()
    done = navmcp("user", "delete", "zed", env=env)
    assert done.returncode == 0 and "deleted user @zed" in done.stderr, done.stderr
    refused = navmcp("get", "/whoami", env={**env, "NAVMCP_TOKEN": token})
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    again = navmcp("user", "delete", "zed", env=env)
    assert again.returncode == 1 and "no user 'zed'" in again.stderr and "Traceback" not in again.stderr
