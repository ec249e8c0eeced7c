"""The knowledge list (type, service, tag) and the document page with its freshness."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from incidentdesk.errors import StaffOnlyError
from knowledge.models import KnowledgeDocument
from knowledge.services import knowledge_document_mark_validated
from tests.factories import (
    document_row,
    documents_import,
    key_rotation_runbook,
    secret_cache_known_issue,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def documents(tmp_path: Path) -> None:
    fresh = (timezone.now() - dt.timedelta(days=10)).isoformat()
    rows = [
        key_rotation_runbook(
            title="Rotating PayU Core API keys",
            tags=["api-key"],
            body="## Steps\n1. Rotate the key\n2. Restart gw-pool-b (see INC-2025-08-24-001)",
            last_validated_at=fresh,
        ),
        secret_cache_known_issue(
            tags=["dns"],
            body="Old <script>alert(1)</script> caches.",
            last_validated_at="2020-01-01T00:00:00Z",
        ),
    ]
    documents_import(tmp_path / "kb.jsonl", rows, activate=True)


def test_knowledge_pages_need_a_login(client: Client, documents) -> None:
    for url in ["/knowledge/", "/knowledge/KB-RB-001/"]:
        assert client.get(url)["Location"].startswith("/accounts/login/"), url


def test_the_list_filters_by_type_service_and_tag(client: Client, alice, documents) -> None:
    client.force_login(alice)
    everything = client.get("/knowledge/").content.decode()
    assert "2 documents" in everything and "stale" in everything
    for params, shown, hidden in [
        ({"type": "known_issue"}, "KB-KI-001", "KB-RB-001"),
        ({"service": "PayU Core"}, "KB-RB-001", "KB-KI-001"),
        ({"tag": "dns"}, "KB-KI-001", "KB-RB-001"),
    ]:
        page = client.get("/knowledge/", params).content.decode()
        assert f'href="/knowledge/{shown}/"' in page, params
        assert f'href="/knowledge/{hidden}/"' not in page, params


def test_a_document_renders_sanitised_markdown_with_linked_ids(
    client: Client, alice, documents
) -> None:
    client.force_login(alice)
    page = client.get("/knowledge/kb-rb-001/").content.decode()
    assert "<h2>Steps</h2>" in page and "<ol>" in page
    assert 'href="/incidents/INC-2025-08-24-001/"' in page
    assert "10 days ago" in page and 'class="stale"' not in page


def test_an_old_document_is_flagged_stale(client: Client, alice, documents, settings) -> None:
    client.force_login(alice)
    page = client.get("/knowledge/KB-KI-001/").content.decode()
    assert 'class="stale"' in page and "older than 180 days" in page
    assert "<script>" not in page.split('class="card markdown"')[1]
    settings.KNOWLEDGE_STALE_DAYS = 100000
    assert 'class="stale"' not in client.get("/knowledge/KB-KI-001/").content.decode()


def test_an_unknown_document_is_a_404(client: Client, alice, documents) -> None:
    client.force_login(alice)
    assert client.get("/knowledge/KB-XX-999/").status_code == 404


def test_a_document_only_in_a_staged_version_is_a_404_except_for_staff(
    client: Client, alice, bob, documents, tmp_path: Path
) -> None:
    staged = [document_row("KB-RB-777", title="Not signed off yet")]
    documents_import(tmp_path / "staged.jsonl", staged, version_label="next")
    client.force_login(alice)
    assert client.get("/knowledge/KB-RB-777/").status_code == 404
    assert "Rotating PayU Core" in client.get("/knowledge/KB-RB-001/").content.decode()
    client.force_login(bob)
    assert "Not signed off yet" in client.get("/knowledge/KB-RB-777/").content.decode()


def test_staff_mark_a_stale_document_validated_from_its_page(
    client: Client, bob, documents
) -> None:
    client.force_login(bob)
    page = client.get("/knowledge/KB-KI-001/").content.decode()
    assert 'class="stale"' in page and 'action="/knowledge/KB-KI-001/validate/"' in page
    response = client.post("/knowledge/KB-KI-001/validate/", follow=True)
    assert response.redirect_chain == [("/knowledge/KB-KI-001/", 302)]
    page = response.content.decode()
    assert "KB-KI-001 marked validated today." in page
    assert 'class="stale"' not in page and "0 days ago" in page
    validated = KnowledgeDocument.objects.get(doc_id="KB-KI-001").last_validated_at
    assert validated is not None and timezone.now() - validated < dt.timedelta(minutes=1)


def test_only_staff_may_mark_validated(client: Client, alice, documents) -> None:
    client.force_login(alice)
    assert "Mark validated" not in client.get("/knowledge/KB-KI-001/").content.decode()
    assert client.post("/knowledge/KB-KI-001/validate/").status_code == 403
    assert client.get("/knowledge/KB-KI-001/validate/").status_code == 405
    assert client.post("/knowledge/KB-XX-404/validate/").status_code == 404
    client.logout()
    assert client.post("/knowledge/KB-KI-001/validate/")["Location"].startswith("/accounts/login/")
    document = KnowledgeDocument.objects.get(doc_id="KB-KI-001")
    assert document.last_validated_at == dt.datetime(2020, 1, 1, tzinfo=dt.UTC)


def test_the_service_refuses_non_staff(alice, documents) -> None:
    document = KnowledgeDocument.objects.get(doc_id="KB-KI-001")
    with pytest.raises(StaffOnlyError):
        knowledge_document_mark_validated(document=document, user=alice)
