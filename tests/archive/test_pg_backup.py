"""Backup and restore as docs/hosting.md tells it: `pg_dump -Fc` of a navmcp database, restored
onto a fresh cluster this test owns (`pg_cluster.OwnCluster`). Roles are the cluster's: without
`navmcp_app` the restore fails; with it made first, the restore is whole, `navmcp migrate` has
nothing to apply, and the app reads the studio back under row-level security."""

from __future__ import annotations

import subprocess

import psycopg
import pytest

import pg_cluster
from navmcp.app import App
from navmcp.config import Config
from navmcp.identity import add_user
from navmcp.store.postgres import migrate

pytestmark = pytest.mark.skipif(not pg_cluster.available() or not pg_cluster._bin("pg_dump"),
                                reason="needs PostgreSQL's initdb, pg_ctl, pg_dump and pg_restore")


def test_a_dump_restores_onto_a_fresh_cluster_once_navmcp_app_exists(pg_database, pg_url, tmp_path):
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    alice = add_user(app.store, "alice")
    app.workspace.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    note = app.workspace.execute(alice, "/studios/team", "create_note", {"title": "Kept", "body": "safe"}).url
    app.store.close()
    dump = tmp_path / "navmcp.dump"
    subprocess.run([pg_cluster._bin("pg_dump"), "-Fc", "-d", pg_database.admin_url, "-f", str(dump)],
                   check=True, capture_output=True, timeout=120)

    cluster = pg_cluster.OwnCluster()
    try:
        restore = pg_cluster._bin("pg_restore")
        with psycopg.connect(cluster.url, autocommit=True) as admin:
            admin.execute("CREATE DATABASE early")
            admin.execute("CREATE DATABASE navmcp")
        early = cluster.url.rsplit("/", 1)[0] + "/early"
        failed = subprocess.run([restore, "-d", early, str(dump)], capture_output=True, text=True, timeout=120)
        assert failed.returncode != 0 and "navmcp_app" in failed.stderr  # the role comes first

        with psycopg.connect(cluster.url, autocommit=True) as admin:
            admin.execute("CREATE ROLE navmcp_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE")
        target = cluster.url.rsplit("/", 1)[0] + "/navmcp"
        subprocess.run([restore, "-d", target, str(dump)], check=True, capture_output=True, timeout=120)
        assert migrate(target) == []
        restored = App(Config(home=tmp_path / "home", database_url=cluster.app_url.rsplit("/", 1)[0] + "/navmcp",
                              token=None))
        try:
            page = restored.workspace.page(alice, note)
            assert page.title == "Kept"
        finally:
            restored.store.close()
    finally:
        cluster.close()
