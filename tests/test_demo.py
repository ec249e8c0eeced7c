"""The demo data `make run` loads once, and the login it prints."""

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from copilot.models import GoldenExample
from incidentdesk.demo import DEMO_DIR
from incidents.models import DatasetVersion, Incident
from incidents.parsing import date_from_incident_id
from incidents.selectors import incident_search_similar
from knowledge.models import KnowledgeDocument
from knowledge.selectors import document_freshness
from knowledge.services import knowledge_import_file

pytestmark = pytest.mark.django_db


def test_load_demo_loads_once_and_prints_a_working_login(capsys) -> None:
    call_command("load_demo")
    first = capsys.readouterr().out
    call_command("load_demo")
    second = capsys.readouterr().out

    assert "Loading demo data" in first and "Loading demo data" not in second
    assert DatasetVersion.objects.filter(status="active").count() == 2
    assert Incident.objects.count() >= 40
    assert Incident.objects.values("impacted_application").distinct().count() >= 6
    assert set(KnowledgeDocument.objects.values_list("type", flat=True)) == {
        "runbook", "postmortem", "architecture", "known_issue",
    }  # fmt: skip
    assert GoldenExample.objects.filter(embedding__isnull=False).count() >= 6
    password = second.split("password")[-1].strip()
    assert authenticate(username="demo", password=password) is not None


def test_the_demo_answers_the_original_question_by_vector_search() -> None:
    call_command("load_demo", verbosity=0)
    hits = incident_search_similar(query="How do I fix HTTP 403 errors in PayU?", limit=5).hits
    assert "INC-2025-08-24-001" in [hit.incident.incident_id for hit in hits]


def test_demo_documents_are_mostly_fresh_with_a_few_stale_on_purpose() -> None:
    """As of the last day the demo was curated: the stale banner marks a few, not all."""
    knowledge_import_file(path=DEMO_DIR / "knowledge.jsonl", dataset_name="kb", activate=True)
    documents = list(KnowledgeDocument.objects.all())
    curated_on = max(doc.last_validated_at for doc in documents if doc.last_validated_at)
    stale = sorted(
        doc.doc_id for doc in documents if document_freshness(doc, now=curated_on).is_stale
    )
    assert all(doc.last_validated_at for doc in documents)  # nothing "Never validated"
    assert 2 <= len(stale) <= len(documents) // 5, stale
    for doc in documents:  # validated after the incidents it cites, as a person would
        cited = [date_from_incident_id(i) for i in doc.related_incidents]
        assert all(d and d <= doc.last_validated_at.date() for d in cited), doc.doc_id
