"""The `navmcp` command. Sub-commands import what they need, so `serve` starts fast."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path


def _setup_logging() -> None:
    level = os.environ.get("NAVMCP_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _app():
    from navmcp.app import App

    return App()


def cmd_serve(args: argparse.Namespace) -> int:
    from navmcp.stdio import serve

    app = _app()
    return serve(app.connection(app.config.token))


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
    sys.stdout.write(json.dumps(page.structured(), indent=2) + "\n" if args.json else page.markdown)
    return 0


def cmd_user_add(args: argparse.Namespace) -> int:
    from navmcp.errors import NavError
    from navmcp.identity import create_user, ensure_owner

    app = _app()
    ensure_owner(app.store)
    try:
        with app.store.write() as tx:
            user = create_user(tx, args.handle, args.name)
    except NavError as e:
        print(f"navmcp: {e.message}", file=sys.stderr)
        return 1
    print(f"created user @{user['handle']} (id {user['id']}); `navmcp token {user['handle']}` prints a token",
          file=sys.stderr)
    return 0


def cmd_user_delete(args: argparse.Namespace) -> int:
    from navmcp.errors import NavError
    from navmcp.identity import delete_user, ensure_owner

    app = _app()
    ensure_owner(app.store)
    try:
        with app.store.write() as tx:
            user = delete_user(tx, args.handle)
    except NavError as e:
        print(f"navmcp: {e.message}", file=sys.stderr)
        return 1
    print(f"deleted user @{user['handle']}: their tokens no longer work", file=sys.stderr)
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from navmcp.identity import ensure_owner, mint_token, user_by_handle

    app = _app()
    ensure_owner(app.store)
    with app.store.read() as tx:
        user = user_by_handle(tx, args.handle)
    if user is None:
        print(f"navmcp: no user {args.handle!r}; create one with `navmcp user add {args.handle}`", file=sys.stderr)
        return 1
    print(mint_token(app.secret, user["id"], days=args.days))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from navmcp.config import default_home
    from navmcp import walkthrough

    home = Path(args.home) if args.home else Path(str(default_home()) + "-demo")
    print(f"Demo workspace: {home}\nA scripted agent now connects to bin/mcp-server over MCP (stdio) and works in it.")
    created = walkthrough.run(home)
    print("\nThe agent created:")
    for kind, url in created.items():
        print(f"  {kind:<11} {url}")
    print(f"\nOpen any page yourself:  NAVMCP_HOME={home} navmcp get {created['decision']}")
    shim = walkthrough.ROOT / "bin" / "mcp-server"
    print(f"Add navmcp to Claude Code:  claude mcp add navmcp -- {shim}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="navmcp", description="A team workspace for agents and people, "
                                     "served as pages over MCP.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the stdio MCP server (what bin/mcp-server runs)").set_defaults(func=cmd_serve)
    get = sub.add_parser("get", help="render one page to stdout")
    get.add_argument("url")
    get.add_argument("--json", action="store_true", help="print the structured page instead of markdown")
    get.set_defaults(func=cmd_get)
    user = sub.add_parser("user", help="manage users").add_subparsers(dest="user_command", required=True)
    add = user.add_parser("add", help="create a user")
    add.add_argument("handle")
    add.add_argument("--name")
    add.set_defaults(func=cmd_user_add)
    delete = user.add_parser("delete", help="delete a user (their tokens stop working)")
    delete.add_argument("handle")
    delete.set_defaults(func=cmd_user_delete)
    token = sub.add_parser("token", help="print a JWT that acts as a user (set it as NAVMCP_TOKEN)")
    token.add_argument("handle")
    token.add_argument("--days", type=float, default=30)
    token.set_defaults(func=cmd_token)
    demo = sub.add_parser("demo", help="a demo workspace and a scripted agent walkthrough over real MCP")
    demo.add_argument("--home", help="where the demo workspace lives (default: a folder beside NAVMCP_HOME's default)")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    _setup_logging()
    args = build_parser().parse_args(argv)
    return args.func(args)
