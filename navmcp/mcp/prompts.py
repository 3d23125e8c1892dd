"""Team rituals as MCP prompts: each turns into navigation — the pages to open, what to do there.

A prompt's messages name URLs; the agent opens them with `navigate` and acts with `execute_action`,
so a prompt never shows anything the user could not open themselves. Arguments are checked against
what this user may see: a studio handle must be one of their studios, and a wrong one is a
-32602 that lists the right ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus

from navmcp.errors import echo
from navmcp.mcp.jsonrpc import InvalidParams

if TYPE_CHECKING:
    from navmcp.mcp.resources import Reader

STUDIO_ARG = {"name": "studio", "description": "The studio's handle, e.g. 'team' (see /)", "required": True}
TOPIC_ARG = {"name": "topic", "description": "Words the decision is about, e.g. 'offsite' (optional)",
             "required": False}

PROMPTS: list[dict[str, Any]] = [
    {"name": "standup", "title": "Stand-up",
     "description": "What happened in a studio since yesterday, and what needs me there",
     "arguments": [STUDIO_ARG]},
    {"name": "decide", "title": "Decide",
     "description": "Find an open decision in a studio (on a topic, if given) and vote on it",
     "arguments": [STUDIO_ARG, TOPIC_ARG]},
    {"name": "what-needs-me", "title": "What needs me",
     "description": "My inbox first, then decisions awaiting my vote and commitments near critical mass, across my studios",
     "arguments": []},
    {"name": "weekly-review", "title": "Weekly review",
     "description": "A studio's week: what was written, decided and committed to, and what is still open",
     "arguments": [STUDIO_ARG]},
]
BY_NAME = {p["name"]: p for p in PROMPTS}
_TOPIC = re.compile(r"^[^\n\r]{1,100}$")


def list_prompts() -> dict[str, Any]:
    return {"prompts": PROMPTS}


def get(session: Reader, name: Any, arguments: Any) -> dict[str, Any]:
    prompt = BY_NAME.get(name) if isinstance(name, str) else None
    if prompt is None:
        raise InvalidParams(f"Invalid params: no prompt {echo(name)!r}; prompts are {', '.join(BY_NAME)}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise InvalidParams("Invalid params: prompt arguments are an object of strings")
    known = {a["name"] for a in prompt["arguments"]}
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise InvalidParams(f"Invalid params: {name} takes no argument {echo(unknown[0])!r}"
                            + (f"; its arguments are {', '.join(sorted(known))}" if known else "; it takes none"))
    studio = _studio(session, name, arguments) if "studio" in known else None
    topic = arguments.get("topic", "").strip()
    if topic and not _TOPIC.match(topic):
        raise InvalidParams("Invalid params: topic is one line of at most 100 characters")
    text = _TEXTS[name](studio, topic)
    return {"description": prompt["description"],
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


def _studio(session: Reader, prompt: str, arguments: dict[str, str]) -> str:
    handle = arguments.get("studio", "").strip().lower()
    handles = [s["handle"] for s in session.page("/").data["studios"]]
    if not handle:
        raise InvalidParams(f"Invalid params: {prompt} needs the argument 'studio', one of your studios' handles: "
                            + (", ".join(handles) or "you have none yet (create one on /)"))
    if handle not in handles:
        raise InvalidParams(f"Invalid params: {echo(handle)!r} is not a studio of yours; your studios: "
                            + (", ".join(handles) or "none yet (create one on /)"))
    return handle


def _standup(studio: str, topic: str) -> str:
    base = f"/studios/{studio}"
    return (f"Run our stand-up for the studio {base}.\n\n"
            f"1. navigate('{base}/cycles/yesterday') and navigate('{base}/cycles/today'): what was written, "
            "decided and committed to since yesterday.\n"
            "2. navigate('/'): of what awaits me, the decisions awaiting my vote and the commitments near "
            f"critical mass that are in {base}.\n"
            "3. Tell me in a few lines: what happened, and what needs me (with each page's URL, so I can "
            "open it). Do not act on anything yet.")


def _decide(studio: str, topic: str) -> str:
    base = f"/studios/{studio}"
    # the topic goes in only as an escaped query value: user text, never instructions of its own
    find = (f"navigate('{base}/search?q={quote_plus(topic)}') and pick the open decision about it"
            if topic else f"navigate('/') and pick a decision in {base} that awaits my vote")
    return (f"Help me decide something in {base}.\n\n"
            f"1. {find}.\n"
            "2. navigate to that decision's URL: read the question, the options and how the votes stand.\n"
            "3. Tell me the options in a few words and ask me which I accept and which I prefer.\n"
            "4. Then vote with execute_action(action='vote', url=<the decision's URL>, params={'votes': "
            "[{'option': ..., 'accept': true, 'prefer': ...}]}), and tell me the outcome.")


def _what_needs_me(studio: str | None, topic: str) -> str:
    return ("What needs me across my studios?\n\n"
            "1. navigate('/inbox'): what concerns me, unread first (mentions of me, comments on my items, "
            "decisions and commitments I took part in). Open the unread entries' items.\n"
            "2. navigate('/'): the decisions awaiting my vote and the commitments near critical mass.\n"
            "3. Open the ones that look urgent (deadlines first) to see where they stand.\n"
            "4. List them for me, most urgent first, each with its URL and what I would do there "
            "(answer, vote, join). Do not act, nor mark entries read, without asking me.")


def _weekly_review(studio: str, topic: str) -> str:
    # Only what the cycle's pages show: their rows carry each closed decision's result, each
    # commitment's joins and each open item's deadline, so no item needs opening (issue 42).
    base = f"/studios/{studio}"
    return (f"Review the week in {base}.\n\n"
            f"1. navigate('{base}/cycles/this-week'): its Created and Closed lists, and each list's Next page "
            "until its last. Each row already says what you need: a closed decision's result, a commitment's "
            "joins (n of m joined), an open item's deadline. Do not open the items.\n"
            "2. Write me a short review from those lists alone: decided (with each result), committed, written, "
            "still open (with deadlines) — each with its URL.")


_TEXTS: dict[str, Callable[..., str]] = {"standup": _standup, "decide": _decide, "what-needs-me": _what_needs_me,
                                         "weekly-review": _weekly_review}
assert set(_TEXTS) == set(BY_NAME)
