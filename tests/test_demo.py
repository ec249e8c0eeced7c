"""The demo data `make run` loads once, and the login it prints."""

import datetime as dt

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.utils import timezone

from copilot.models import GoldenExample
from incidentdesk.demo import demo_knowledge_load
from incidents.models import DatasetVersion, Incident
from incidents.parsing import date_from_incident_id
from incidents.selectors import incident_search_similar
from knowledge.models import KnowledgeDocument
from knowledge.selectors import document_freshness

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


@pytest.mark.parametrize("years_from_now", [0, 3])
def test_demo_documents_are_mostly_fresh_with_a_few_stale_on_purpose_on_the_day_loaded(
    years_from_now: int,
) -> None:
    """Whatever day the demo is loaded: fixed dates went stale a month after curation."""
    today = timezone.localdate() + dt.timedelta(days=365 * years_from_now)
    demo_knowledge_load(today=today)
    now = dt.datetime.combine(today, dt.time(12), tzinfo=dt.UTC)
    documents = list(KnowledgeDocument.objects.all())
    stale = sorted(doc.doc_id for doc in documents if document_freshness(doc, now=now).is_stale)
    assert all(doc.last_validated_at for doc in documents)  # nothing "Never validated"
    assert max(doc.last_validated_at for doc in documents).date() == today
    assert 2 <= len(stale) <= len(documents) // 5, stale
    for doc in documents:  # validated after the incidents it cites, as a person would
        cited = [date_from_incident_id(i) for i in doc.related_incidents]
        assert all(d and d <= doc.last_validated_at.date() for d in cited), doc.doc_id
