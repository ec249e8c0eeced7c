"""The chat websocket through the real ASGI stack (origin check, session auth, routing).

Answers come from the offline engine over a few imported incidents; the
channel layer and the rate-limit cache are the real Redis.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from copilot import asking, replies
from copilot.asking import UNEXPECTED_FAILURE, WAITING_FOR_TURN
from copilot.models import AgentRun, Conversation, Message
from copilot.services import conversation_create, conversation_delete, conversation_rename
from incidentdesk.asgi import application
from tests.copilot.openai_server import text_reply
from tests.factories import (
    UserFactory,
    incidents_import,
    key_rotation_403,
    settlement_missing_rows,
)

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://127.0.0.1")
HOST = (b"host", b"127.0.0.1")  # the origin is compared with the socket's own (scheme, host, port)


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> Iterator[None]:
    """Each test runs its own event loop; the Redis layer's locks belong to one loop."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def incidents(tmp_path: Path) -> None:
    mitigation = "Re-synced the secret and restarted the pool."
    rows = [key_rotation_403(mitigation=mitigation), settlement_missing_rows()]
    incidents_import(tmp_path / "incidents.jsonl", rows, activate=True)


def _cookie(user: User | None) -> list[tuple[bytes, bytes]]:
    if user is None:
        return [ORIGIN, HOST]
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [ORIGIN, HOST, (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]


def _socket(headers: list[tuple[bytes, bytes]], conversation_id: int) -> WebsocketCommunicator:
    path = f"/ws/conversations/{conversation_id}/"
    return WebsocketCommunicator(application, path, headers=headers)


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return async_to_sync(scenario)()


async def _answer(socket: WebsocketCommunicator) -> list[dict[str, Any]]:
    """Events until the answer ends (done or error)."""
    events = []
    while not events or events[-1]["type"] not in {"done", "error"}:
        events.append(await socket.receive_json_from(timeout=30))
    return events


def test_a_question_streams_the_exact_event_sequence(alice, incidents) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> list[dict[str, Any]]:
        socket = _socket(headers, conversation.pk)
        connected, _ = await socket.connect()
        assert connected
        await socket.send_json_to({"type": "ask", "text": "Merchants get HTTP 403 from PayU Core"})
        events = await _answer(socket)
        await socket.disconnect()
        return events

    events = run(scenario)
    types = [event["type"] for event in events]
    tokens = types.count("token")
    assert tokens >= 1  # words written within 20 ms of each other share a frame
    assert types == [
        "status", "status", "tool_call", "tool_result", "status",
        *["token"] * tokens, "status", "title", "status", "done",
    ]  # fmt: skip
    statuses = [event["text"] for event in events if event["type"] == "status"]
    assert statuses == [
        "Analyzing your request... please hold on.",
        "Searching for Similar Incidents...",
        "Found 1 relevant incidents...",
        "Generating title for the incident report...",
        "Almost done, wrapping up the details",
    ]
    done = events[-1]
    assert "INC-2025-08-24-001" in done["citations"]
    assert "".join(e["text"] for e in events if e["type"] == "token") == done["content"]
    answer = Message.objects.get(pk=done["message_id"])
    assert answer.is_complete and answer.conversation_id == conversation.pk
    conversation.refresh_from_db()
    assert conversation.title


def test_anonymous_users_are_rejected(alice) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(None)

    async def scenario() -> bool:
        connected, _ = await _socket(headers, conversation.pk).connect()
        return connected

    assert run(scenario) is False


def test_another_users_conversation_is_rejected(alice) -> None:
    mallory = UserFactory(username="mallory")
    conversation = conversation_create(owner=alice)
    headers = _cookie(mallory)

    async def scenario() -> bool:
        connected, _ = await _socket(headers, conversation.pk).connect()
        return connected

    assert run(scenario) is False
    assert not Message.objects.exists()


def test_a_foreign_origin_is_rejected(alice) -> None:
    conversation = conversation_create(owner=alice)
    headers = [(b"origin", b"https://evil.example"), *_cookie(alice)[1:]]

    async def scenario() -> bool:
        path = f"/ws/conversations/{conversation.pk}/"
        connected, _ = await WebsocketCommunicator(application, path, headers=headers).connect()
        return connected

    assert run(scenario) is False


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ("not json", "Send a JSON object"),
        ("[1, 2]", "Send a JSON object"),
        ('{"type": "ask"}', "The question is empty."),
        ('{"type": "ask", "text": 42}', "The question is empty."),
        ('{"type": "ask", "text": "   "}', "The question is empty."),
        ('{"type": "hello", "text": "hi"}', "Unknown message type"),
        ('{"type": "ask", "text": "hi", "model": "x"}', "Unknown field(s): model."),
        (json.dumps({"type": "ask", "text": "é" * 4097}), "longer than 8 KB"),
        (json.dumps({"type": "ask", "text": "403\u0000 in PayU"}), "contains a NUL character"),
    ],
)
def test_bad_payloads_are_answered_with_an_error_event(alice, frame: str, message: str) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> list[dict[str, Any]]:
        socket = _socket(headers, conversation.pk)
        await socket.connect()
        await socket.send_to(text_data=frame)
        first = await socket.receive_json_from(timeout=10)
        # The socket stays usable after a bad frame.
        await socket.send_to(text_data="{}")
        second = await socket.receive_json_from(timeout=10)
        await socket.disconnect()
        return [first, second]

    first, second = run(scenario)
    assert first["type"] == "error" and first["code"] == "invalid"
    assert message in first["message"]
    assert second["type"] == "error"
    assert not Message.objects.exists()


