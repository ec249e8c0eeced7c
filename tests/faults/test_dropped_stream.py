"""A chat stream (`POST /api/chat/`, `Accept: text/event-stream`) whose client hangs up
before the stream starts frees the user's turn (her one running answer) at once, on a
real daphne: it was held until it expired (CHAT_RUN_LOCK_SECONDS, 300 s), and every
question she asked meanwhile was refused with 429.

To hang up at that moment for sure, the view is held where it creates the question's
conversation (a lock on its table) while the client closes its connection.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from urllib.parse import urlsplit

import redis
from django.core.cache import cache

from tests.processes import Daphne, Stack, wait_until

QUESTION = json.dumps({"message": "Have we seen PayU 403s before?"})


def turns_taken(chat: Daphne) -> int:
    """Users whose turn is taken (`asking.user_turn_take`), read from the stack's Redis."""
    client = redis.Redis(unix_socket_path=str(chat.stack.var_dir / "redis.sock"))
    with client:
        return len(client.keys(cache.make_key("chat-user-turn:*")))


def view_waits_for_lock(chat: Daphne) -> bool:
    with chat.stack.connect() as connection:
        waiting = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        ).fetchone()
    return bool(waiting and waiting[0])


def stream_request(chat: Daphne) -> bytes:
    address = urlsplit(chat.base).netloc
    head = (
        f"POST /api/chat/ HTTP/1.1\r\nHost: {address}\r\nAuthorization: Token {chat.token}\r\n"
        "Accept: text/event-stream\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(QUESTION)}\r\n\r\n"
    )
    return (head + QUESTION).encode()


def stream_status(chat: Daphne) -> int:
    """The status of a new chat stream of alice's (then she hangs up)."""
    parts = urlsplit(chat.base)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    headers = {"Authorization": f"Token {chat.token}", "Accept": "text/event-stream",
               "Content-Type": "application/json"}  # fmt: skip
    try:
        connection.request("POST", "/api/chat/", body=QUESTION, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_stream_dropped_before_it_starts_frees_the_users_turn(stack: Stack) -> None:
    chat = Daphne(stack)
    host, port = urlsplit(chat.base).hostname, urlsplit(chat.base).port
    with stack.connect() as holder, holder.transaction():
        holder.execute("LOCK TABLE copilot_conversation IN ACCESS EXCLUSIVE MODE")
        client = socket.create_connection((host, port))
        client.sendall(stream_request(chat))
        wait_until(lambda: view_waits_for_lock(chat), "the view waiting for the lock")
        assert turns_taken(chat) == 1  # taken before the view stopped
        client.close()  # the client hangs up; daphne tells Django
        time.sleep(1)
    # The view goes on, returns its stream, and nobody is there to read it.

    # Freed when the view returns (at once), not when the turn expires (300 s). The
    # bound is WAIT_SECONDS: the view may train the intent model first (intent_model_share).
    wait_until(lambda: turns_taken(chat) == 0, "the turn freed")
    assert stream_status(chat) == 200
