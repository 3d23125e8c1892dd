"""The two MCP tools and the session that runs them.

The tool list is static (it never changes); what changes per page lives in the page. This module
is imported at start-up, so it imports nothing heavy: the workspace, pydantic and the templates
load on the first tool call.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from navmcp import __version__, ratelimit
from navmcp.errors import AuthError, NavError, echo
from navmcp.mcp.views import HTML_META, TOOL_META
from navmcp.state import NavigationState, NoCurrentPage

if TYPE_CHECKING:
    from navmcp.app import App
    from navmcp.protocol import Connection

log = logging.getLogger("navmcp.mcp.tools")

INSTRUCTIONS = (
    "navmcp is a team workspace (studios with notes, decisions, commitments) that you use like a website. "
    "Call navigate('/') to see your studios and what awaits you, or navigate('/help') for the URL map. "
    "Every page lists the actions valid there; run one with execute_action(action, params, url). "
    "Mention page URLs to people: they open the same pages in their browser."
)

_ACTIONS_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "input_schema": {"type": "object"},
        },
        "required": ["name", "description", "input_schema"],
    },
}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "navigate",
        "title": "Navigate to a page",
        "description": (
            "Open a page of the navmcp workspace by its URL-like path and read it: markdown content plus the "
            "actions you can take there right now. Navigating never changes anything. URLs are shared with "
            "people: a human opening the same path in the web app sees the same page, so mention URLs freely. "
            "Start at '/' (your studios and what awaits you) or '/help'. Examples: '/studios/team' (a studio's "
            "feed), '/studios/team/d/abc123' (a decision), '/studios/team/cycles/today', "
            "'/studios/team/search?q=standup', '/search?q=standup' (all your studios). A long text comes in parts: add "
            "'?full=1' to an item's URL to read all of it at once."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "Path of the page, e.g. '/studios/team/n/k3f9q2'"},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"url": {"type": "string"}, "title": {"type": "string"}, "actions": _ACTIONS_SCHEMA},
            "required": ["url", "title", "actions"],
        },
        "annotations": {"title": "Navigate to a page", "readOnlyHint": True, "idempotentHint": True,
                        "destructiveHint": False, "openWorldHint": False},
        "_meta": TOOL_META,  # the page's view in hosts that render MCP Apps; the same list for every client
    },
    {
        "name": "execute_action",
        "title": "Execute an action on a page",
        "description": (
            "Run one action listed under '## Available actions' on a page, e.g. create_note on '/studios/team' "
            "or vote on '/studios/team/d/abc123'. Pass `url` (the page the action belongs to) to make the call "
            "self-contained (over MCP 2026-07-28 on HTTP it is required); without it the action runs on the page you "
            "navigated to last. `params` follow the "
            "action's parameter list. The answer says what changed, the URL of the page acted on or created, and "
            "the actions valid there now. A refused action explains why and lists what is valid instead."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "description": "An action name from the page, e.g. 'create_note'"},
                "params": {"type": "object", "description": "The action's parameters", "additionalProperties": True},
                "url": {"type": "string", "description": "The page the action is on; defaults to the page you navigated to last"},
            },
            "required": ["action"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "ok": {"type": "boolean"},
                "message": {"type": "string"},
                "url": {"type": "string"},
                "actions": {"type": "array", "items": {"type": "string"}},
                "held": {"type": "object", "description": "present when the write was held for approval, not done"},
            },
            "required": ["ok", "message", "url", "actions"],
        },
        "annotations": {"title": "Execute an action", "readOnlyHint": False, "destructiveHint": True,
                        "idempotentHint": False, "openWorldHint": False},
    },
]
TOOL_NAMES = frozenset(t["name"] for t in TOOLS)
_ARGUMENTS: dict[str, dict[str, type]] = {"navigate": {"url": str},
                                          "execute_action": {"action": str, "params": dict, "url": str}}
_REQUIRED: dict[str, tuple[str, ...]] = {"navigate": ("url",), "execute_action": ("action",)}
_TYPE_NAMES: dict[type, str] = {str: "a string", dict: "an object"}


def tool_error(text: str, structured: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def check_arguments(tool: str, arguments: dict[str, Any]) -> str | None:
    """The first way `arguments` fails the tool's input schema, named for the model; None if valid."""
    fields = _ARGUMENTS[tool]
    for name in _REQUIRED[tool]:
        if arguments.get(name) is None:
            return f"{tool}: missing required argument '{name}'"
    for name, value in arguments.items():
        if name not in fields:
            return f"{tool}: unknown argument '{echo(name)}'; arguments are {', '.join(fields)}"
        if value is not None and not isinstance(value, fields[name]):
            return f"{tool}: argument '{name}' must be {_TYPE_NAMES[fields[name]]}"
        if type(value) is str and "\x00" in value:  # no URL or action name has one (`params` are checked by their action)
            return f"{tool}: argument '{name}' must not contain NUL (U+0000)"
    return None


