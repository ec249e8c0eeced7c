"""autobahn's debug fields, built when written (incidentdesk/websocket_logging.py)."""

from __future__ import annotations

import pprint
from typing import Any

import autobahn.twisted.websocket
import autobahn.util
import autobahn.websocket.protocol

from incidentdesk.websocket_logging import format_debug_fields_lazily

UTIL: Any = autobahn.util  # untyped
MODULES: list[Any] = [autobahn.websocket.protocol, autobahn.twisted.websocket]


def test_the_debug_fields_read_as_autobahn_writes_them() -> None:
    assert format_debug_fields_lazily()
    send = MODULES[0].WebSocketProtocol.sendData
    for module in MODULES:
        line = "{func} sent {data_len} bytes for peer {peer}".format(
            func=module.hltype(send),
            peer=module.hlval("tcp:127.0.0.1:5000"),
            data_len=module.hlval(42),
        )
        assert line == (
            f"{UTIL.hltype(send)} sent {UTIL.hlval(42)} bytes for peer "
            f"{UTIL.hlval('tcp:127.0.0.1:5000')}"
        )


def test_swapping_twice_keeps_one_layer() -> None:
    format_debug_fields_lazily()
    format_debug_fields_lazily()
    assert str(MODULES[0].hlval(7)) == UTIL.hlval(7)


def test_the_connection_settings_print_as_autobahn_prints_them() -> None:
    """`pformat` of each connection's settings is deferred like the frame fields."""
    format_debug_fields_lazily()
    settings = [("autoPingInterval", 0, "WebSocketServerFactory"), ("utf8validateIncoming", True)]
    deferred = MODULES[0].pformat(settings)
    assert not isinstance(deferred, str)  # nothing printed yet
    line = f"\n{deferred}"
    assert line == "\n" + pprint.pformat(settings)


def test_the_timings_still_read_as_text() -> None:
    format_debug_fields_lazily()
    timings = MODULES[0].Timings()
    timings.track("onOpen")
    assert str(timings) == pprint.pformat(timings._timings)
