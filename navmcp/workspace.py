"""The workspace as its users meet it: render a page, execute an action, audit the write.

This is the one entry point shared by the MCP tools, the web app and the command line. It owns the
transaction boundaries: a page is one read transaction; an action is one write transaction in
which the page is resolved again, the action's rules are re-checked on that fresh data, and the
handler runs — so a decision that closed since you looked refuses the vote. Given a `Principal`
(a checked token), either reads the acting user's row inside that same transaction.
"""

from __future__ import annotations

import functools
import itertools
import logging
import time
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

from navmcp import actions as action_table, idempotency
from navmcp.clock import now
from navmcp.content import attachments, deletion
from navmcp.errors import ActionFailed, ActionUnavailable, AuthError, Busy, InvalidActionParams, NavError, NotFound
from navmcp.feeds import changes
from navmcp.held import hold as held, rules as hold_rules
from navmcp.identity import Principal
from navmcp.page import ActionInfo, Page
from navmcp.pages import PageSpec, Request, make_request
from navmcp.store import Row, Store

log = logging.getLogger("navmcp.workspace")


@dataclass
class Result:
    ok: bool
    message: str
    url: str
    actions: list[str]
    held: dict[str, Any] | None = None  # not done yet: held for approval (navmcp.held), where and for whom

    def structured(self) -> dict[str, Any]:
        done = {"ok": self.ok, "message": self.message, "url": self.url, "actions": self.actions}
        return done if self.held is None else {**done, "held": self.held}


AUDIT_PRUNE_EVERY = 1024  # audit lines this process writes between two prunes of expired ones
AUDIT_PRUNE_MOST = 10_000  # expired lines one prune deletes at most
_audit_lines = itertools.count(1)

AUDIT_SQL = ("INSERT INTO audit (at, user_id, client, studio_id, url, action, param_names, outcome, duration_ms)"
             " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")


def write_audit(tx, user_id: str, client: str, studio_id: str | None, url: str, action: str,
                params: Any, outcome: str, started: float | None, retention_days: int = 0) -> None:
    """One audit row, each text cut to its column's bound: every audited attempt is written here
    (an action, its refusal, a rate-limited call). Parameters are recorded by name only; the
    duration runs from `started` (`time.perf_counter()`), or is 0 for a call refused before any work.
    Every AUDIT_PRUNE_EVERY-th line of the process also deletes lines older than `retention_days`."""
    # json.dumps(sorted(params)) without its Python-level encoder: a JSON object's keys are strings.
    names = "[" + ", ".join(map(encode_basestring_ascii, sorted(params))) + "]" if isinstance(params, dict) else "[]"
    tx.execute(AUDIT_SQL, (now(), user_id, client[:100], studio_id, url[:500], action[:100], names[:1000],
                           outcome[:300], 0 if started is None else round((time.perf_counter() - started) * 1000, 3)))
    if retention_days and next(_audit_lines) % AUDIT_PRUNE_EVERY == 0:  # (0: the audit is kept forever)
        tx.prune_audit(retention_days, AUDIT_PRUNE_MOST)


@functools.cache
def action_info(action: action_table.Action) -> ActionInfo:
    """What a page lists about an action: static per action, so built once per process."""
    return ActionInfo(action.name, action.description, action.input_schema, action_table.param_docs(action))


