"""One visibility rule on every read path: a version imported and never activated is
staff's to preview, nobody else's. Walked here: every HTML route in the URLconf (the
admin and allauth's aside), with the staged records' ids, their versions and a word of
theirs filled in, and the chat. The API walks the same rule in tests/test_api_access.py.

Before, a staged incident or document was a 404 in the API and a 200 for anyone at
`/incidents/<id>/`, `/incidents/?version=<n>` and `/knowledge/<id>/` (issue 17).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import get_resolver

from copilot.events import Event
from copilot.services import conversation_create
from incidents.models import Incident
from tests.copilot.conftest import ask
from tests.factories import (
    ConversationFactory,
    MessageFactory,
    document_row,
    documents_import,
    incident_row,
    incidents_import,
)
from tests.test_control_characters import _PARAMETER, _routes

pytestmark = pytest.mark.django_db

STAGED_INCIDENT, STAGED_DOCUMENT = "INC-2030-01-01-001", "KB-RB-777"
# In the staged records only, and never in a URL: a page that shows it leaks them.
SECRET = "quokkaquartz"
# Also theirs, and asked for by every walked URL (`?q=`): search has a reason to find them.
WORD = "zanzibar"
NOT_OURS = ("/admin/", "/accounts/", "/api/")


@pytest.fixture
def world(tmp_path: Path, alice: Any) -> dict[str, Any]:
    """Active records, the staged ones, and alice's conversation with one answer."""
    staged_text = f"{WORD} settlement stalled {SECRET}"
    incidents_import(tmp_path / "a.jsonl", [incident_row("INC-2025-03-04-001")], activate=True)
    incidents = incidents_import(
        tmp_path / "s.jsonl",
        [incident_row(STAGED_INCIDENT, title=staged_text, root_cause=staged_text)],
        version_label="next",
    )
    documents_import(tmp_path / "d.jsonl", [document_row("KB-RB-001")], activate=True)
    documents = documents_import(
        tmp_path / "sd.jsonl",
        [document_row(STAGED_DOCUMENT, title=staged_text, body=f"## Steps\n1. {staged_text}")],
        version_label="next",
    )
    conversation = ConversationFactory(owner=alice)
    return {
        "incident_id": STAGED_INCIDENT,
        "doc_id": STAGED_DOCUMENT,
        "pk": Incident.objects.get(incident_id=STAGED_INCIDENT).pk,
        "conversation_id": conversation.pk,
        "message_id": MessageFactory(conversation=conversation).pk,
        "key": "DESK-1",
        "versions": [incidents.pk, documents.pk],
    }


def _urls(world: dict[str, Any]) -> list[str]:
    """Every HTML route, its parameters filled with the world's, each asked with a staged
    version and the staged records' word."""
    urls = []
    for route in _routes(get_resolver().url_patterns):
        if route.startswith(NOT_OURS):
            continue
        path = _PARAMETER.sub(lambda m: str(world[m.group(0)[1:-1].split(":")[-1]]), route)
        urls += [f"{path}?version={version}&q={WORD}" for version in world["versions"]]
        urls.append(path)
    return urls


def test_no_html_route_shows_a_staged_record_to_a_user_who_is_not_staff(
    client: Client, alice: Any, world: dict[str, Any]
) -> None:
    client.force_login(alice)
    urls = _urls(world)
    assert f"/incidents/{STAGED_INCIDENT}/" in urls and f"/knowledge/{STAGED_DOCUMENT}/" in urls
    shown, failed = [], []
    for url in urls:
        response = client.get(url)
        body = (b"".join(response) if response.streaming else response.content).decode()
        if response.status_code >= 500:
            failed.append(f"{url}: {response.status_code}")
        # An id the URL asks for may be named back (a 404 says what was not found).
        leaks = [SECRET, *(key for key in (STAGED_INCIDENT, STAGED_DOCUMENT) if key not in url)]
        shown += [f"{url}: {text}" for text in leaks if text.lower() in body.lower()]
    assert failed == []
    assert shown == []
    for url in (f"/incidents/{STAGED_INCIDENT}/", f"/knowledge/{STAGED_DOCUMENT}/"):
        assert client.get(url).status_code == 404


@pytest.mark.parametrize(
    "question",
    [
        f"What happened in {STAGED_INCIDENT}?",
        f"Have we seen {WORD} settlement stalls before?",
        f"Is there a runbook for a stalled {WORD} settlement?",
        f"Show me {STAGED_DOCUMENT}",
    ],
)
def test_the_chat_never_answers_from_a_staged_record(
    alice: Any, world: dict[str, Any], question: str
) -> None:
    events: list[Event] = ask(conversation_create(owner=alice), alice, question)
    # Ids asked for are said back ("Searching for INC-..."); the records' words never are.
    assert SECRET not in " ".join(str(event.to_message()) for event in events).lower()


def test_staff_preview_the_staged_records_where_the_pages_offer_it(
    client: Client, bob: Any, world: dict[str, Any]
) -> None:
    client.force_login(bob)
    incidents_version, _ = world["versions"]
    listed = client.get("/incidents/", {"version": incidents_version}).content.decode()
    assert SECRET in listed.lower()
    assert SECRET in client.get(f"/incidents/{STAGED_INCIDENT}/").content.decode().lower()
    assert SECRET in client.get(f"/knowledge/{STAGED_DOCUMENT}/").content.decode().lower()
