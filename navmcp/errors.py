"""Typed faults of the workspace. The MCP tools and the web app each turn them into answers in one
place; the messages are written for the agent and teach the next step.

Faults of an action carry the page's `url` and the actions that *are* `available` there, so every
refusal can say what to do instead; a refusal of its parameters names each one it refuses and why
(`fields`), which a form reads to mark its inputs and a JSON answer carries as data.
"""

from __future__ import annotations

from dataclasses import dataclass


def echo(text: object, limit: int = 80) -> str:
    """User-chosen text (a method, tool, action or parameter name) as an error message quotes it:
    cut, so an answer never grows with what the client sent."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


@dataclass(frozen=True)
class FieldError:
    """One parameter a refusal names: `field`, its path in the parameters ('title',
    'votes.0.option'), and `problem`, what is wrong with it, in words."""

    field: str
    problem: str

    def public(self) -> dict[str, str]:
        return {"field": self.field, "problem": self.problem}


class NavError(Exception):
    """Base of every fault a user can cause. `status` is the HTTP status the web app answers."""

    status = 400

    def __init__(self, message: str, *, url: str | None = None, available: list[str] | None = None,
                 fields: tuple[FieldError, ...] = ()):
        super().__init__(message)
        self.message = message
        self.url = url
        self.available = available or []
        self.fields = fields


class NotFound(NavError):
    """No such page — or a page this user may not see (the two read the same: no leaks)."""

    status = 404


class AuthError(NavError):
    """A missing, bad, expired or foreign token. Never downgraded to another identity."""

    status = 401


class ActionUnavailable(NavError):
    """The action is not valid on this page for this user (403) or in this state (409)."""

    status = 409

    def __init__(self, message: str, *, url: str, available: list[str], forbidden: bool = False):
        super().__init__(message, url=url, available=available)
        if forbidden:
            self.status = 403


class ActionFailed(NavError):
    """A well-formed, available action that the data refuses (a taken handle, an unknown option)."""

    status = 409


class InvalidActionParams(NavError):
    """Action parameters that fail their model or their handler's checks; the message names each
    field and what is allowed, and `fields` says the same as data."""

    status = 422


class InvalidQuery(NavError):
    """A search query that asks for something search does not do (an unknown filter); the message
    names what it does do."""

    status = 400


class RateLimited(NavError):
    status = 429

    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


class IdempotencyKeyRefused(NavError):
    """An idempotency key that is malformed, or names another call than the one it came with."""

    status = 422


class Busy(NavError):
    """The database could not do the call in time (a lock held elsewhere, a statement too slow);
    it was rolled back whole, so it is safe to send again (after `retry_after` seconds)."""

    status = 503
    retry_after = 1


class Unavailable(Busy):
    """The database could not be reached, or its connection was lost before the call committed:
    nothing of it was applied, so it is safe to send again once the database is back."""

    retry_after = 2


class OutcomeUnknown(NavError):
    """The connection was lost while the call committed: it may or may not have been applied.
    A write sent again with the same idempotency key is applied at most once."""

    status = 500