def test_a_long_question_under_the_limit_is_answered(alice, incidents) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)
    text = "HTTP 403 errors in PayU " + "x" * (7900 - 24)

    async def scenario() -> list[dict[str, Any]]:
        socket = _socket(headers, conversation.pk)
        await socket.connect()
        await socket.send_json_to({"type": "ask", "text": text})
        events = await _answer(socket)
        await socket.disconnect()
        return events

    last = run(scenario)[-1]
    assert last["type"] == "done", last


def test_questions_past_the_rate_limit_are_refused(alice, incidents, settings) -> None:
    settings.CHAT_QUESTIONS_PER_MINUTE = 2
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> list[str]:
        socket = _socket(headers, conversation.pk)
        await socket.connect()
        endings = []
        for _ in range(3):
            await socket.send_json_to({"type": "ask", "text": "Settlement report missing rows"})
            endings.append((await _answer(socket))[-1])
        await socket.disconnect()
        return endings

    endings = run(scenario)
    assert [e["type"] for e in endings] == ["done", "done", "error"]
    assert endings[-1]["code"] == "rate_limited"
    assert Message.objects.filter(role=Message.Role.USER).count() == 2


def test_one_answer_at_a_time_per_conversation(alice, incidents) -> None:
    """A second tab asking while the first tab's answer runs is told to wait."""
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> dict[str, Any]:
        socket = _socket(headers, conversation.pk)
        await socket.connect()
        with asking.question_admitted(user_id=alice.pk, conversation_id=conversation.pk):
            await socket.send_json_to({"type": "ask", "text": "Settlement report missing rows"})
            refused = await socket.receive_json_from(timeout=10)
        await socket.disconnect()
        return refused

    refused = run(scenario)
    assert refused["type"] == "error" and refused["code"] == "busy"
    assert not AgentRun.objects.exists()


def test_a_second_socket_on_the_conversation_sees_the_answer_too(alice, incidents) -> None:
    """What a reload reattaches to: the group of the conversation."""
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> tuple[list[str], list[str]]:
        asker, watcher = _socket(headers, conversation.pk), _socket(headers, conversation.pk)
        await asker.connect()
        await watcher.connect()
        await asker.send_json_to({"type": "ask", "text": "Settlement report missing rows"})
        asked = await _answer(asker)
        watched = await _answer(watcher)
        assert await asker.receive_nothing(timeout=0.3)  # its own events are not echoed
        await asker.disconnect()
        await watcher.disconnect()
        return [e["type"] for e in asked], [e["type"] for e in watched]

    asked, watched = run(scenario)
    assert asked == watched
    assert Conversation.objects.get(pk=conversation.pk).messages.count() >= 2


def test_a_rename_or_delete_in_another_tab_counts_for_the_next_question(alice, incidents) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def ask(socket: WebsocketCommunicator) -> dict[str, Any]:
        await socket.send_json_to({"type": "ask", "text": "Settlement report missing rows"})
        return (await _answer(socket))[-1]

    async def scenario() -> list[Any]:
        socket = _socket(headers, conversation.pk)
        await socket.connect()
        await database_sync_to_async(conversation_rename)(
            conversation=conversation, user=alice, title="My own title"
        )
        renamed = await ask(socket)
        title = await database_sync_to_async(
            lambda: Conversation.objects.get(pk=conversation.pk).title
        )()
        await database_sync_to_async(conversation_delete)(conversation=conversation, user=alice)
        deleted = await ask(socket)
        await socket.disconnect()
        return [renamed, deleted, title]

    renamed, deleted, title = run(scenario)
    assert renamed["type"] == "done" and title == "My own title"  # not replaced by a generated one
    assert deleted["type"] == "error" and deleted["code"] == "not_found"
    hidden = Conversation.objects.get(pk=conversation.pk)  # soft-deleted, restorable
    assert hidden.deleted_at is not None
    assert hidden.messages.filter(role=Message.Role.USER).count() == 1  # nothing asked after


