"""factory_boy factories. Incidents get real chunks only through the import service."""

from __future__ import annotations

import datetime as dt

import factory
from django.contrib.auth.models import User

from incidents.models import Dataset, DatasetVersion, Incident


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


class GoldenExampleFactory(factory.django.DjangoModelFactory):
    """Not embedded: golden_example_embed (or the Celery task) does that."""

    class Meta:
        model = "copilot.GoldenExample"

    question = factory.Sequence(lambda n: f"Why did checkout fail on day {n}?")
    answer = "See INC-2025-03-04-001: the connection pool was exhausted."
