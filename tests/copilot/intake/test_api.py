"""POST /api/incident: multipart reports, session and token auth, own conversations, bad uploads."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from copilot.models import AgentRun, Conversation, Message, Ticket, TicketComment
from copilot.services import conversation_create
from incidents.models import Incident
from tests.copilot.intake.conftest import error_dialog_png

pytestmark = pytest.mark.usefixtures("payments_desk", "roomy_api_rates")
URL = "/api/incident"
REPORT = "Checkout API returns 502 after the 14:00 deploy"


def upload(data: bytes, name: str = "screenshot.png", content_type: str = "image/png") -> Any:
    return SimpleUploadedFile(name, data, content_type=content_type)


def png(size: tuple[int, int], mode: str = "L") -> bytes:
    """Mode "1" keeps a 20000x20000 image at 50 MB in the test (1 bit a pixel)."""
    buffer = io.BytesIO()
    Image.new(mode, size, 0).save(buffer, format="PNG")
    return buffer.getvalue()


def gif() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (20, 20), "red").save(buffer, format="GIF")
    return buffer.getvalue()


@pytest.fixture
def as_alice(api_client: APIClient, alice: User) -> APIClient:
    api_client.force_login(alice)
    return api_client


def test_a_report_with_a_screenshot_returns_the_structured_incident(as_alice: APIClient) -> None:
    response = as_alice.post(
        URL, {"text": REPORT, "image": upload(error_dialog_png())}, format="multipart"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    title = "Checkout Gateway 502 errors"  # the key phrase, not the raw sentence
    assert body["incident"]["title"] == title and body["incident"]["severity"] == "SEV2"
    assert body["similar_incidents"][0]["incident_id"].startswith("INC-")
    assert body["ticket_info"] is None
    assert body["reply_text"].startswith(f"**{title}**")
    assert [s["name"] for s in body["steps_executed"]][:2] == ["INGESTION", "VISION_ANALYSIS"]
    conversation = Conversation.objects.get(pk=body["conversation_id"])
    assert conversation.messages.count() == 2


def test_a_token_caller_files_a_ticket_and_follows_up_in_the_same_conversation(
    api_client: APIClient, alice: User
) -> None:
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    first = api_client.post(URL, {"text": REPORT}, format="multipart").json()
    assert first["ticket_info"] is None
    filed = api_client.post(
        URL,
        {"conversation_id": first["conversation_id"], "text": "yes, file it"},
        format="multipart",
    ).json()
    ticket = Ticket.objects.get()
    assert filed["ticket_info"] == {
        "key": ticket.key, "url": f"/tickets/{ticket.key}/", "status": "open", "tracker": "builtin",
    }  # fmt: skip
    assert filed["steps_executed"] == [
        {
            "name": "TICKET_CREATE",
            "outcome": f"created {ticket.key}",
            "ms": filed["steps_executed"][0]["ms"],
            "error": "",
        }
    ]
    conversation = {"conversation_id": first["conversation_id"]}
    comment = "add a comment: we rolled back the 14:00 deploy and decided to keep the flag off"
    api_client.post(URL, {**conversation, "text": comment}, format="multipart")
    assert TicketComment.objects.get().ticket == ticket
    ledger = api_client.post(URL, {**conversation, "text": "what did we decide?"}).json()
    assert "keep the flag off" in ledger["reply_text"]
    assert ticket.key in ledger["reply_text"]


def test_someone_elses_conversation_is_not_found(as_alice: APIClient, bob: User) -> None:
    theirs = conversation_create(owner=bob)
    response = as_alice.post(
        URL, {"conversation_id": theirs.pk, "text": REPORT}, format="multipart"
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not Message.objects.exists()


def test_callers_must_sign_in(api_client: APIClient) -> None:
    assert api_client.post(URL, {"text": REPORT}, format="multipart").status_code == 401


@pytest.mark.parametrize(
    ("file", "message", "reason"),
    [
        (
            lambda: upload(gif()),
            "The screenshot must be a PNG or JPEG image, not GIF.",
            "unsupported type",
        ),
        (lambda: upload(b"#!/bin/sh\necho hi\n"), "this file is not an image", "unsupported type"),
        (lambda: upload(error_dialog_png()[:900]), "corrupt or truncated", "corrupt"),
        (lambda: upload(png((1, 1000))), "is 1x1000 pixels; one side may be", "too narrow"),
        (lambda: upload(png((30000, 1))), "is 30000x1 pixels; one side may be", "too narrow"),
        # Pillow's DecompressionBombError, raised by Image.open, was a 500.
        (
            lambda: upload(png((20000, 20000), "1")),
            "more than 40,000,000 pixels",
            "too many pixels",
        ),
        (
            lambda: upload(png((8000, 6000), "1")),
            "is 8000x6000 pixels; the limit",
            "too many pixels",
        ),
    ],
)
def test_bad_screenshots_get_clear_errors(
    as_alice: APIClient, file: Any, message: str, reason: str
) -> None:
    response = as_alice.post(URL, {"text": REPORT, "image": file()}, format="multipart")
    assert response.status_code == 400
    error = response.json()["error"]
    assert message in error["message"]
    assert error["fields"] == {"image": [reason]}
    assert not Message.objects.exists()  # nothing stored for a refused upload


def test_a_screenshot_over_the_limit_is_refused_before_it_is_read(
    as_alice: APIClient, settings: Settings
) -> None:
    settings.INTAKE_MAX_IMAGE_BYTES = 10 * 1024
    big = upload(error_dialog_png() + b"\x00" * 20 * 1024)
    response = as_alice.post(URL, {"text": REPORT, "image": big}, format="multipart")
    assert response.status_code == 400
    assert "the limit is 0.0 MB" in response.json()["error"]["message"]


def test_audio_is_refused_offline_with_a_clear_message(
    as_alice: APIClient, settings: Settings
) -> None:
    settings.OPENAI_API_KEY = ""
    note = upload(b"RIFF\x00\x00\x00\x00WAVEfmt ", "note.wav", "audio/wav")
    response = as_alice.post(URL, {"text": "", "audio": note}, format="multipart")
    assert response.status_code == 400
    assert "Voice notes need the online model" in response.json()["error"]["message"]


def test_an_empty_report_is_refused(as_alice: APIClient) -> None:
    response = as_alice.post(URL, {"text": "  "}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "Describe the incident, or attach a screenshot."


@pytest.mark.parametrize(
    ("text", "kind"),
    [("hello", "chit_chat"), ("have we seen a checkout 503 before?", "query_past")],
)
def test_a_greeting_or_a_question_is_answered_and_stores_no_incident(
    as_alice: APIClient, text: str, kind: str
) -> None:
    before = Incident.objects.count()
    response = as_alice.post(URL, {"text": text}, format="multipart")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["kind"], body["incident"], body["ticket_info"]) == (kind, {}, None)
    assert body["reply_text"]
    assert Incident.objects.count() == before
    assert not Ticket.objects.exists()


def test_only_a_report_creates_an_incident(as_alice: APIClient) -> None:
    before = Incident.objects.count()
    response = as_alice.post(URL, {"text": "Checkout is down for every merchant right now"})
    assert response.status_code == 200, response.content
    assert response.json()["kind"] == "new_incident"
    assert Incident.objects.count() == before + 1


@pytest.mark.parametrize("text", [REPORT, "hello"])
def test_a_report_or_a_greeting_answered_at_once_leaves_its_run_done(
    as_alice: APIClient, text: str
) -> None:
    # The answer is read to the end: a reply closed after its `done` event used
    # to record its run as cancelled by a client that stopped listening.
    response = as_alice.post(URL, {"text": text}, format="multipart")
    assert response.status_code == 200, response.content
    run = AgentRun.objects.get(conversation_id=response.json()["conversation_id"])
    assert (run.status, run.error) == (AgentRun.Status.DONE, "")
    assert run.first_event_ms is not None