def test_a_crash_while_answering_is_an_error_event_and_the_socket_stays_open(
    alice, incidents, monkeypatch
) -> None:
    """Fault injection: nothing real crashes on purpose, so the reply itself is made to
    raise. The browser keeps the question and offers Retry on this `error` event."""

    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> list[dict[str, Any]]:
        socket = _socket(headers, conversation.pk)
        await socket.connect()
        with monkeypatch.context() as patch:
            patch.setattr(replies, "conversation_reply", broken)
            await socket.send_json_to({"type": "ask", "text": "Settlement report missing rows"})
            failed = await _answer(socket)
        answered = await _answer_after_asking(socket, "Settlement report missing rows")
        await socket.disconnect()
        return [failed[-1], answered[-1]]

    failed, answered = run(scenario)
    assert failed == {"type": "error", "code": "failed", "message": UNEXPECTED_FAILURE}
    assert answered["type"] == "done"


async def _answer_after_asking(socket: WebsocketCommunicator, text: str) -> list[dict[str, Any]]:
    await socket.send_json_to({"type": "ask", "text": text})
    return await _answer(socket)


def test_one_running_answer_per_user_and_other_users_start_meanwhile(
    alice, bob, openai_settings, openai_server
) -> None:
    """Issue 17: alice's second question, in another tab, waits for her first answer
    (told so, and answered afterwards: nothing she wrote is lost), while bob's question
    is answered during alice's first. Her first answer's model is held until then."""
    openai_settings.COPILOT_TIMEOUT_SECONDS = 60  # the held reply must not time out
    held = threading.Event()
    openai_server.script(
        replace(text_reply("Alice's first answer."), gate=held),
        text_reply("Bob's answer."),
        text_reply("Alice's second answer."),
    )
    first, second = (conversation_create(owner=alice, title=t) for t in ("first", "second"))
    bobs = conversation_create(owner=bob, title="bob's")
    alice_headers, bob_headers = _cookie(alice), _cookie(bob)

    async def scenario() -> dict[str, Any]:
        tab1, tab2 = _socket(alice_headers, first.pk), _socket(alice_headers, second.pk)
        other = _socket(bob_headers, bobs.pk)
        for socket in (tab1, tab2, other):
            assert (await socket.connect())[0]
        await tab1.send_json_to({"type": "ask", "text": "Have we seen PayU 403s before?"})
        await _until(lambda: len(openai_server.requests) == 1)  # alice's model is thinking
        await tab2.send_json_to({"type": "ask", "text": "And settlement rows missing?"})
        waiting = await tab2.receive_json_from(timeout=30)
        bob_events = await _answer_after_asking(other, "Have we seen checkout timeouts?")
        alice_running = await database_sync_to_async(
            AgentRun.objects.filter(conversation=first, status=AgentRun.Status.RUNNING).exists
        )()
        held.set()
        results = {
            "waiting": waiting, "bob": bob_events[-1], "alice_running": alice_running,
            "first": (await _answer(tab1))[-1], "second": (await _answer(tab2))[-1],
        }  # fmt: skip
        for socket in (tab1, tab2, other):
            await socket.disconnect()
        return results

    results = run(scenario)
    assert results["waiting"] == {"type": "status", "text": WAITING_FOR_TURN}
    assert results["bob"]["type"] == "done" and results["bob"]["content"] == "Bob's answer."
    assert results["alice_running"]  # bob was answered while alice's first answer ran
    assert results["first"]["content"] == "Alice's first answer."
    assert results["second"]["content"] == "Alice's second answer."
    asked = Message.objects.filter(conversation=second, role=Message.Role.USER)
    assert [m.content for m in asked] == ["And settlement rows missing?"]


async def _until(condition: Callable[[], bool]) -> None:
    """Wait for `condition` (a step of the scenario, not a timing assertion)."""
    for _ in range(600):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")
