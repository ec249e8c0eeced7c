"""POST /api/chat/: the answer as JSON, or the same events as server-sent events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from copilot.models import Message

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("desk")]
QUESTION = "HTTP 403 errors after an API key rotation"


def sse_events(response: Any) -> list[tuple[str, dict[str, Any]]]:
    """Parse the stream frame by frame: `event: <type>` then `data: <json>`."""
    body = b"".join(response.streaming_content).decode()
    events = []
    for frame in body.split("\n\n"):
        if not frame.strip():
            continue
        lines = dict(line.split(": ", 1) for line in frame.split("\n"))
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_alice_gets_the_answer_with_citations_and_steps(
    api_client: APIClient, alice: Any, roomy_api_rates: None
) -> None:
    api_client.force_login(alice)
    response = api_client.post("/api/chat/", {"message": QUESTION}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "INC-2025-08-24-001" in body["citations"]
    assert body["steps"][0]["tool"] == "search_similar_incidents"
    stored = Message.objects.get(pk=body["message_id"])
    assert (stored.conversation.owner, stored.content) == (alice, body["answer"])


def test_the_stream_sends_the_websockets_events_in_order(
    api_client: APIClient, alice: Any, roomy_api_rates: None
) -> None:
    api_client.force_login(alice)
    response = api_client.post(
        "/api/chat/", {"message": QUESTION}, format="json", HTTP_ACCEPT="text/event-stream"
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    events = sse_events(response)
    types = [name for name, _ in events]
    assert types[0] == "status" and types[-1] == "done"
    assert {"tool_call", "tool_result", "token", "title"} <= set(types)
    assert all(data["type"] == name for name, data in events)
    done = events[-1][1]
    assert "INC-2025-08-24-001" in done["citations"]
    follow_up = api_client.post(
        "/api/chat/",
        {"conversation_id": done["conversation_id"], "message": "What was the mitigation?"},
        format="json",
    )
    assert follow_up.json()["conversation_id"] == done["conversation_id"]


@pytest.mark.parametrize(
    ("body", "field"),
    [({"message": "   "}, "message"), ({"message": "x" * 8001}, "message"), ({}, "message")],
)
def test_an_empty_or_too_long_message_is_refused_before_anything_streams(
    api_client: APIClient, alice: Any, roomy_api_rates: None, body: dict[str, Any], field: str
) -> None:
    api_client.force_login(alice)
    response = api_client.post("/api/chat/", body, format="json", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert field in response.json()["error"]["fields"]


def test_a_service_token_can_search_and_chat(api_client: APIClient, roomy_api_rates: None) -> None:
    call_command("create_service_token", "monitoring-bot", stdout=(out := _Buffer()))
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {out.text.strip()}")
    search = api_client.get("/api/incidents/search/", {"q": "403 after key rotation"})
    assert search.json()["results"][0]["incident_id"] == "INC-2025-08-24-001"
    stream = api_client.post(
        "/api/chat/", {"message": QUESTION}, format="json", HTTP_ACCEPT="text/event-stream"
    )
    assert sse_events(stream)[-1][0] == "done"


def test_chat_has_its_own_stricter_rate(api_client: APIClient, alice: Any, settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "100/minute", "user": "100/minute", "chat": "1/minute"},
    }
    cache.delete(f"throttle_chat_{alice.pk}")
    api_client.force_login(alice)
    assert api_client.post("/api/chat/", {"message": QUESTION}, format="json").status_code == 200
    refused = api_client.post("/api/chat/", {"message": QUESTION}, format="json")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    assert api_client.get("/api/conversations/").status_code == 200  # other calls go on
    cache.delete(f"throttle_chat_{alice.pk}")


class _Buffer:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass
