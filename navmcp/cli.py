"""The `navmcp` command. Sub-commands import what they need, so `serve` starts fast."""

from __future__ import annotations

import argparse
import errno
import logging
import math
import os
import shlex
import signal
import socket
import sys
from pathlib import Path

LINK_MINUTES = 15  # how long a printed login link stays valid (navmcp.web.auth.LINK_MINUTES)
DEFAULT_BASE_URL = "http://127.0.0.1:8765"  # where `navmcp web` listens unless told otherwise


def _setup_logging() -> None:
    level = os.environ.get("NAVMCP_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _app():
    from navmcp.app import App

    return App()


def _workspace(app) -> str:
    """Which workspace a command acts on, in words: the home folder, or the PostgreSQL database
    (host and name; never its password). Several can exist side by side (`navmcp demo` makes one)."""
    if app.embedded:
        return f"the workspace at {app.config.home}"
    from urllib.parse import urlsplit

    url = urlsplit(app.config.database_url)
    return f"the workspace in PostgreSQL at {url.hostname or 'localhost'}{url.path or ''}"


def _again(home: Path | None = None) -> str:
    from navmcp.config import Config, navmcp_command

    config = Config.from_env()
    return navmcp_command(home if home is not None else config.home, config.database_url)


def cmd_serve(args: argparse.Namespace) -> int:
    from navmcp.mcp.stdio import serve
    from navmcp.mcp.tools import connect

    app = _app()
    return serve(connect(app, app.config.token))


def cmd_get(args: argparse.Namespace) -> int:
    import json

    from navmcp.errors import NavError

    app = _app()
    try:
        user = app.authenticate(app.config.token)
        page = app.workspace.page(user, args.url, client="navmcp-cli")
    except NavError as e:
        print(f"navmcp: {e.message}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(json.dumps(page.as_json(), indent=2, ensure_ascii=False) + "\n")
    else:  # the agent's page, but a shell user can't call execute_action: say what they can do
        sys.stdout.write(page.render(shell=True))
        if page.actions:
            from navmcp.config import running_base_url

            base, navmcp = running_base_url(app.config.home) or DEFAULT_BASE_URL, _command_path()
            path = page.url.split("?", 1)[0].rstrip("/")
            sys.stdout.write(f"\nFrom a shell: open {base}{page.url} in the web app (`{navmcp} web`) and use its"
                             f" forms, or POST an action's params as JSON to {base}{path}/actions/ACTION with"
                             f" `Authorization: Bearer $({navmcp} token {page.user['handle']})`.\n")
    return 0


def cmd_user_add(args: argparse.Namespace) -> int:
    from navmcp.errors import NavError
    from navmcp.identity import add_user, ensure_owner

    app = _app()
    if app.embedded:  # the local owner exists only on the embedded store
        ensure_owner(app.store)
    try:
        user = add_user(app.store, args.handle, args.name)
    except NavError as e:
        print(f"navmcp: {e.message}", file=sys.stderr)
        return 1
    print(f"created user @{user['handle']} (id {user['id']}) in {_workspace(app)}; "
          f"`{_again()} login-link {user['handle']}` prints a sign-in link, `{_again()} token {user['handle']}` "
          "a token", file=sys.stderr)
    return 0


def cmd_user_delete(args: argparse.Namespace) -> int:
    from navmcp.errors import NavError
    from navmcp.identity import delete_user, ensure_owner, user_by_handle

    app = _app()
    if app.embedded:  # the local owner exists only on the embedded store
        ensure_owner(app.store)
    try:
        with app.store.read() as tx:
            found = user_by_handle(tx, args.handle)
        # As that user: on the hosted store a user's row is theirs alone to change (users_update).
        with app.store.write(user_id=found["id"] if found else None) as tx:
            user = delete_user(tx, args.handle, force=args.force)
    except NavError as e:
        print(f"navmcp: {e.message}", file=sys.stderr)
        return 1
    print(f"deleted user @{user['handle']} from {_workspace(app)}: their tokens no longer work", file=sys.stderr)
    return 0


def _named_user(app, handle: str, command: str):
    """The user called `handle`, or None after saying how to create one (on stderr)."""
    from navmcp.identity import deleted_message, ensure_owner, user_by_handle, was_deleted

    owner = ensure_owner(app.store) if app.embedded else None  # the local owner exists only on the embedded store
    if not handle.strip():  # `navmcp token "$USER"` with USER unset or empty
        example = owner["handle"] if owner else "HANDLE"
        print(f"navmcp: no handle given (is $USER empty?): type the user's handle, e.g. `{_again()} "
              f"{command} {example}`" + (f" (@{example} owns {_workspace(app)})" if owner else ""), file=sys.stderr)
        return None
    with app.store.read() as tx:
        user = user_by_handle(tx, handle)
        deleted = user is None and was_deleted(tx, handle)
    if deleted:  # `user add` would refuse the handle: it stays with the deleted account's work
        print(f"navmcp: {deleted_message(handle)}", file=sys.stderr)
    elif user is None:
        print(f"navmcp: no user {handle!r} in {_workspace(app)}; create one with `{_again()} user add {handle}`",
              file=sys.stderr)
    return user


def cmd_token(args: argparse.Namespace) -> int:
    from navmcp.identity import mint_token

    app = _app()
    user = _named_user(app, args.handle, "token")
    if user is None:
        return 1
    print(f"navmcp: a token for @{user['handle']} in {_workspace(app)}, valid {args.days:g} days", file=sys.stderr)
    print(mint_token(app.secret, user["id"], days=args.days))
    return 0


def _base_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def _listen(host: str, port: int) -> socket.socket | None:
    """The web server's socket, bound before anything is printed (a login link for a port another
    program holds would lead there); None after saying why it can't be had."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: restart at once
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            print(f"navmcp: port {port} on {host} is already in use (another navmcp web?); choose another "
                  "with --port", file=sys.stderr)
        else:
            print(f"navmcp: cannot listen on {host} port {port}: {e.strerror or e}", file=sys.stderr)
        return None
    return sock


def _serve_web(app, sock: socket.socket, host: str, port: int, allow_hosts: list[str],
               forwarded_allow_ips: str = "") -> int:
    import json

    from navmcp.web import create_app

    extra = tuple(allow_hosts) + ((host,) if host not in ("0.0.0.0", "::", "") else ())
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal to the handler that was
    # installed before it: make that one a clean exit, so a stopped server reports success.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    from navmcp.config import RUNNING_FILE
    from navmcp.web import server  # uvicorn with timeouts for slow and stalled clients

    record = app.config.home / RUNNING_FILE
    mine = json.dumps({"base_url": _base_url(host, port), "pid": os.getpid()})
    try:  # so that `navmcp login-link` and `navmcp get` name this server's address
        record.write_text(mine)
    except OSError:
        record = None
    try:
        server.run(create_app(app, allowed_hosts=extra), host, port, sock=sock,
                   forwarded_allow_ips=forwarded_allow_ips)
    finally:
        try:
            if record is not None and record.read_text() == mine:  # not a later server's record
                record.unlink()
        except OSError:
            pass
    return 0


def cmd_web(args: argparse.Namespace) -> int:
    from navmcp.identity import ensure_owner
    from navmcp.web.auth import create_login_link

    app = _app()
    sock = _listen(args.host, args.port)
    if sock is None:
        return 1
    base = _base_url(args.host, args.port)
    print(f"navmcp web: {base}  (MCP over Streamable HTTP at {base}/mcp, with a Bearer token)")
    if app.embedded:
        owner = ensure_owner(app.store)
        link = create_login_link(app.store, owner["id"], base)
        print(f"Sign in as @{owner['handle']} with this one-time link (valid {LINK_MINUTES} minutes):\n  {link}")
    print(f"Serving {_workspace(app)}. Links for other people: {_again()} login-link HANDLE. Stop with Ctrl-C.",
          flush=True)
    return _serve_web(app, sock, args.host, args.port, args.allow_host, args.forwarded_allow_ips)


def cmd_login_link(args: argparse.Namespace) -> int:
    from navmcp.web.auth import create_login_link

    app = _app()
    user = _named_user(app, args.handle, "login-link")
    if user is None:
        return 1
    from navmcp.config import running_base_url

    running = running_base_url(app.config.home)
    base = args.base_url or running or DEFAULT_BASE_URL
    if args.base_url is None and running is None:
        # Another workspace's server may well answer at the default address: the link would fail there.
        print(f"navmcp: no `navmcp web` serves {_workspace(app)} now: this link works once `{_again()} web` runs "
              f"(at {DEFAULT_BASE_URL}), or give --base-url where this workspace is served", file=sys.stderr)
    print(f"navmcp: a sign-in link for @{user['handle']} in {_workspace(app)}, valid {args.minutes:g} minutes",
          file=sys.stderr)
    print(create_login_link(app.store, user["id"], base, minutes=args.minutes))
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    """Send the e-mail digests that are due (run it once a day); needs NAVMCP_SMTP_URL."""
    from navmcp.feeds.mail import SMTP_ENV, Smtp, send_digests

    url = os.environ.get(SMTP_ENV)
    if not url:
        print(f"navmcp: no e-mail is sent without {SMTP_ENV} (smtp://[user:password@]host[:port][?from=address])",
              file=sys.stderr)
        return 1
    try:
        smtp = Smtp.from_url(url)
    except ValueError as e:
        print(f"navmcp: {e}", file=sys.stderr)
        return 1
    app = _app()
    from navmcp.config import running_base_url

    base = args.base_url or running_base_url(app.config.home) or DEFAULT_BASE_URL
    print(f"{send_digests(app.store, smtp, base)} digest(s) sent.")
    return 0


def cmd_due(args: argparse.Namespace) -> int:
    """Write the inbox entries of deadlines due within a day (navmcp.feeds.due); `navmcp web` does it by itself."""
    from navmcp.feeds.due import sweep

    print(f"{sweep(_app().store)} deadline entr(ies) written.")
    return 0


def _command_path() -> str:
    from navmcp.config import command_path

    return command_path()


def cmd_migrate(args: argparse.Namespace) -> int:
    from navmcp.config import Config

    url = args.url or Config.from_env().database_url
    if not url or not url.startswith(("postgres://", "postgresql://")):
        print("navmcp: migrate applies supabase/migrations to PostgreSQL: set NAVMCP_DATABASE_URL=postgresql://... "
              "(the embedded SQLite store migrates itself)", file=sys.stderr)
        return 2
    from navmcp.store.postgres import migrate

    applied = migrate(url, say=lambda line: print(line, file=sys.stderr))
    print(f"{len(applied)} migration(s) applied" if applied else "the database is up to date", file=sys.stderr)
    return 0


def _mcp_server_command() -> str:
    """The stdio server's command for an MCP client, as navmcp was installed: a checkout's
    bin/mcp-server, else the `navmcp` script beside this Python (a wheel's venv has no bin/mcp-server)."""
    from navmcp.demo import walkthrough

    shim = walkthrough.ROOT / "bin" / "mcp-server"
    if shim.exists():
        return shlex.quote(str(shim))
    script = Path(sys.executable).parent / "navmcp"
    if script.exists():
        return f"{shlex.quote(str(script))} serve"
    return f"{shlex.quote(sys.executable)} -P -m navmcp serve"


def cmd_demo(args: argparse.Namespace) -> int:
    from navmcp.app import App
    from navmcp.config import Config, default_home
    from navmcp.demo import walkthrough
    from navmcp.identity import ensure_owner
    from navmcp.web.auth import create_login_link

    given = args.home or args.workspace
    home = Path(given).expanduser() if given else Path(str(default_home()) + "-demo")
    sock = None if args.no_serve else _listen(args.host, args.port)  # before the walkthrough: fail fast
    if sock is None and not args.no_serve:
        return 1
    print(f"Demo workspace: {home}\nA scripted agent now connects to navmcp's stdio MCP server and works in it.")
    created = walkthrough.run(home)
    print("\nThe agent's items:")
    for kind, url in created.items():
        print(f"  {kind:<11} {url}")
    app = App(Config(home=home, database_url=None, token=None))
    base = _base_url(args.host, args.port)
    server = _mcp_server_command()
    # The demo's workspace is not the default one: without NAVMCP_HOME, Claude Code would open an empty workspace.
    print(f"\nAdd this workspace to Claude Code:  claude mcp add navmcp -e NAVMCP_HOME={shlex.quote(str(home))} -- {server}")
    print(f"(your own workspace, at {default_home()}:  claude mcp add navmcp -- {server})")
    again = _again(home)
    print(f"Commands for this workspace take --home:  {again} user add HANDLE, {again} login-link HANDLE, "
          f"{again} token HANDLE")
    if sock is None:  # --no-serve
        print(f"Open any page yourself:  {again} get {created['decision']}")
        print(f"Or in a browser:  {again} web   (then follow the login link it prints)")
        return 0
    link = create_login_link(app.store, ensure_owner(app.store)["id"], base) + "&next=" + created["decision"]
    print(f"\nThe web app now serves the same pages at {base}")
    print(f"  1. Sign in: open this one-time link (valid {LINK_MINUTES} minutes) and press its button; "
          f"it then opens the agent's decision:\n     {link}")
    print(f"  2. The decision the agent created, for later:  {base}{created['decision']}")
    print("Stop with Ctrl-C.", flush=True)
    return _serve_web(app, sock, args.host, args.port, [])


def cmd_seed(args: argparse.Namespace) -> int:
    from navmcp.config import Config
    from navmcp.demo import seed

    config = Config.from_env()
    url = config.database_url
    try:
        if url:  # PostgreSQL: bulk COPY as the database owner (the URL must name it, as for `migrate`)
            print(seed.main(None, args.items, args.studio, args.json, url=url, studios=args.studios,
                            agent=args.agent_tasks))
        else:
            print(seed.main(_app().store, args.items, args.studio, args.json, studios=args.studios,
                            agent=args.agent_tasks))
    except ValueError as e:
        print(f"navmcp: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from navmcp.archive import backup
    from navmcp.config import Config

    config = Config.from_env()
    if config.database_url:
        print("navmcp: the PostgreSQL store is backed up with pg_dump (docs/hosting.md)", file=sys.stderr)
        return 1
    try:
        manifest = backup.backup(config.home, Path(args.path))
    except backup.BackupError as e:
        print(f"navmcp: {e}", file=sys.stderr)
        return 1
    print(f"backed up {config.home} to {args.path} (schema {manifest['schema_version']}, "
          f"integrity ok; files: {', '.join(manifest['files'])})", file=sys.stderr)
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from navmcp.archive import backup
    from navmcp.config import Config

    config = Config.from_env()
    if config.database_url:
        print("navmcp: the PostgreSQL store is restored with pg_restore (docs/hosting.md)", file=sys.stderr)
        return 1
    try:
        manifest = backup.restore(Path(args.path), config.home)
    except backup.BackupError as e:
        print(f"navmcp: {e}", file=sys.stderr)
        return 1
    print(f"restored {config.home} from {args.path} (made {manifest['created_at']}, schema "
          f"{manifest['schema_version']}); the store it replaced is {backup.DB}.before-restore", file=sys.stderr)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from navmcp.archive import ArchiveError
    from navmcp.archive.export import export_studio
    from navmcp.errors import NavError

    try:
        manifest = export_studio(_app().workspace, args.studio.lstrip("@"), Path(args.path))
    except ArchiveError as e:
        print(f"navmcp: {e}", file=sys.stderr)
        return 1
    except NavError as e:  # on PostgreSQL, a URL that is not the owner's
        print(f"navmcp: {e.message}", file=sys.stderr)
        return 1
    counts = ", ".join(f"{n} {t}" for t, n in manifest["counts"].items() if n)
    print(f"exported @{manifest['studio']} to {args.path}: {counts}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from navmcp.archive import ArchiveError
    from navmcp.archive.importer import import_studio
    from navmcp.errors import NavError

    try:
        made = import_studio(_app().store, Path(args.archive), args.as_handle.lstrip("@"))
    except ArchiveError as e:
        print(f"navmcp: nothing imported: {e}", file=sys.stderr)
        return 1
    except NavError as e:
        print(f"navmcp: nothing imported: {e.message}", file=sys.stderr)
        return 1
    by_email = f" (by e-mail: {', '.join(made['by_email'])})" if made["by_email"] else ""
    print(f"imported @{made['from']} as {made['url']}: {made['counts']['items']} items; people matched: "
          f"{', '.join(made['matched']) or 'none'}{by_email}"
          f"; placeholders made: {', '.join(made['placeholders']) or 'none'}",
          file=sys.stderr)
    return 0


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {value!r}")
    return number


def _positive(value: str) -> float:
    """A finite number greater than 0 (days, minutes): nan, inf and -1 made tracebacks or dead links."""
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number")
    return number


def _port(value: str) -> int:
    port = int(value)
    if not 1 <= port <= 65535:  # 99999 was bound as 99999 % 65536, and the printed link led nowhere
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (1-65535)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="navmcp", description="A team workspace for agents and people, "
                                     "served as pages over MCP.")
    parser.add_argument("--home", dest="workspace", metavar="DIR",
                        help="the workspace to act on: its folder (default: NAVMCP_HOME, else "
                             "~/.local/share/navmcp); `navmcp demo` makes one of its own")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the stdio MCP server (what bin/mcp-server runs)").set_defaults(func=cmd_serve)
    get = sub.add_parser("get", help="render one page to stdout")
    get.add_argument("url", help="a page's path, e.g. / or /studios/team/d/abc123 (see /help)")
    get.add_argument("--json", action="store_true", help="print the page as JSON (its data and actions) instead of markdown")
    get.set_defaults(func=cmd_get)
    user = sub.add_parser("user", help="manage users").add_subparsers(dest="user_command", required=True)
    add = user.add_parser("add", help="create a user")
    add.add_argument("handle", help="the user's handle: lowercase letters, digits, '-'")
    add.add_argument("--name", help="display name (default: the handle)")
    add.set_defaults(func=cmd_user_add)
    delete = user.add_parser("delete", help="delete a user (their tokens stop working)")
    delete.add_argument("handle", help="the user to delete")
    delete.add_argument("--force", action="store_true", help="even if a studio is left with no working admin")
    delete.set_defaults(func=cmd_user_delete)
    token = sub.add_parser("token", help="print a JWT that acts as a user (set it as NAVMCP_TOKEN)",
                           description="Print a JWT that acts as a user, and nothing else on stdout. Set it as "
                           "NAVMCP_TOKEN for `navmcp serve` / bin/mcp-server, or send it as `Authorization: Bearer "
                           "TOKEN` to `navmcp web` (pages, the action API, /mcp).")
    token.add_argument("handle", help="the user the token acts as (`navmcp user add HANDLE` creates one)")
    token.add_argument("--days", type=_positive, default=30, help="how long the token stays valid (default 30)")
    token.set_defaults(func=cmd_token)
    mig = sub.add_parser("migrate", help="apply the PostgreSQL migrations to NAVMCP_DATABASE_URL (harmless twice)")
    mig.add_argument("--url", help="database URL with a role that may create tables (default: NAVMCP_DATABASE_URL)")
    mig.set_defaults(func=cmd_migrate)
    demo = sub.add_parser("demo", help="a demo workspace and a scripted agent walkthrough over real MCP")
    demo.add_argument("--home", help="where the demo workspace lives (default: a folder beside NAVMCP_HOME's default)")
    demo.add_argument("--no-serve", action="store_true", help="stop after the walkthrough (don't start the web app)")
    demo.add_argument("--host", default="127.0.0.1", help="address the web app binds (default 127.0.0.1)")
    demo.add_argument("--port", type=_port, default=8765, help="port of the web app (default 8765)")
    demo.set_defaults(func=cmd_demo)
    web = sub.add_parser("web", help="serve the web app and MCP over Streamable HTTP (/mcp)")
    web.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    web.add_argument("--port", type=_port, default=8765, help="port to listen on (default 8765)")
    web.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                     help="another host name accepted in Host/Origin headers (DNS-rebinding protection)")
    # FORWARDED_ALLOW_IPS is uvicorn's (and gunicorn's) own name for it: a hosting team's habit is honoured.
    web.add_argument("--forwarded-allow-ips", metavar="IPS",
                     default=os.environ.get("NAVMCP_FORWARDED_ALLOW_IPS") or os.environ.get("FORWARDED_ALLOW_IPS", ""),
                     help="comma-separated addresses of the reverse proxies whose X-Forwarded-For and "
                          "X-Forwarded-Proto are believed (default: none; env NAVMCP_FORWARDED_ALLOW_IPS "
                          "or FORWARDED_ALLOW_IPS)")
    web.set_defaults(func=cmd_web)
    link = sub.add_parser("login-link", help="print a one-time web login link for a user")
    link.add_argument("handle", help="the user the link signs in")
    link.add_argument("--base-url", help="where `navmcp web` is reached (default: the address of the one "
                      f"serving this NAVMCP_HOME while it runs, else {DEFAULT_BASE_URL})")
    link.add_argument("--minutes", type=_positive, default=LINK_MINUTES, help="how long the link stays valid")
    link.set_defaults(func=cmd_login_link)
    digest = sub.add_parser("digest", help="e-mail each person who wants it a digest of their unread inbox "
                            "(once a day; needs NAVMCP_SMTP_URL)")
    digest.add_argument("--base-url", help="where `navmcp web` is reached, for the links (default: as login-link)")
    digest.set_defaults(func=cmd_digest)
    due = sub.add_parser("due", help="tell each person of the decisions and commitments awaiting them that are due "
                         "within a day, in their inbox (`navmcp web` does it every 5 minutes; without it, run this "
                         "from cron)")
    due.set_defaults(func=cmd_due)
    seed = sub.add_parser("seed", help="fill the database with a studio of N realistic items (benchmarks); "
                                       "on PostgreSQL connect as the owner")
    seed.add_argument("--items", type=int, required=True, help="how many notes, decisions and commitments")
    seed.add_argument("--studio", default="bench", help="handle of the studio to create (default: bench)")
    seed.add_argument("--studios", type=_at_least_one, default=1,
                      help="share the items out over this many studios: STUDIO, STUDIO-2, ... (default: 1)")
    seed.add_argument("--agent-tasks", action="store_true",
                      help="also add the items the agent-task benchmark looks for (bench/agent_tasks.py)")
    seed.add_argument("--json", action="store_true", help="print a JSON summary with the fixture URLs")
    seed.set_defaults(func=cmd_seed)
    back = sub.add_parser("backup", help="copy the embedded store and its secret into a new folder, while it serves "
                                         "(SQLite's online backup, checked)")
    back.add_argument("path", help="the folder to create (it must not exist, or be empty)")
    back.set_defaults(func=cmd_backup)
    rest = sub.add_parser("restore", help="put a backup folder in place as the store (refused while an instance "
                                          "has the store open; the backup is checked first)")
    rest.add_argument("path", help="a folder made by `navmcp backup`")
    rest.set_defaults(func=cmd_restore)
    exp = sub.add_parser("export", help="write a studio to a zip archive: its data as JSON lines, its files, every "
                                        "item's page as markdown, a manifest with checksums (PostgreSQL: with the "
                                        "owner's URL, as migrate)")
    exp.add_argument("studio", help="the studio's handle")
    exp.add_argument("path", help="the archive to create, e.g. team.navmcp.zip")
    exp.set_defaults(func=cmd_export)
    imp = sub.add_parser("import", help="create a new studio from an archive (new ids; people matched by handle, "
                                        "or e-mail with Supabase Auth, else placeholders); checked whole before "
                                        "anything is written, then one "
                                        "transaction (PostgreSQL: with the owner's URL, as migrate)")
    imp.add_argument("archive", help="an archive made by `navmcp export`")
    imp.add_argument("--as", dest="as_handle", required=True, metavar="HANDLE", help="the new studio's handle")
    imp.set_defaults(func=cmd_import)
    return parser


def main(argv: list[str] | None = None) -> int:
    # Every file a navmcp process makes (the database, its WAL, the secret) is its owner's alone.
    os.umask(0o077)
    _setup_logging()
    args = build_parser().parse_args(argv)
    if args.workspace:  # before any Config is read: every command acts on this workspace
        os.environ["NAVMCP_HOME"] = args.workspace
    try:
        return args.func(args)
    except OSError as e:  # a file it may not write, a full disk: one line, not a traceback
        logging.getLogger("navmcp.cli").debug("command failed", exc_info=True)
        print(f"navmcp: {e.strerror or e}{f': {e.filename}' if e.filename else ''}", file=sys.stderr)
        return 1
