"""Intake fixtures: a payments corpus from the demo data, screenshots drawn with Pillow."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image, ImageDraw, ImageFont

from copilot.events import DoneEvent, Event, ToolResultEvent
from copilot.intake.executor import intake_reply
from copilot.models import Conversation
from copilot.services import conversation_create
from tests.factories import documents_import, incidents_import

DEMO = Path(settings.BASE_DIR) / "incidentdesk" / "demo_data"
# Small on purpose: embedding is most of a test's time on a busy 2-core machine.
SERVICES = {"Checkout Gateway", "PayU Core (Checkout Gateway)"}
RUNBOOK = {
    "doc_id": "KB-RB-010",
    "title": "Checkout Gateway 502s after a deploy",
    "type": "runbook",
    "services": ["Checkout Gateway"],
    "tags": ["502", "deploy", "rollback"],
    "body": "## Steps\n1. Compare the 502 start time with the last deploy of the gateway.\n"
    "2. Roll back the deploy: `kubectl rollout undo deploy/checkout-gateway -n payments`.\n"
    "3. Watch the ingress 5xx rate for ten minutes.",
}
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _rows(name: str, keep: Iterable[str], key: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (DEMO / name).read_text().splitlines() if line.strip()]
    return [row for row in rows if row[key] in keep]


@pytest.fixture(autouse=True)
def _screenshots_in_tmp(settings: Any, tmp_path: Path) -> None:
    """Reports keep their screenshots under MEDIA_ROOT: a test's go to its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def payments_desk(db: None, tmp_path: Path) -> None:
    """The demo's eight Checkout Gateway incidents and a short runbook."""
    rows = _rows("incidents.jsonl", SERVICES, "impacted_application")
    incidents_import(tmp_path / "incidents.jsonl", rows, dataset_name="payments", activate=True)
    documents_import(tmp_path / "kb.jsonl", [RUNBOOK], dataset_name="payments-kb", activate=True)


def checkout_502_desk(tmp_path: Path, *, doc_id: str, steps: str, **incident: str) -> None:
    """A runbook (`steps`) and an incident (`incident`'s fields) on Checkout Gateway
    502s after a deploy: where the injection tests hide their text."""
    document = {
        "doc_id": doc_id,
        "title": "Checkout Gateway 502 errors after a deploy",
        "type": "runbook",
        "services": ["Checkout Gateway"],
        "body": f"## Steps\n{steps}",
    }
    documents_import(tmp_path / "kb.jsonl", [document], dataset_name="poisoned-kb", activate=True)
    row = {
        "incident_id": "INC-2026-05-05-001",
        "title": "Checkout Gateway 502s after a deploy",
        "impacted_application": "Checkout Gateway",
        **incident,
    }
    incidents_import(tmp_path / "incidents.jsonl", [row], dataset_name="poisoned", activate=True)


def error_dialog_png(
    lines: Iterable[str] = ("Error 502: Bad Gateway", "ERR_UPSTREAM_TIMEOUT"),
) -> bytes:
    """A screenshot of an error dialog: a title bar and dark text on white."""
    image = Image.new("RGB", (900, 320), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 900, 56), fill=(200, 40, 40))
    title_font = _font(28)
    draw.text((24, 12), "Checkout API", fill="white", font=title_font)
    for number, line in enumerate(lines):
        draw.text((24, 90 + number * 56), line, fill="black", font=_font(34))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(FONT, size)
    except OSError:
        return ImageFont.load_default(size)


def say(
    conversation: Conversation, user: User, text: str, image: bytes | None = None
) -> list[Event]:
    """One intake turn, run to its end."""
    return list(intake_reply(conversation=conversation, user=user, text=text, image=image))


def reported(owner: User, *texts: str) -> Conversation:
    """A new conversation of `owner`'s in which each of `texts` was said to intake, in order."""
    conversation = conversation_create(owner=owner)
    for text in texts:
        say(conversation, owner, text)
    return conversation


def intake_data(events: list[Event]) -> dict:
    """The incident_intake tool result's data (there is exactly one)."""
    results = [e for e in events if isinstance(e, ToolResultEvent) and e.name == "incident_intake"]
    assert len(results) == 1, [e.type for e in events]
    return results[0].data


def done_of(events: list[Event]) -> DoneEvent:
    done = [e for e in events if isinstance(e, DoneEvent)]
    assert len(done) == 1, [e.type for e in events]
    return done[0]
