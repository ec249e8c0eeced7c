"""Who may call what: every endpoint for anonymous, alice (owner), carol (another user)
and bob (staff), with the status each must get and no response leaking what it must not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from copilot.models import Message
from incidents.models import Dataset, DatasetVersion
from tests.factories import (
    ConversationFactory,
    DatasetVersionFactory,
    GoldenExampleFactory,
    ImportJobFactory,
    KnowledgeDocumentFactory,
    MessageFactory,
    UserFactory,
    incident_row,
    incidents_import,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_api_rates")]

STAGED_ID = "INC-2030-01-01-001"
ALICE_SECRET = "alice-private-note-7f3a"
GOLDEN_SECRET = "golden-curated-answer-91b2"
PERSONAS = ("anonymous", "alice", "carol", "bob")
# Owners act last, so their deletes cannot hide a row from the others.
ORDER = ("anonymous", "carol", "bob", "alice")


@pytest.fixture
def world(tmp_path: Path, alice: Any, bob: Any) -> dict[str, Any]:
    """Active incidents and documents, a staged version, a job, a golden example, alice's chat."""
    version = incidents_import(
        tmp_path / "a.jsonl", [incident_row("INC-2025-03-04-001")], activate=True
    )
    staged_version = incidents_import(
        tmp_path / "s.jsonl", [incident_row(STAGED_ID)], version_label="next"
    )
    spare = DatasetVersionFactory(dataset__name="spare", dataset__slug="spare")
    document = KnowledgeDocumentFactory(
        doc_id="KB-RB-900", version__status=DatasetVersion.Status.ACTIVE
    )
    conversation = ConversationFactory(owner=alice, title="Alice's chat")
    MessageFactory(conversation=conversation, role="user", content=f"{ALICE_SECRET} question")
    answer = MessageFactory(conversation=conversation, content=f"Answer {ALICE_SECRET}")
    return {
        "version": version.pk,
        "staged": staged_version.pk,
        "spare": spare.pk,
        "doc": document.doc_id,
        "job": ImportJobFactory(version=staged_version).pk,
        "golden": GoldenExampleFactory(answer=GOLDEN_SECRET).pk,
        "conversation": conversation.pk,
        "message": answer.pk,
        "users": {"alice": alice, "carol": UserFactory(username="carol"), "bob": bob},
    }


def upload() -> dict[str, Any]:
    return {
        "file": SimpleUploadedFile(
            "rows.jsonl", json.dumps(incident_row("INC-2025-05-05-001")).encode()
        )
    }


# (method, url, body, expected statuses for anonymous, alice, carol, bob)
MATRIX: list[tuple[str, str, Any, tuple[int, int, int, int]]] = [
    ("get", "/api/incidents/", None, (401, 200, 200, 200)),
    ("get", "/api/incidents/?version={staged}", None, (401, 200, 200, 200)),
    ("post", "/api/incidents/", {"version": "{version}", "incident_id": "INC-2025-12-01-009",
                                  "title": "Disk full"}, (401, 403, 403, 201)),
    ("get", "/api/incidents/search/?q=checkout+errors", None, (401, 200, 200, 200)),
    ("get", "/api/incidents/inc\u20112025\u201003\u201304\u2013001/", None, (401, 200, 200, 200)),
    ("get", f"/api/incidents/{STAGED_ID}/", None, (401, 404, 404, 404)),
    ("get", f"/api/incidents/{STAGED_ID}/?version={{staged}}", None, (401, 404, 404, 200)),
    ("patch", "/api/incidents/INC-2025-03-04-001/", {"severity": "SEV2"}, (401, 403, 403, 200)),
    ("get", "/api/knowledge/documents/", None, (401, 200, 200, 200)),
    ("get", "/api/knowledge/documents/{doc}/", None, (401, 200, 200, 200)),
    ("get", "/api/knowledge/search/?query=restart+pods", None, (401, 200, 200, 200)),
    ("get", "/api/datasets/", None, (401, 403, 403, 200)),
    ("post", "/api/datasets/", {"name": "fresh", "kind": "incidents"}, (401, 403, 403, 201)),
    ("get", "/api/datasets/ops/", None, (401, 403, 403, 200)),
    ("post", "/api/datasets/ops/uploads/", upload, (401, 403, 403, 202)),
    ("post", "/api/datasets/ops/rollback/", None, (401, 403, 403, 409)),
    ("get", "/api/dataset-versions/", None, (401, 403, 403, 200)),
    ("get", "/api/dataset-versions/{staged}/", None, (401, 403, 403, 200)),
    ("get", "/api/dataset-versions/{staged}/diff/", None, (401, 403, 403, 200)),
    ("post", "/api/dataset-versions/{spare}/activate/", None, (401, 403, 403, 200)),
    ("get", "/api/import-jobs/", None, (401, 403, 403, 200)),
    ("get", "/api/import-jobs/{job}/", None, (401, 403, 403, 200)),
    ("get", "/api/golden-examples/", None, (401, 403, 403, 200)),
    ("post", "/api/golden-examples/", {"question": "Q?", "answer": "A."}, (401, 403, 403, 201)),
    ("get", "/api/golden-examples/{golden}/", None, (401, 403, 403, 200)),
    ("patch", "/api/golden-examples/{golden}/", {"is_active": False}, (401, 403, 403, 200)),
    ("get", "/api/conversations/", None, (401, 200, 200, 200)),
    ("get", "/api/conversations/{conversation}/", None, (401, 200, 404, 404)),
    ("patch", "/api/conversations/{conversation}/", {"title": "Renamed"}, (401, 200, 404, 404)),
    ("post", "/api/conversations/{conversation}/cancel/", None, (401, 200, 404, 404)),
    ("post", "/api/messages/{message}/feedback/", {"feedback": "down"}, (401, 200, 404, 404)),
    ("post", "/api/chat/", {"conversation_id": "{conversation}", "message": "Checkout errors?"},
     (401, 200, 404, 404)),
    ("get", "/api/schema/", None, (401, 200, 200, 200)),
    ("get", "/api/docs/", None, (302, 200, 200, 200)),
    ("delete", "/api/golden-examples/{golden}/", None, (401, 403, 403, 204)),
    ("delete", "/api/conversations/{conversation}/", None, (401, 204, 404, 404)),
    ("post", "/api/conversations/{conversation}/restore/", None, (401, 200, 404, 404)),
]  # fmt: skip


