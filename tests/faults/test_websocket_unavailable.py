"""kill -9 PostgreSQL, then Redis, under a real daphne: the chat websocket's handshake
and its questions get an `error` event (code `unavailable`, "retry in 5 s") and a clean
close with 4503 (the websocket's 503): never a 500 handshake, a 1011
or a socket left hanging.

daphne runs alone here, not under `manage.py serve`, so nothing restarts the service
killed and the socket meets it down, not by luck of timing.
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
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from incidentdesk.unavailable import CLOSE_UNAVAILABLE, SOCKET_MESSAGE
from tests.processes import BASE_DIR, Stack, free_port, wait_for_http

# alice, logged in, with a conversation: her session key and the conversation's id.
ALICE = """
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from copilot.services import conversation_create
alice = User.objects.create_user("alice", password="on-call-2025")
session = import_module(settings.SESSION_ENGINE).SessionStore()
session.update({SESSION_KEY: str(alice.pk), HASH_SESSION_KEY: alice.get_session_auth_hash(),
                BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0]})
session.create()
print(session.session_key, conversation_create(owner=alice).pk)
"""


class Chat:
    """A daphne serving the stack, and alice's way into her conversation."""

    def __init__(self, stack: Stack) -> None:
        stack.manage("migrate", "--verbosity", "0")
        self.session, conversation = stack.manage(
            "shell", "--no-imports", "-c", ALICE
        ).stdout.split()
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"ws://127.0.0.1:{port}/ws/conversations/{conversation}/"
        daphne = subprocess.Popen(  # noqa: S603 - our argv
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
             "incidentdesk.asgi:application"],
            env=stack.env, cwd=BASE_DIR, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        stack.started.append(daphne)  # stopped (and its PostgreSQL and Redis) at the end
        wait_for_http(f"{self.base}/healthz", daphne)

    def socket(self) -> Any:
        headers = {"Cookie": f"sessionid={self.session}", "Origin": self.base}
        return connect(self.url, additional_headers=headers, open_timeout=30)


@pytest.fixture
def chat(stack: Stack) -> Iterator[Chat]:
    yield Chat(stack)


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


def asked_and_opened_while_down(chat: Chat, kill: Any) -> dict[str, Any]:
    """A socket opened before the kill asks a question after it; a new one opens."""

    async def scenario() -> dict[str, Any]:
        async with chat.socket() as before:
            kill()
            async with chat.socket() as after:
                opened = await ending(after)
            asked = await ask(before)
        return {"opened": opened, "asked": asked}

    return asyncio.run(scenario())


def test_a_killed_postgresql_is_an_error_event_and_a_clean_close(stack: Stack, chat: Chat) -> None:
    results = asked_and_opened_while_down(chat, stack.kill_postgres)

    assert results["opened"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert results["asked"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert "retry in 5 s" in SOCKET_MESSAGE


def test_a_killed_redis_is_an_error_event_and_a_clean_close(stack: Stack, chat: Chat) -> None:
    def kill_redis() -> None:
        os.kill(int((stack.var_dir / "redis.pid").read_text()), signal.SIGKILL)

    results = asked_and_opened_while_down(chat, kill_redis)

    assert results["opened"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
    assert results["asked"] == ([UNAVAILABLE], CLOSE_UNAVAILABLE)
