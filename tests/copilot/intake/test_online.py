"""Intake's online paths against local servers speaking OpenAI's protocol: the planner's
check of weak-signal reports, the vision model, voice-note transcription."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.fixtures import Settings
from rest_framework.test import APIClient

from copilot.intake.planner import classify
from copilot.intake.state import IntakeState
from copilot.services import conversation_create
from tests.copilot.intake.conftest import error_dialog_png, intake_data, say
from tests.copilot.openai_server import OpenAIServer, error_reply, text_reply


def test_a_weak_signal_report_is_checked_by_the_model(
    openai_settings: Settings, openai_server: OpenAIServer
) -> None:
    openai_server.script(text_reply("query_past"))
    decision = classify(text="Checkout 502s right now", has_image=False, state=IntakeState())
    assert (decision.kind, decision.reason) == ("query_past", "the online model")
    sent = openai_server.requests[0]["messages"]
    assert sent[0]["role"] == "system" and "new_incident" in sent[0]["content"]
    assert sent[1]["content"] == "Checkout 502s right now"


def test_questions_and_explicit_reports_cost_no_model_call(
    openai_settings: Settings, openai_server: OpenAIServer
) -> None:
    for text in ["How do I fix HTTP 403 errors in PayU?", "Merchants get HTTP 403 errors"]:
        assert classify(text=text, has_image=False, state=IntakeState()).kind == "query_past"
    assert classify(
        text="Report a new incident: payouts stuck", has_image=False, state=IntakeState()
    ).kind == ("new_incident")
    assert openai_server.requests == []


def test_a_failing_model_leaves_the_rules_decision(
    openai_settings: Settings, openai_server: OpenAIServer
) -> None:
    openai_server.script(*[error_reply(500)] * 3)
    decision = classify(text="Checkout 502s right now", has_image=False, state=IntakeState())
    assert (decision.kind, decision.reason) == ("new_incident", "describes something ongoing")


@pytest.mark.usefixtures("payments_desk")
def test_the_vision_model_reads_the_screenshot(
    openai_settings: Settings, openai_server: OpenAIServer, alice: User
) -> None:
    openai_server.script(text_reply("new_incident"), text_reply("Error 502 ERR_SEEN_BY_VISION"))
    conversation = conversation_create(owner=alice)
    events = say(conversation, alice, "Checkout is failing like this", image=error_dialog_png())
    data = intake_data(events)
    vision = next(s for s in data["steps"] if s["name"] == "VISION_ANALYSIS")
    assert vision["outcome"].startswith("vision:")
    assert "ERR_SEEN_BY_VISION" in data["description"]
    image_part = openai_server.requests[1]["messages"][0]["content"][1]
    assert image_part["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.usefixtures("payments_desk")
def test_when_the_vision_model_fails_ocr_reads_the_screenshot(
    openai_settings: Settings, openai_server: OpenAIServer, alice: User
) -> None:
    openai_server.script(text_reply("new_incident"), *[error_reply(500)] * 3)
    conversation = conversation_create(owner=alice)
    data = intake_data(
        say(conversation, alice, "Checkout is failing like this", image=error_dialog_png())
    )
    vision = next(s for s in data["steps"] if s["name"] == "VISION_ANALYSIS")
    assert vision["outcome"].startswith("OCR (the vision model failed)")
    assert "502" in data["description"]


# --- voice notes ---------------------------------------------------------------------


class _TranscriptionHandler(BaseHTTPRequestHandler):
    """POST /v1/audio/transcriptions as OpenAI answers it: {"text": ...}."""

    server: _TranscriptionServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append((self.path, body))
        answer = json.dumps({"text": self.server.transcript}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _TranscriptionServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, transcript: str) -> None:
        super().__init__(("127.0.0.1", 0), _TranscriptionHandler)
        self.transcript = transcript
        self.seen: list[tuple[str, bytes]] = []


@pytest.fixture
def transcriber(settings: Settings) -> Iterator[_TranscriptionServer]:
    server = _TranscriptionServer("Checkout API returns 502 after the 14:00 deploy")
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    settings.OPENAI_API_KEY = "sk-test-transcription"
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.COPILOT_TIMEOUT_SECONDS = 2.0
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.usefixtures("payments_desk", "roomy_api_rates")
def test_a_voice_note_is_transcribed_and_reported(
    api_client: APIClient, alice: User, transcriber: _TranscriptionServer
) -> None:
    api_client.force_login(alice)
    note = SimpleUploadedFile("note.webm", b"\x1aE\xdf\xa3 fake webm audio", "audio/webm")
    response = api_client.post("/api/incident", {"audio": note}, format="multipart")
    assert response.status_code == 200, response.content
    assert response.json()["incident"]["title"] == "Checkout Gateway 502 errors"
    path, body = transcriber.seen[0]
    assert path == "/v1/audio/transcriptions"
    assert b'name="model"' in body and b"whisper-1" in body and b"fake webm audio" in body
