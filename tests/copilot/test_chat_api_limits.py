"""POST /api/chat/ and POST /api/incident follow the websocket's per-user rules: one
running answer per user and CHAT_QUESTIONS_PER_MINUTE, refused with 429, a JSON error
and Retry-After (a request cannot wait for its turn as a socket does)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient

from copilot import asking
from copilot.models import Conversation, Message
from copilot.services import conversation_create
from tests.copilot.openai_server import OpenAIServer, text_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_api_rates")]
QUESTION = "Have we seen PayU 403s before?"


def client_of(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def fresh_counts(alice: User) -> Iterator[None]:
    """alice's question count and turn live in the shared Redis: start from none."""
    keys = [asking._rate_key(alice.pk), asking._turn_key(alice.pk)]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


def refused(response: Any) -> dict[str, Any]:
    assert response.status_code == 429, response.content
    assert int(response["Retry-After"]) > 0
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "throttled"
    return error


@pytest.mark.usefixtures("fresh_counts")
def test_while_an_answer_of_hers_runs_alice_is_told_to_retry_not_given_a_second(
    alice: User, openai_settings: Any, openai_server: OpenAIServer
) -> None:
    openai_settings.COPILOT_TIMEOUT_SECONDS = 60  # the held reply must not time out
    held = threading.Event()
    openai_server.script(replace(text_reply("The first answer."), gate=held))
    titled = conversation_create(owner=alice, title="first")  # no title asked of the model
    first: dict[str, Any] = {}

    def ask_first() -> None:
        try:
            question = {"conversation_id": titled.pk, "message": QUESTION}
            first["response"] = client_of(alice).post("/api/chat/", question)
        finally:
            connection.close()  # the thread's own, which would keep the test database open

    asking_first = threading.Thread(target=ask_first)
    asking_first.start()
    try:
        for _ in range(600):  # until her first answer's model is thinking
            if openai_server.requests:
                break
            threading.Event().wait(0.05)
        chat = refused(client_of(alice).post("/api/chat/", {"message": "And settlement?"}))
        report = refused(
            client_of(alice).post("/api/incident", {"text": "Checkout is down"}, format="multipart")
        )
    finally:
        held.set()
        asking_first.join(60)
    assert "still being written" in chat["message"] and "try again in 5 s" in chat["message"]
    assert report == chat
    assert first["response"].status_code == 200
    assert first["response"].json()["answer"] == "The first answer."
    # Nothing was created for the refused ones: one conversation, one question.
    assert Conversation.objects.filter(owner=alice).count() == 1
    assert Message.objects.filter(role=Message.Role.USER).count() == 1


@pytest.mark.usefixtures("fresh_counts")
def test_past_her_questions_per_minute_alice_gets_429_on_chat_and_incident_reports(
    alice: User, settings: Any
) -> None:
    settings.CHAT_QUESTIONS_PER_MINUTE = 1
    assert client_of(alice).post("/api/chat/", {"message": "hello"}).status_code == 200

    chat = refused(client_of(alice).post("/api/chat/", {"message": QUESTION}))
    stream = refused(
        client_of(alice).post("/api/chat/", {"message": QUESTION}, HTTP_ACCEPT="text/event-stream")
    )
    report = refused(
        client_of(alice).post("/api/incident", {"text": "Checkout is down"}, format="multipart")
    )
    assert "You have asked 1 questions this minute" in chat["message"]
    assert {stream["message"][:43], report["message"][:43]} == {chat["message"][:43]}
    # Her turn was given back each time: with a new minute she can ask at once.
    cache.delete(asking._rate_key(alice.pk))
    assert client_of(alice).post("/api/chat/", {"message": QUESTION}).status_code == 200


@pytest.mark.usefixtures("fresh_counts")
def test_a_streamed_answer_gives_her_turn_back_when_it_ends(alice: User) -> None:
    response = client_of(alice).post(
        "/api/chat/", {"message": "hello"}, HTTP_ACCEPT="text/event-stream"
    )
    assert response.status_code == 200
    assert not asking.user_turn_take(user_id=alice.pk, token="probe")  # held while streaming
    b"".join(response.streaming_content)
    assert asking.user_turn_take(user_id=alice.pk, token="probe")


@pytest.mark.usefixtures("fresh_counts")
def test_a_stream_closed_before_its_first_event_gives_her_turn_back(alice: User) -> None:
    """What Django does when the client leaves before a frame was read (a real hang-up
    while the view runs: tests/faults/test_dropped_stream.py)."""
    response = client_of(alice).post(
        "/api/chat/", {"message": "hello"}, HTTP_ACCEPT="text/event-stream"
    )
    assert not asking.user_turn_take(user_id=alice.pk, token="probe")

    response.close()

    assert asking.user_turn_take(user_id=alice.pk, token="probe")
    assert not Message.objects.exists()  # nothing was asked
