"""factory_boy factories, and the seed rows tests import.

Incidents and documents get real chunks only through the import service:
`incidents_import` and `documents_import` write rows as JSON Lines and import
them as the commands do.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import factory
from django.contrib.auth.models import User

from incidents.models import Dataset, DatasetVersion, Incident
from incidents.services import incident_import_file
from knowledge.services import knowledge_import_file


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery")


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset

    name = factory.Sequence(lambda n: f"dataset-{n}")
    slug = factory.LazyAttribute(lambda d: d.name)
    kind = Dataset.Kind.INCIDENTS


class DatasetVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DatasetVersion

    dataset = factory.SubFactory(DatasetFactory)
    label = factory.Sequence(lambda n: f"v{n}")
    status = DatasetVersion.Status.READY
    embedding_model = "all-MiniLM-L6-v2-int8-onnx"


class IncidentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Incident

    version = factory.SubFactory(DatasetVersionFactory)
    occurred_at = factory.Sequence(lambda n: dt.date(2025, 1, 1) + dt.timedelta(days=n))
    incident_id = factory.LazyAttributeSequence(
        lambda o, n: f"INC-{o.occurred_at:%Y-%m-%d}-{n % 1000:03d}"
    )
    title = factory.Sequence(lambda n: f"Incident number {n}")
    impacted_application = "PayU Core"


def incident_row(incident_id: str, **fields: object) -> dict[str, object]:
    """A valid row in the seed schema, for import tests."""
    return {
        "incident_id": incident_id,
        "title": f"Checkout errors ({incident_id})",
        "impacted_application": "Checkout Gateway",
        "root_cause": "A connection pool was exhausted.",
        "mitigation": "Raised the pool size and restarted the pods.",
        "repeat_incident": False,
        "occurred_at": "2025-03-04",
        "tags": ["database"],
        "body": "Checkout requests timed out for 20 minutes.",
        **fields,
    }


def key_rotation_403(
    incident_id: str = "INC-2025-08-24-001", **fields: object
) -> dict[str, object]:
    """The seed most tests ask about: merchants got 403s after a key rotation."""
    return incident_row(
        incident_id,
        **{
            "title": "HTTP 403 errors in PayU Core after API key rotation",
            "impacted_application": "PayU Core",
            "root_cause": "The new API key never reached one gateway pool's secret cache.",
            **fields,
        },
    )


def settlement_missing_rows(
    incident_id: str = "INC-2025-09-01-001", **fields: object
) -> dict[str, object]:
    """The seed that should not match a 403 question."""
    return incident_row(
        incident_id,
        **{"title": "Settlement report missing rows", **fields},
    )


def document_row(doc_id: str, **fields: object) -> dict[str, object]:
    """A valid knowledge row (a runbook unless `type` says otherwise), for import tests."""
    return {
        "doc_id": doc_id,
        "title": f"Runbook {doc_id}",
        "type": "runbook",
        "services": ["PayU Core"],
        "tags": [],
        "body": "## Steps\n1. Restart the pods.",
        **fields,
    }


def key_rotation_runbook(**fields: object) -> dict[str, object]:
    return document_row(
        "KB-RB-001",
        **{
            "title": "Rotating API keys without 403s",
            "tags": ["api-key", "403"],
            "body": "## Steps\n1. Sync the secret to every gateway pool.\n2. Restart the pods.",
            **fields,
        },
    )


def secret_cache_known_issue(**fields: object) -> dict[str, object]:
    return document_row(
        "KB-KI-001",
        **{
            "title": "Secret caches keep old keys",
            "type": "known_issue",
            "services": ["Checkout Gateway"],
            "tags": ["secrets"],
            "body": "## Issue\nGateway pools cache secrets for 24 hours.",
            **fields,
        },
    )


def payment_flow_architecture(**fields: object) -> dict[str, object]:
    return document_row(
        "KB-AR-001",
        **{
            "title": "Payment flow",
            "type": "architecture",
            "tags": ["architecture"],
            "body": "## Overview\nCheckout calls fraud scoring, then PayU Core.",
            **fields,
        },
    )


def rows_write(path: Path, rows: Iterable[Mapping[str, object]]) -> Path:
    """`rows` as JSON Lines at `path`, the format the import commands read."""
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return path


def incidents_import(
    path: Path, rows: Iterable[Mapping[str, object]], *, dataset_name: str = "ops", **options: Any
) -> DatasetVersion:
    """`rows` through the real import service (chunks and embeddings included)."""
    version, _ = incident_import_file(
        path=rows_write(path, rows), dataset_name=dataset_name, **options
    )
    return version


def documents_import(
    path: Path, rows: Iterable[Mapping[str, object]], *, dataset_name: str = "kb", **options: Any
) -> DatasetVersion:
    """Knowledge `rows` through the real import service."""
    version, _ = knowledge_import_file(
        path=rows_write(path, rows), dataset_name=dataset_name, **options
    )
    return version


# --- API and curation (issue 6) ---------------------------------------------------------


class KnowledgeDocumentFactory(factory.django.DjangoModelFactory):
    """A document without chunks (lists and details need none; search needs the import)."""

    class Meta:
        model = "knowledge.KnowledgeDocument"

    version = factory.SubFactory(DatasetVersionFactory, dataset__kind=Dataset.Kind.KNOWLEDGE)
    doc_id = factory.Sequence(lambda n: f"KB-RB-{n:03d}")
    title = factory.Sequence(lambda n: f"Runbook number {n}")
    type = "runbook"
    services = factory.LazyFunction(lambda: ["PayU Core"])
    body = "## Steps\n1. Restart the pods."


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "copilot.Conversation"

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Conversation {n}")


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "copilot.Message"

    conversation = factory.SubFactory(ConversationFactory)
    role = "assistant"
    content = "INC-2025-03-04-001 was caused by an exhausted connection pool."


class AgentRunFactory(factory.django.DjangoModelFactory):
    """An answer the offline engine is still writing (status running)."""

    class Meta:
        model = "copilot.AgentRun"

    conversation = factory.SubFactory(ConversationFactory)
    model = "offline"


class TicketFactory(factory.django.DjangoModelFactory):
    """A built-in ticket, filed by its creator from a conversation of theirs."""

    class Meta:
        model = "copilot.Ticket"

    key = factory.Sequence(lambda n: f"DESK-{n + 1}")
    title = factory.LazyAttribute(lambda t: f"Ticket {t.key}")
    severity = "SEV2"
    service = "Checkout Gateway"
    created_by = factory.SubFactory(UserFactory)
    conversation = factory.SubFactory(
        ConversationFactory, owner=factory.SelfAttribute("..created_by")
    )
    incident_id = "INC-2026-11-24-900001"
    idempotency_key = factory.LazyAttribute(lambda t: f"test-{t.key}")


class ImportJobFactory(factory.django.DjangoModelFactory):
    """A queued import into a version still building."""

    class Meta:
        model = "incidents.ImportJob"

    version = factory.SubFactory(DatasetVersionFactory, status=DatasetVersion.Status.BUILDING)
    file = "imports/x.jsonl"


class GoldenExampleFactory(factory.django.DjangoModelFactory):
    """Not embedded: golden_example_embed (or the Celery task) does that."""

    class Meta:
        model = "copilot.GoldenExample"

    question = factory.Sequence(lambda n: f"Why did checkout fail on day {n}?")
    answer = "See INC-2025-03-04-001: the connection pool was exhausted."