def fill(value: Any, world: dict[str, Any]) -> Any:
    """`{name}` placeholders in URLs and bodies, from the world fixture."""
    if isinstance(value, str):
        filled = value.format(**world)
        return int(filled) if value.startswith("{") and filled.isdigit() else filled
    if isinstance(value, dict):
        return {key: fill(item, world) for key, item in value.items()}
    return value


def call(client: APIClient, method: str, url: str, body: Any) -> Any:
    if callable(body):
        return getattr(client, method)(url, body(), format="multipart")
    return getattr(client, method)(url, body, format="json")


def forbidden_strings(persona: str) -> list[str]:
    """What this persona must never read: others' conversations, staged rows, curation."""
    if persona == "alice":
        return [GOLDEN_SECRET]
    if persona == "bob":
        return [ALICE_SECRET]
    return [ALICE_SECRET, GOLDEN_SECRET, STAGED_ID]


def test_every_endpoint_answers_each_persona_as_the_rules_say_and_leaks_nothing(
    world: dict[str, Any],
) -> None:
    clients = {"anonymous": APIClient()}
    for name, user in world["users"].items():
        clients[name] = APIClient()
        clients[name].force_login(user)
    wrong, leaks = [], []
    for method, url, body, expected in MATRIX:
        for persona in ORDER:
            response = call(clients[persona], method, fill(url, world), fill(body, world))
            want = expected[PERSONAS.index(persona)]
            if response.status_code != want:
                wrong.append(f"{persona} {method.upper()} {url}: {response.status_code} != {want}")
            content = b"".join(response) if response.streaming else response.content
            text = content.decode(errors="replace")
            # A string the caller wrote in the URL (a 404 names the id asked for) is no leak.
            leaks += [f"{persona} {method.upper()} {url}: {s}" for s in forbidden_strings(persona)
                      if s in text and s not in url]  # fmt: skip
    assert wrong == []
    assert leaks == []


def test_every_documented_operation_is_in_the_matrix(api_client: APIClient, alice: Any) -> None:
    api_client.force_login(alice)
    schema = api_client.get("/api/schema/?format=json").json()
    documented = {
        (method, path) for path, operations in schema["paths"].items() for method in operations
    }
    covered = {(method, path_template(url)) for method, url, _, _ in MATRIX}
    # Incident intake (POST /api/incident) is its own issue, with its own access tests.
    covered.add(("post", "/api/incident"))
    assert documented - covered == set()


def path_template(url: str) -> str:
    """/api/conversations/{conversation}/ → /api/conversations/{conversation_id}/ etc."""
    names = {
        "/api/incidents/": "{incident_id}", "/api/knowledge/documents/": "{doc_id}",
        "/api/datasets/": "{slug}", "/api/dataset-versions/": "{version_id}",
        "/api/import-jobs/": "{job_id}", "/api/golden-examples/": "{example_id}",
        "/api/conversations/": "{conversation_id}", "/api/messages/": "{message_id}",
    }  # fmt: skip
    path = url.split("?")[0]
    for prefix, name in names.items():
        if path.startswith(prefix) and path != prefix:
            rest = path[len(prefix) :].split("/", 1)
            if rest[0] != "search":
                path = prefix + name + "/" + rest[1]
    return path


def test_a_staff_member_reads_other_peoples_conversations_only_in_the_admin(
    world: dict[str, Any], bob: Any
) -> None:
    client = APIClient()
    client.force_login(bob)
    assert client.get(f"/api/conversations/{world['conversation']}/").status_code == 404
    page = client.get(f"/admin/copilot/conversation/{world['conversation']}/change/")
    assert page.status_code == 200
    assert ALICE_SECRET in page.content.decode()
    assert Message.objects.filter(conversation_id=world["conversation"]).count() == 2
    assert Dataset.objects.filter(slug="ops").exists()
