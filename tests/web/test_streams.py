"""The places of a process's open streams, shared fairly (navmcp.web.streams): many accounts holding
every place can't keep another person's first stream out; a newcomer under their share ends the
longest-idle stream of whoever holds the most, and one at their share is refused."""

from __future__ import annotations

from navmcp.web import streams
from navmcp.web.standing import Standing


class Opened:
    """One stream as the registry sees it: its slot, and the reason it was ended with, if it was."""

    def __init__(self, registry: streams.Streams, user: str):
        self.ended: str | None = None
        slot = registry.admit(Standing(user), self.end)
        assert isinstance(slot, streams.Slot), slot
        self.slot = slot

    def end(self, reason: str) -> None:
        self.ended = reason


def test_a_hundred_accounts_holding_every_place_cannot_keep_others_out():
    registry = streams.Streams()
    crowd = {f"crowd{n}": [Opened(registry, f"crowd{n}") for _ in range(streams.MAX_PER_USER)] for n in range(100)}
    assert registry.total == streams.MAX_STREAMS == 2000  # the attack: 100 accounts × 20 streams

    # 200 people each open their first live page: every one gets in
    newcomers = [Opened(registry, f"person{n}") for n in range(200)]
    assert registry.total == streams.MAX_STREAMS
    assert all(o.ended is None for o in newcomers)
    held = {user: registry.held(user) for user in crowd}
    assert set(held.values()) == {18}  # (2000 - 200) / 100: taken evenly from whoever held the most
    ended = [o for streams_of in crowd.values() for o in streams_of if o.ended is not None]
    assert len(ended) == 200 and all(o.ended == streams.MADE_ROOM for o in ended)

    # the share is now 2000 // 300 = 6: a newcomer with 1 gets up to 6, then is refused, with why
    for _ in range(5):
        Opened(registry, "person0")
    refused = registry.admit(Standing("person0"), print)
    assert isinstance(refused, str) and "your share" in refused and registry.held("person0") == 6
    # and someone holding more than a share can't take a place back
    assert "your share" in registry.admit(Standing("crowd0"), print)


def test_the_stream_ended_is_the_longest_idle_one_of_whoever_holds_the_most(monkeypatch):
    monkeypatch.setattr(streams, "MAX_STREAMS", 6)
    registry = streams.Streams()
    big = [Opened(registry, "big") for _ in range(4)]
    small = [Opened(registry, "small") for _ in range(2)]
    for o in (big[0], big[1], big[3]):  # told of a change: no longer idle
        registry.tell(o.slot, lambda: None)
    Opened(registry, "new")
    assert [o.ended is not None for o in big] == [False, False, True, False]
    assert all(o.ended is None for o in small)
    registry.release(big[2].slot)  # the stream, ended, lets its place go: a second release is harmless
    assert registry.total == 6 and registry.held("big") == 3


def test_a_live_page_ended_to_make_room_is_told_why(monkeypatch):
    """The stream ended for a newcomer is a live page's: it gets `gone` with the reason (the browser
    says it and stops updating), and leaves the change feed."""
    import json
    from types import SimpleNamespace

    from navmcp.feeds.changes import Interest
    from navmcp.web import live

    class Feed:
        def __init__(self):
            self.watchers = set()

        def add(self, watcher):
            self.watchers.add(watcher)

        def remove(self, watcher):
            self.watchers.discard(watcher)

        def position(self):
            return "0"

    monkeypatch.setattr(streams, "MAX_STREAMS", 2)
    app, registry = SimpleNamespace(feed=Feed()), streams.Streams()
    first, second = (live.open_stream(app, registry, Standing("big"), "/studios/team", Interest("big", "s1"))
                     for _ in range(2))
    newcomer = live.open_stream(app, registry, Standing("new"), "/studios/team", Interest("new", "s1"))
    assert not isinstance(newcomer, str) and len(app.feed.watchers) == 2
    text, last = first._pending[-1]
    assert last and text == "event: gone\ndata: " + json.dumps(streams.MADE_ROOM) + "\n\n"
    assert not second._pending[-1][1]  # the other one still watches
    assert "your share" in live.open_stream(app, registry, Standing("big"), "/studios/team", Interest("big", "s1"))
