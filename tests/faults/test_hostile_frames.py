"""Hostile websocket frames against a real daphne: the client receives the `error` event,
then the close code the README documents (1003 binary, 1009 oversized, 1007 nested too
deeply), and daphne logs no traceback.

The consumer asked for these codes from the start; daphne's autobahn refused them
(`sendClose` takes only 1000 and 3000-4999), the refusal raised inside the consumer,
and the client got 1011 "internal error" (incidentdesk/websocket_close.py).
WebsocketCommunicator, which tests/copilot/test_consumer_hardening.py uses, has no
server in between and could not see it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from copilot.asking import MAX_FRAME_BYTES
from tests.processes import Daphne, Stack


@pytest.fixture(scope="module")
def daphne() -> Iterator[Daphne]:
    """One daphne for every frame: each closes only its own socket."""
    stack = Stack.fresh()
    try:
        yield Daphne(stack)
    finally:
        stack.stop()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE = {
    "binary": (b"\x00\x01binary", 1003, "binary frames are not understood"),
    "oversized": ("x" * (MAX_FRAME_BYTES + 1), 1009, "larger than 64 KB"),
    "nested": (_nested(20_000), 1007, "nested too deeply"),
    "nested-in-object": ('{"type": "ask", "text": ' + _nested(50) + "}", 1007, "nested too"),
}


def _sent(daphne: Daphne, frame: str | bytes) -> tuple[list[dict[str, Any]], int | None]:
    """The events a socket receives after `frame` until it is closed, and its close code."""

    async def scenario() -> tuple[list[dict[str, Any]], int | None]:
        events = []
        async with daphne.socket() as socket:
            await socket.send(frame)
            with suppress(ConnectionClosed):
                while True:
                    events.append(json.loads(await asyncio.wait_for(socket.recv(), 30)))
        return events, socket.close_code

    return asyncio.run(scenario())


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_frame_gets_an_error_event_and_its_documented_close_code(
    daphne: Daphne, kind: str
) -> None:
    frame, close_code, message = HOSTILE[kind]

    events, code = _sent(daphne, frame)

    assert [(event["type"], event["code"]) for event in events] == [("error", "invalid")]
    assert message in events[0]["message"]
    assert code == close_code
    assert "Traceback" not in daphne.log()
