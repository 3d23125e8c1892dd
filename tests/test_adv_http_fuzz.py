"""Protocol fuzzing over `/mcp` (Streamable HTTP): the frame generators and the oracle of the stdio
suite, plus HTTP-level oddities. Every frame gets a well-formed JSON-RPC answer (200, or 400 for a
frame that is not JSON), 202 with an empty body for notifications, or the documented HTTP status —
never a 500 or a traceback — and the session still answers ping afterwards. Runs in process
(httpx.ASGITransport) and against a real `navmcp web` process on a loopback port, and fails on
anything the server logs at ERROR.
"""

from __future__ import annotations

import json
import logging
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversarial import figures, fuzz, world
from adversarial.http import HEADERS, INIT, Http, HttpDriver, WebProcess, open_session
from navmcp.web import create_app

FUZZ = settings(max_examples=figures.pick(120, 4000), deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                       HealthCheck.function_scoped_fixture])
REAL_FUZZ = settings(FUZZ, max_examples=figures.pick(60, 2000))


class _Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


@pytest.fixture(scope="module")
def logged_errors():
    handler = _Errors()
    logger = logging.getLogger("navmcp")
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def adv_world(tmp_path_factory):
    return world.build(tmp_path_factory.mktemp("httpfuzz") / "home")


@pytest.fixture(scope="module")
def inproc(adv_world):
    app = adv_world.app()
    http = Http(create_app(app))
    drivers = {role: HttpDriver(http, adv_world.tokens[role]) for role in ("author", "outsider")}
    yield http, drivers
    http.close()
    app.store.close()


@pytest.fixture(scope="module")
def real(adv_world, tmp_path_factory):
    w = world.copy(adv_world, tmp_path_factory.mktemp("httpfuzz-real") / "home")
    server = WebProcess(w.home)
    http = Http(server.base)
    driver = HttpDriver(http, w.tokens["author"])
    yield server, http, driver, w
    http.close()
    assert server.stop() == 0
    assert not server.errors(), server.stderr_text()[-3000:]


@given(frame=fuzz.raw_frames(), role=st.sampled_from(["author", "outsider"]))
@FUZZ
def test_inprocess_mcp_answers_every_frame(adv_world, inproc, logged_errors, frame, role):
    http, drivers = inproc
    driver = drivers[role]
    frame = fuzz.bind(frame, adv_world.urls)
    fuzz.check(frame, driver.send(frame))
    assert driver.ping_ok()
    assert not logged_errors, logged_errors[-1]
    figures.add("fuzz.http.inprocess.frames")


@given(value=fuzz.json_frames)
@FUZZ
def test_inprocess_mcp_answers_every_decoded_value(adv_world, inproc, logged_errors, value):
    http, drivers = inproc
    frame = fuzz.bind(fuzz.serialize(value, False), adv_world.urls)
    fuzz.check(frame, drivers["author"].send(frame))
    assert drivers["author"].ping_ok()
    assert not logged_errors, logged_errors[-1]
    figures.add("fuzz.http.inprocess.frames")


@given(frame=fuzz.raw_frames())
@REAL_FUZZ
def test_real_server_answers_every_frame(real, frame):
    server, http, driver, w = real
    frame = fuzz.bind(frame, w.urls)
    fuzz.check(frame, driver.send(frame))
    assert driver.ping_ok()
    figures.add("fuzz.http.real.frames")
