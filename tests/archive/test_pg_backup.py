"""Backup and restore as docs/hosting.md tells it: `pg_dump -Fc` of a navmcp database, restored
onto a fresh cluster this test owns (`pg_cluster.OwnCluster`). Roles are the cluster's: without
`navmcp_app` the restore fails; with it made first, the restore is whole, `navmcp migrate` has
nothing to apply, and the app reads the studio back under row-level security: its files byte for
byte, every table's policies and grants as they were, nothing for a stranger or for nobody."""

from __future__ import annotations

import base64
import subprocess

import psycopg
import pytest

import pg_cluster
from navmcp.app import App
from navmcp.config import Config
from navmcp.errors import NotFound
from navmcp.identity import add_user
from navmcp.store.postgres import migrate

# Per table: row-level security on, forced, its policies (name, command, who, the rule), and what
# navmcp_app may do with it.
SECURITY = """SELECT c.relname, c.relrowsecurity, coalesce((SELECT array_agg(p.polname || ' ' || p.polcmd::text || ' ' || array_to_string(p.polroles::regrole[]::text[], ',') || ' '
                     || coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' '
                     || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '') ORDER BY p.polname)
                     FROM pg_policy p WHERE p.polrelid = c.oid), '{}') AS policies,
                     c.relforcerowsecurity,
                     (SELECT array_agg(privilege_type::text ORDER BY privilege_type) FROM information_schema.table_privileges t
                       WHERE t.table_schema = 'public' AND t.table_name = c.relname AND t.grantee = 'navmcp_app') AS grants
                FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' ORDER BY c.relname"""

pytestmark = pytest.mark.skipif(not pg_cluster.available() or not pg_cluster._bin("pg_dump"),
                                reason="needs PostgreSQL's initdb, pg_ctl, pg_dump and pg_restore")


def test_a_dump_restores_onto_a_fresh_cluster_once_navmcp_app_exists(pg_database, pg_url, tmp_path):
    app = App(Config(home=tmp_path / "home", database_url=pg_url, token=None))
    alice = add_user(app.store, "alice")
    app.workspace.execute(alice, "/", "create_studio", {"handle": "team", "name": "Team"})
    eve = add_user(app.store, "eve")  # in no studio of alice's
    note = app.workspace.execute(alice, "/studios/team", "create_note", {"title": "Kept", "body": "safe"}).url
    image = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # every byte value, so bytea is tested whole
    file_url = app.workspace.execute(alice, note, "attach", {"filename": "kept.png", "content_type": "image/png",
                                                             "data": base64.b64encode(image).decode()}).url
    app.store.close()
    with psycopg.connect(pg_database.admin_url) as conn:
        security = conn.execute(SECURITY).fetchall()
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
            assert page.title == "Kept" and page.data["files"][0]["filename"] == "kept.png"
            assert restored.workspace.file(alice, file_url)[1] == image
            for url in (note, file_url):  # a stranger still gets nothing
                with pytest.raises(NotFound):
                    restored.workspace.page(eve, url)
            with restored.store.read() as tx:  # nobody: no rows at all
                assert tx.scalar("SELECT count(*) FROM attachments") == 0 and tx.scalar("SELECT count(*) FROM items") == 0
        finally:
            restored.store.close()
        with psycopg.connect(target) as conn:  # row-level security, its policies and the app role's grants, as they were
            assert conn.execute(SECURITY).fetchall() == security
        assert any(row[0] == "attachments" and row[1] and row[2] for row in security)
    finally:
        cluster.close()
