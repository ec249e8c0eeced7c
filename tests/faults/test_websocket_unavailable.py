"""kill -9 PostgreSQL, then Redis, under a real daphne: the chat websocket's handshake
and its questions get an `error` event (code `unavailable`, "retry in 5 s") and a clean
close with 4503 (the websocket's 503): never a 500 handshake, a 1011
or a socket left hanging. The sockets closed so stop being counted as listening to
their conversation, though `disconnect()` never ran for them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import pytest
import redis
from django.core.cache import cache
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from incidentdesk.unavailable import CLOSE_UNAVAILABLE, SOCKET_MESSAGE
from tests.processes import BASE_DIR, WAIT_SECONDS, Daphne, Stack, wait_until


@pytest.fixture
def chat(stack: Stack) -> Iterator[Daphne]:
    yield Daphne(stack)


def sockets_counted(chat: Daphne) -> int:
    """The sockets daphne counts as open on alice's conversation (`asking.listener_count`,
    read from the stack's Redis)."""
    client = redis.Redis(unix_socket_path=str(chat.stack.var_dir / "redis.sock"))
    with client:
        return int(client.hlen(cache.make_key(f"chat-sockets:{chat.conversation}")))


async def ending(socket: ClientConnection) -> tuple[list[dict[str, Any]], int | None]:
    """The events a socket receives until it is closed, and its close code."""
    events = []
    with suppress(ConnectionClosed):
        while True:
            events.append(json.loads(await asyncio.wait_for(socket.recv(), 30)))
    return events, socket.close_code


async def ask(socket: ClientConnection) -> tuple[list[dict[str, Any]], int | None]:
    with suppress(ConnectionClosed):  # Redis gone: the channel layer may have closed it first
        await socket.send(json.dumps({"type": "ask", "text": "Have we seen PayU 403s before?"}))
    return await ending(socket)


UNAVAILABLE = {"type": "error", "message": SOCKET_MESSAGE, "code": "unavailable"}


def asked_and_opened_while_down(chat: Daphne, kill: Any) -> dict[str, Any]:
    """A socket opened before the kill asks a question after it; a new one opens."""

    async def scenario() -> dict[str, Any]:
        async with chat.socket() as before:
            counted = await asyncio.to_thread(sockets_counted, chat)
            kill()
            async with chat.socket() as after:
                opened = await ending(after)
            asked = await ask(before)
        return {"counted": counted, "opened": opened, "asked": asked}

    return asyncio.run(scenario())


def test_a_killed_postgresql_is_an_error_event_and_a_clean_close(
    stack: Stack, chat: Daphne
) -> None:
    results = asked_and_opened_while_down(chat, stack.kill_postgres)

    assert results["opened"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert results["asked"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert "retry in 5 s" in SOCKET_MESSAGE
    assert results["counted"] == 1
    assert sockets_counted(chat) == 0  # released though `disconnect()` never ran


def test_a_killed_redis_is_an_error_event_and_a_clean_close(stack: Stack, chat: Daphne) -> None:
    def kill_redis() -> None:
        os.kill(int((stack.var_dir / "redis.pid").read_text()), signal.SIGKILL)

    results = asked_and_opened_while_down(chat, kill_redis)

    assert results["opened"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert results["asked"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert results["counted"] == 1

    # Redis back from its append-only file, which still counts the socket closed
    # while it was down: daphne settles what it owes at the next socket it opens.
    start_redis(stack)
    assert sockets_counted(chat) == 1
    asyncio.run(open_and_close(chat))
    wait_until(lambda: sockets_counted(chat) == 0, "every socket released", timeout=10)


def start_redis(stack: Stack) -> None:
    """The stack's Redis started again, as the supervisor would (it outlives this call)."""
    subprocess.run(
        [sys.executable, "-c", "from incidentdesk import embedded; embedded.start_redis()"],
        env=stack.env, cwd=BASE_DIR, check=True, timeout=WAIT_SECONDS,
    )  # fmt: skip


async def open_and_close(chat: Daphne) -> None:
    async with chat.socket() as socket:
        await socket.send(json.dumps({"type": "hello"}))  # answered: the socket is live
        assert json.loads(await asyncio.wait_for(socket.recv(), 30))["code"] == "invalid"
