"""Server-sent event streams (navmcp/web/sse.py) driven as uvicorn drives them, through ASGI's send
and receive: events put from another thread are written in order, a burst at once; a quiet stream
gets heartbeats; at its time limit it asks for its closing event and ends; a client that leaves
ends it; `on_close` runs once however it ends."""

from __future__ import annotations

import asyncio
import threading

from navmcp.web.sse import EventStream, open_streams


class Client:
    """The ASGI side: what the stream sent, and a disconnect the test can trigger."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.leave = asyncio.Event()

    async def send(self, message: dict) -> None:
        self.sent.append(message)

    async def receive(self) -> dict:
        await self.leave.wait()
        return {"type": "http.disconnect"}

    @property
    def bodies(self) -> list[str]:
        return [m["body"].decode() for m in self.sent if m["type"] == "http.response.body"]


def run(stream: EventStream, client: Client, during=None) -> None:
    async def main() -> None:
        task = asyncio.ensure_future(stream.run(client.send, client.receive, []))
        if during is not None:
            await during()
        await asyncio.wait_for(task, 10)

    asyncio.run(main())


def test_events_from_another_thread_are_written_in_order_and_the_last_ends_the_stream():
    closed = []
    stream = EventStream(on_close=lambda: closed.append(True))
    stream.put("event: first\n\n")  # before the stream runs: kept until it does
    client = Client()

    async def during() -> None:
        await asyncio.sleep(0.1)
        writer = threading.Thread(target=lambda: [stream.put(f"event: n{n}\n\n") for n in range(50)]
                                  + [stream.put("event: end\n\n", last=True), stream.put("event: after\n\n")])
        writer.start()
        writer.join()

    run(stream, client, during)
    assert client.sent[0]["type"] == "http.response.start" and client.sent[0]["status"] == 200
    assert (b"content-type", b"text/event-stream; charset=utf-8") in client.sent[0]["headers"]
    text = "".join(client.bodies)
    names = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
    assert names == ["first", *(f"n{n}" for n in range(50)), "end"]
    assert len(client.bodies) < 52  # a burst goes out in few writes, not one per event
    assert client.sent[-1]["more_body"] is False
    assert closed == [True] and open_streams() == 0


def test_a_quiet_stream_gets_heartbeats_then_its_closing_event_at_its_time_limit():
    closed = []
    stream = EventStream(on_close=lambda: closed.append(True), heartbeat=0.05, lasts=0.4,
                         on_timeout=lambda: stream.put("event: bye\n\n", last=True))
    client = Client()
    run(stream, client)
    bodies = client.bodies
    assert bodies[-1] == "event: bye\n\n" and client.sent[-1]["more_body"] is False
    assert 3 <= bodies.count(": heartbeat\n\n") <= 9
    assert closed == [True]


def test_without_a_closing_event_the_stream_just_ends_at_its_time_limit():
    stream = EventStream(heartbeat=10, lasts=0.1)
    client = Client()
    run(stream, client)
    assert client.bodies == [""] and client.sent[-1]["more_body"] is False


def test_a_client_that_leaves_ends_the_stream_and_later_events_go_nowhere():
    closed = []
    stream = EventStream(on_close=lambda: closed.append(True))
    client = Client()

    async def during() -> None:
        await asyncio.sleep(0.05)
        assert open_streams() == 1
        client.leave.set()

    run(stream, client, during)
    assert closed == [True] and open_streams() == 0
    stream.put("event: late\n\n")  # the change feed may still hold it for a moment: ignored
    assert "late" not in "".join(client.bodies)