class Workspace:
    def __init__(self, store: Store, audit_retention_days: int = 0):
        self.store = store
        self.audit_retention_days = audit_retention_days  # audit lines older are pruned (0: kept forever)

    def page(self, user: Row | Principal, url: str, client: str = "unknown", browser: bool = False) -> Page:
        with self.store.read(user_id=_user_id(user)) as tx:
            user = _user_in(tx, user)
            spec, req = make_request(tx, user, client, url, browser=browser)
            spec.resolve(req)
            data = spec.view(req)
            actions = [action_info(a) for a in action_table.available(spec.name, req)]
        return Page(url=req.url, name=spec.name, title=data["title"], breadcrumb=data["breadcrumb"],
                    data=data, actions=actions, template=spec.template, user=user)

    def file(self, user: Row | Principal, url: str, client: str = "unknown") -> tuple[Row, bytes]:
        """The file whose page is at `url` (`navmcp.pages.files`), as its page says and its bytes,
        when this user may see that page; `NotFound` otherwise, as for the page."""
        with self.store.read(user_id=_user_id(user)) as tx:
            user = _user_in(tx, user)
            spec, req = make_request(tx, user, client, url)
            if spec.name != "file":
                raise NotFound(f"{req.path[:200]} is not a file's page")
            spec.resolve(req)
            assert req.item is not None
            data = attachments.content(tx, req.item, req.facts["file"]["id"])
        if data is None:  # removed between the two statements of a read (the hosted store's read committed)
            raise NotFound(f"no file at {req.path}")
        return req.facts["file"], data

    def execute(self, user: Row | Principal, url: str, name: str, params: dict[str, Any] | None,
                client: str = "unknown", idempotency_key: str | None = None, browser: bool = False,
                in_client: bool = False, zone: str | None = None) -> Result:
        """Run one action on the page at `url`. Refusals raise typed `NavError`s; every attempt by a
        user who exists is audited. With `idempotency_key`, a repeat of the call is answered as the
        first was and applies nothing (`navmcp.idempotency`). `browser`: a person's browser session
        (hold rules are theirs to change, and rules for agents' writes pass them by). A write a hold
        rule covers is stored, not applied (`navmcp.held`), and answered "not done yet". `in_client`:
        the person's own answer to an elicitation in their MCP client, verified (`navmcp.held.elicit`).
        `zone`: the person's browser's time zone, which a deadline is read in when they set none
        (navmcp.clock.zones)."""
        started = time.perf_counter()
        studio_id, target, user_id = None, url, _user_id(user)
        key = idempotency.checked(idempotency_key)
        try:
            with self.store.write(user_id=user_id, client=client) as tx:
                if key is not None:
                    earlier = idempotency.claim(tx, user_id, key, name, url)
                    if earlier is not None:
                        return Result(**earlier)
                user = _user_in(tx, user)
                spec, req = make_request(tx, user, client, url, acting=True, browser=browser, in_client=in_client,
                                         zone=zone)
                target = req.url
                spec.resolve(req)
                studio_id = req.studio["id"] if req.studio else None
                action, valid = action_table.check(spec.name, name, req)
                parsed = action.parse(params, req, valid)
                # One dict read for a studio without rules (its count comes with the studio's row).
                if req.studio is not None and req.studio.get("hold_rules") and (
                        rule := hold_rules.covering(req, name)) is not None:
                    summary = held.hold(req, action, params, parsed, rule)
                    write_audit(tx, user_id, client, studio_id, target, name, params, "held: " + summary["url"],
                                started, self.audit_retention_days)
                    result = Result(True, summary["message"], summary["url"], ["withdraw"], summary["held"])
                    if key is not None:
                        idempotency.settle(tx, user_id, key, result.structured())
                    return result
                try:
                    outcome = action.run(req, parsed)
                except (ActionFailed, InvalidActionParams) as e:  # the handler knows the reason, not the page
                    raise type(e)(f"{name} failed: {e.message.rstrip('.')}. {action_table.valid_here(valid)}",
                                  url=req.url, available=valid, fields=e.fields) from None
                studio_id = req.studio["id"] if req.studio else changes.studio_of(tx, outcome.url)
                if outcome.changed:
                    changes.record(tx, user_id, studio_id,
                                   req.item["id"] if req.item else changes.item_of(outcome.url), name)
                if outcome.url == req.path and not action.changes_facts:
                    after = valid  # judged by `check` on the very facts the action left as they were
                else:
                    after = self._actions_after(spec, req, outcome.url)
                write_audit(tx, user_id, client, studio_id, target, name, params,
                            "ok" if outcome.changed else "unchanged", started, self.audit_retention_days)
                deletion.purge_now_and_then(tx)  # items deleted 30 days ago go for good (navmcp.content.deletion)
                if (ran := req.facts.get("held_run")) is not None:  # an approval ran a held action: its own line,
                    # in the requester's name and client ("bob via claude-ai, approved by alice")
                    with tx.act_as(ran["user_id"], ran["client"]):
                        write_audit(tx, ran["user_id"], ran["client"], studio_id, ran["url"], ran["action"],
                                    ran["params"], ran["outcome"], None, self.audit_retention_days)
                result = Result(True, outcome.message, outcome.url, after)
                if key is not None:
                    idempotency.settle(tx, user_id, key, result.structured())
            if outcome.after is not None and (more := outcome.after()):  # its write is done (see Outcome)
                result = Result(True, f"{result.message} {more}", result.url, result.actions)
            return result
        except AuthError:
            raise  # no such user (deleted a moment ago): nobody to audit the attempt for
        except Busy:
            raise  # its audit would wait for the same lock; nothing of the call was applied
        except NavError as e:
            self._audit_refusal(user_id, client, studio_id, target, name, params, e, started)
            raise

    @staticmethod
    def _actions_after(spec: PageSpec, req: Request, url: str) -> list[str]:
        """What is valid now on the page the action acted on or created, judged in its transaction."""
        if url == req.path:  # the page acted on: no need to parse and route its URL again
            req = Request(tx=req.tx, user=req.user, client=req.client, path=req.path, query={}, args=req.args,
                          acting=True)
        else:
            spec, req = make_request(req.tx, req.user, req.client, url, acting=True)
        spec.resolve(req)
        return [a.name for a in action_table.available(spec.name, req)]

    def _audit_refusal(self, user_id, client, studio_id, url, name, params, error: NavError, started) -> None:
        kind = {ActionUnavailable: "refused", InvalidActionParams: "invalid params", ActionFailed: "failed"}.get(
            type(error), "error")
        try:
            with self.store.write(user_id=user_id, client=client) as tx:
                write_audit(tx, user_id, client, studio_id, url, name, params, f"{kind}: {error.message}", started,
                            self.audit_retention_days)
        except Exception:  # the audit must never turn a clear refusal into an internal error
            log.exception("could not audit a refused action")


def _user_id(user: Row | Principal) -> str:
    return user.user_id if isinstance(user, Principal) else user["id"]


def _user_in(tx, user: Row | Principal) -> Row:
    """The acting user's row: the one given, or a `Principal`'s read now, in the call's transaction."""
    return user.user(tx) if isinstance(user, Principal) else user
