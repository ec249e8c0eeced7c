"""Voice notes in the chat, in Chromium: recorded with the (fake) microphone or attached as
a generated WAV, shown as a voice note in the conversation. Offline the chat says that
transcription needs a model server; with one (a local server speaking OpenAI's protocol),
a spoken "please file a ticket" proposes a ticket, filed only once the user confirms."""

from __future__ import annotations

import io
import json
import math
import struct
import threading
import wave
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import Message, Ticket
from incidentdesk.demo import demo_load
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
SPOKEN = "Checkout API returns 502 after the 14:00 deploy, please file a ticket"
# Chromium grants the microphone without asking and records a generated tone.
FAKE_MICROPHONE = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]


def tone_wav(seconds: float = 1.0, rate: int = 16_000) -> bytes:
    """A 440 Hz tone as 16-bit mono PCM WAV: a real audio file, generated."""
    frames = b"".join(
        struct.pack("<h", int(12_000 * math.sin(2 * math.pi * 440 * n / rate)))
        for n in range(int(seconds * rate))
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(frames)
    return out.getvalue()


class _ModelHandler(BaseHTTPRequestHandler):
    """OpenAI's transcription endpoint ({"text": ...}) and streaming chat completions
    (always "new_incident", the one chat call intake may make: the planner's check)."""

    server: ModelServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append((self.path, body))
        if self.path.endswith("/audio/transcriptions"):
            self._send(200, "application/json", json.dumps({"text": self.server.transcript}))
        elif self.path.endswith("/chat/completions"):
            self._send(200, "text/event-stream", _completion_stream("new_incident"))
        else:
            self._send(404, "application/json", json.dumps({"error": {"message": "no route"}}))

    def _send(self, status: int, content_type: str, text: str) -> None:
        raw = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _completion_stream(text: str) -> str:
    head = {"id": "chatcmpl-voice", "object": "chat.completion.chunk", "created": 0,
            "model": "gpt-test"}  # fmt: skip
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                              "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]  # fmt: skip
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, transcript: str) -> None:
        super().__init__(("127.0.0.1", 0), _ModelHandler)
        self.transcript = transcript
        self.seen: list[tuple[str, bytes]] = []


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer(SPOKEN)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def online_daphne(
    model_server: ModelServer, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> str:
    """daphne with the copilot pointed at `model_server` (read from its environment)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-voice")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{model_server.server_address[1]}/v1")
    monkeypatch.setenv("COPILOT_MODEL", "gpt-test")
    monkeypatch.setenv("COPILOT_TIMEOUT_SECONDS", "10")
    return str(request.getfixturevalue("live_daphne"))


@pytest.fixture
def erin(transactional_db: None) -> User:
    """erin is on call and talks rather than types."""
    demo_load()
    return UserFactory(username="erin")


@pytest.fixture
def microphone_browser(browser: Any) -> Iterator[Any]:
    """Chromium with a fake microphone; `browser` first, for its Playwright set-up."""
    playwright_browser = browser.browser_type.launch(
        executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, *FAKE_MICROPHONE]
    )
    yield playwright_browser
    playwright_browser.close()


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username or email").fill("erin")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def _wav(tmp_path: Path) -> Path:
    path = tmp_path / "checkout-502.wav"
    path.write_bytes(tone_wav())
    return path


def test_offline_a_voice_note_is_shown_and_needs_a_model_server(
    live_daphne: str, microphone_browser: Any, erin: User, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page = microphone_browser.new_page(viewport={"width": 1280, "height": 900})
    _log_in(page, live_daphne)

    page.get_by_role("button", name="Record a voice note").click()
    expect(page.get_by_role("button", name="Stop recording")).to_be_visible()
    expect(page.locator("#status")).to_contain_text("Recording")
    page.get_by_role("button", name="Stop recording").click()
    expect(page.locator("#attachment")).to_contain_text("Voice note (recorded)")

    page.set_input_files("#audio-file", str(_wav(tmp_path)))
    expect(page.locator("#attachment")).to_contain_text("Voice note: checkout-502.wav")
    page.get_by_role("button", name="Send").click()

    turn = page.locator(".turn").last
    expect(turn.locator(".bubble .pill")).to_have_text("voice note")
    expect(turn.get_by_label("Your voice note")).to_be_visible()
    expect(turn.locator(".answer")).to_contain_text("transcription needs a model server")
    expect(page.locator("#status")).to_contain_text("transcription needs a model server")
    page.screenshot(path=SCREENSHOTS / "voice-note-offline.png", full_page=True)
    assert not Message.objects.exists()  # refused before anything was stored


def test_online_a_spoken_ticket_request_is_proposed_then_filed_on_confirmation(
    online_daphne: str, browser: Any, erin: User, model_server: ModelServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _log_in(page, online_daphne)

    page.set_input_files("#audio-file", str(_wav(tmp_path)))
    page.get_by_role("button", name="Send").click()
    card = page.locator(".answer .intake-card").last
    expect(card).to_be_visible(timeout=60_000)
    expect(page.locator(".turn").first.locator(".bubble .pill")).to_have_text("voice note")
    expect(card).to_contain_text("Checkout Gateway")
    expect(card).to_contain_text("reply “yes, file it”")  # proposed, not filed
    assert not Ticket.objects.exists()
    transcribed = [body for path, body in model_server.seen if path.endswith("/transcriptions")]
    assert len(transcribed) == 1 and b"RIFF" in transcribed[0]
    page.screenshot(path=SCREENSHOTS / "voice-note-proposed.png", full_page=True)

    page.get_by_label("Your question").fill("yes, file it")
    page.keyboard.press("Enter")
    expect(page.locator(".answer .intake-card")).to_have_count(2, timeout=60_000)
    key = Ticket.objects.get().key
    expect(page.locator(".answer .intake-card").last.get_by_role("link", name=key)).to_be_visible()

    page.reload()  # the stored turn still says it was a voice note
    expect(page.locator(".turn").first.locator(".bubble .pill")).to_have_text("voice note")
    page.screenshot(path=SCREENSHOTS / "voice-note-filed.png", full_page=True)