def client_label(name: Any) -> str:
    """How a client's `clientInfo.name` is kept (audit, sessions): one printable line of up to 100
    characters. It is the client's to choose, so a NUL (which PostgreSQL refuses in any text, so
    every write of the session failed) or a line break is dropped, not stored."""
    text = str(name)[:200] if name else ""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text.replace("\x00", ""))
    return " ".join(text.split())[:100] or "unknown"


_UNNAMED = object()


class Session:
    """One MCP session: who it acts as, which client it is, where it is (implements `ToolHost`)."""

    def __init__(self, app: App, token: str | None, state: NavigationState | None = None, *,
                 user: Any = None, client: str = "unknown", granted_client: str | None = None,
                 protocol_version: str | None = None):
        """`user`: the token's user when the transport verified it already (HTTP, once per
        request): calls act as it without checking the token again. `client`, `protocol_version`:
        a stored session's, resumed. `granted_client`: an OAuth grant's app name, which the audit
        names whatever the client calls itself."""
        self.app = app
        self.token = token
        self.verified_user = user
        self.client = granted_client or client
        self.granted_client = granted_client
        self.protocol_version = protocol_version
        self.state = state or NavigationState()
        self._named: Any = _UNNAMED  # the `clientInfo.name` that `client` was made from

    # ToolHost
    def tool_definitions(self) -> list[dict[str, Any]]:
        return TOOLS

    def tool_names(self) -> frozenset[str]:
        return TOOL_NAMES

    def identify(self, client_info: dict[str, Any], protocol_version: str) -> None:
        name = client_info.get("name")
        if name != self._named:  # a modern client names itself in every request: its label is made once
            self._named = name
            self.client = self.granted_client or client_label(name)
        self.protocol_version = protocol_version

    def group(self) -> AbstractContextManager[Any]:
        store = self.app.__dict__.get("store")  # not opened yet: the first tool call opens it
        return store.group() if store is not None else nullcontext()

    def call_tool(self, name: str, arguments: dict[str, Any], idempotency_key: Any = None, *,
                  views: bool = False, from_view: bool = False, elicit: bool = False, tasks: bool = False,
                  answer: tuple[Any, Any] | None = None) -> dict[str, Any]:
        """`views`: the client renders MCP Apps views, so `navigate` adds the page's HTML for one;
        `from_view`: the call comes from a view, whose navigating moves no current page (navmcp.mcp.views).
        `elicit`: the client takes form elicitations (2026-07-28), so a held write its person may
        approve asks them; `answer`: a retry's (inputResponses, requestState) (navmcp.held.elicit).
        `tasks`: the client takes tasks (Tasks extension), so a held write is one (navmcp.held.tasks)."""
        problem = check_arguments(name, arguments)
        if problem:
            return tool_error(problem)
        try:
            user = self._acting_user(name, arguments)
            if name == "navigate":
                return self._navigate(user, arguments["url"], views, moves=not from_view)
            if answer is not None:
                return self._answered(user, arguments, answer, idempotency_key)
            return self._execute(user, arguments["action"], arguments.get("params"), arguments.get("url"),
                                 idempotency_key, elicit, tasks)
        except AuthError as e:
            return tool_error(f"authentication failed: {e.message}")
        except NoCurrentPage as e:
            return tool_error(f"execute_action: {e}")
        except NavError as e:
            if name == "execute_action" and e.url is not None:
                structured = {"ok": False, "message": e.message, "url": e.url, "actions": e.available}
                if e.fields:  # the parameters refused, as data (the message names them too)
                    structured["fields"] = [f.public() for f in e.fields]
                return tool_error(e.message, structured)
            return tool_error(e.message)

    # Resources, prompts and completion read pages as `navigate` does, as the same user, moving nothing.

    def user(self):
        """Who this call acts as (counted by the rate limiter, like a tool call); a refused token is a
        protocol error here, where there is no tool result to carry it."""
        from navmcp.protocol import InvalidRequest

        try:
            return self._acting_user("read", {})
        except AuthError as e:
            raise InvalidRequest(f"authentication failed: {e.message}") from None
        except NavError as e:  # rate limited
            raise InvalidRequest(e.message) from None

    def _acting_user(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Who a call acts as: the user verified by the transport, else the token's. Without a rate
        limit, the token's principal (the call's own transaction reads the user's row); with one,
        the user, counted and audited before any work (`ratelimit.enforce`)."""
        limiter = self.app.rate_limiter
        if limiter is None:
            return self.verified_user if self.verified_user is not None else self.app.principal(self.token)
        user = self.verified_user if self.verified_user is not None else self.app.authenticate(self.token)
        ratelimit.enforce(limiter, self.app.store, self.token, user, self.client, tool, arguments)
        return user

    def user_id(self) -> str:
        user = self.user()
        return user.user_id if hasattr(user, "user_id") else user["id"]

    def page(self, url: str):
        """The page at `url` as `navigate` renders it (NavError when there is none for this user)."""
        return self.app.workspace.page(self.user(), url, self.client)

    def list_resources(self, cursor: Any) -> dict[str, Any]:
        from navmcp.mcp import resources

        return resources.list_resources(self, cursor)

    def list_resource_templates(self) -> dict[str, Any]:
        from navmcp.mcp import resources

        return resources.list_templates()

    def read_resource(self, uri: Any) -> dict[str, Any]:
        from navmcp.mcp import resources

        return resources.read(self, uri)

    def watch(self, uri: Any, notify, end):
        """Watch the page a resource URI names, as this session's user (`navmcp.feeds.changes`); a resource
        that does not exist for them is refused as `resources/read` refuses it. A handle for `unwatch`."""
        from navmcp.feeds.changes import Watcher, interest
        from navmcp.mcp import resources

        page = resources.page_of(self, uri)
        user_id = page.user["id"]
        with self.app.store.read(user_id=user_id) as tx:
            wanted = interest(tx, user_id, page.url)
        if wanted is None:  # a page no change alters (help)
            return None
        watcher = Watcher(wanted, notify, end)
        self.app.feed.add(watcher)
        return watcher

    def unwatch(self, handle) -> None:
        if handle is not None:
            self.app.feed.remove(handle)

    def position(self) -> str:
        return self.app.feed.position()

    def missed(self, position: str, handle) -> bool:
        return self.app.feed.missed(position, handle.interest)

    def list_prompts(self) -> dict[str, Any]:
        from navmcp.mcp import prompts

        return prompts.list_prompts()

    def get_prompt(self, name: Any, arguments: Any) -> dict[str, Any]:
        from navmcp.mcp import prompts

        return prompts.get(self, name, arguments)

    def complete(self, ref: Any, argument: Any, context: Any) -> dict[str, Any]:
        from navmcp.mcp import completion

        return completion.complete(self, ref, argument, context)

    def _navigate(self, user, url: str, views: bool = False, moves: bool = True) -> dict[str, Any]:
        page = self.app.workspace.page(user, url, self.client)
        if moves:
            self.state.arrive(page.url, [a.name for a in page.actions])
        content: list[dict[str, Any]] = [{"type": "text", "text": page.markdown}]
        if page.name == "file" and page.data["file"]["kind"] == "image":
            content += self._image_block(user, page)
        result = {"content": content, "structuredContent": page.structured_preencoded(), "isError": False}
        if views:  # the page as the chat's view shows it, where the model does not read it (navmcp.mcp.views)
            from navmcp.mcp import views as view

            result["_meta"] = {HTML_META: view.fragment(page)}
        return result

    def _image_block(self, user, page) -> list[dict[str, Any]]:
        """An image file's page comes with the image itself, when it is small enough."""
        import base64

        from navmcp.content import attachments

        if page.data["file"]["size"] > attachments.IMAGE_BLOCK_MAX_BYTES:
            return []
        file, data = self.app.workspace.file(user, page.url, self.client)  # an image, shown as one
        return [{"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": file["content_type"]}]

    def file(self, url: str):
        """The file whose page is at `url`, and its bytes (NavError when there is none for this user)."""
        return self.app.workspace.file(self.user(), url, self.client)

    def _execute(self, user, action: str, params: dict[str, Any] | None, url: str | None,
                 idempotency_key: Any = None, elicit: bool = False, tasks: bool = False,
                 said: str = "") -> dict[str, Any]:
        # Only navigate moves the current page: an action's outcome names its own URL, and the page
        # the model read last stays the one a url-less call means.
        result = self.app.workspace.execute(user, self.state.target(url), action, params, self.client,
                                            idempotency_key=idempotency_key)
        if (elicit or tasks) and result.held is not None:
            # Held actions are imported where a write was held: initialize stays light (test_startup).
            from navmcp.held import elicit as held_elicit, tasks as held_tasks

            user_id = user.user_id if hasattr(user, "user_id") else user["id"]
            with self.app.store.read(user_id=user_id) as tx:
                held = held_elicit.offer(tx, result.held["id"], user_id) if elicit else None
                found = held_tasks.find(tx, result.held["id"], user_id) if tasks and held is None else None
            if held is not None:  # the person can say yes at once: better than a task that waits
                state = held_elicit.sign(self.app.secret, user_id, held["id"], result.held["url"],
                                         held_elicit.call_digest(action, params, url))
                return held_elicit.input_required(held, state)
            if found is not None:
                return held_tasks.created(*found)
        return _outcome(result, said)

    def get_task(self, task_id: Any) -> dict[str, Any]:
        """A held write's task as of now (navmcp.held.tasks); one this user may not read is unknown."""
        from navmcp.held import tasks as held_tasks
        from navmcp.protocol import InvalidParams

        user_id = self.user_id()
        with self.app.store.read(user_id=user_id) as tx:
            found = held_tasks.find(tx, task_id, user_id)
            if found is None:
                raise InvalidParams(f"Invalid params: no task {echo(str(task_id))[:80]!r} here")
            return held_tasks.detailed(tx, *found)

    def cancel_task(self, task_id: Any) -> None:
        """Withdraw the held write a task is, where this user asked for it and it still waits."""
        from navmcp.held import tasks as held_tasks
        from navmcp.held.hold import held_url

        user = self.user()
        user_id = user.user_id if hasattr(user, "user_id") else user["id"]
        with self.app.store.read(user_id=user_id) as tx:
            found = held_tasks.find(tx, task_id, user_id)
        if found is None or found[0]["requester_id"] != user_id or found[0]["status"] != "pending":
            return
        try:
            self.app.workspace.execute(user, held_url(found[1], found[0]["id"]), "withdraw", {}, self.client)
        except NavError:
            pass  # decided or expired meanwhile: cancellation is cooperative, and the task says what became of it

    def _answered(self, user, arguments: dict[str, Any], answer: tuple[Any, Any],
                  idempotency_key: Any) -> dict[str, Any]:
        """A retry carrying the person's answer to a held action's elicitation: approve or withdraw
        it as they said, in the held page's own actions. A state this server did not sign for this
        person and call, or signed too long ago, decides nothing: the call is answered as at first
        (the same hold, still pending), and no question is asked again."""
        from navmcp.held import elicit as held_elicit

        responses, state = answer
        action, params, url = arguments["action"], arguments.get("params"), arguments.get("url")
        user_id = user.user_id if hasattr(user, "user_id") else user["id"]
        try:
            _, held_url = held_elicit.verify(self.app.secret, state, user_id,
                                             held_elicit.call_digest(action, params, url))
        except held_elicit.BadState as e:
            return self._execute(user, action, params, url, idempotency_key,
                                 said=f"Your answer was not used ({e}); nothing was approved.")
        decision, note = held_elicit.read(responses)
        if decision == "wait":
            return self._execute(user, action, params, url, idempotency_key,
                                 said="No answer was given; nothing was approved.")
        result = self.app.workspace.execute(user, held_url, decision, {"note": note} if decision == "approve" else {},
                                            self.client, in_client=True)
        return _outcome(result)


def _outcome(result, said: str = "") -> dict[str, Any]:
    actions = ", ".join(result.actions) or "none"
    mark = "⏸" if result.held is not None else "✓"  # held: not done yet, and it says so
    text = f"{mark} {said + ' ' if said else ''}{result.message}\nURL: {result.url}\nAvailable there now: {actions}\n"
    return {"content": [{"type": "text", "text": text}], "structuredContent": result.structured(), "isError": False}


def connection(session: Session, **options: Any) -> Connection:
    """An MCP protocol connection whose host is `session`: the one place the server names itself.
    `options` are `Connection`'s (the era, and what the transport can send)."""
    from navmcp.protocol import Connection

    return Connection(session, name="navmcp", version=__version__, instructions=INSTRUCTIONS, **options)


def connect(app: App, token: str | None) -> Connection:
    """A fresh MCP connection bound to a new session of `app` that acts with `token` (stdio, tests)."""
    return connection(Session(app, token))
