"""Knowledge documents from JSON Lines and from a folder of markdown files."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from incidents.models import Dataset, ImportJob
from incidents.services import import_job_create, import_job_run_now
from knowledge.models import KnowledgeChunk, KnowledgeDocument
from knowledge.services import knowledge_document_reembed, knowledge_import_file
from tests.factories import DatasetFactory

pytestmark = pytest.mark.django_db

RUNBOOK = """---
title: Restart the gateway
type: runbook
services: [Checkout Gateway]
tags:
  - restart
---
Use this when pods hold stale secrets.

## Steps
1. `kubectl rollout restart deploy/checkout-gateway`

## Rollback
Nothing to roll back.
"""


def test_the_eval_documents_import_with_sections_as_chunks(eval_dir: Path) -> None:
    version, result = knowledge_import_file(
        path=eval_dir / "knowledge.jsonl", dataset_name="kb", activate=True
    )
    assert (result.created, result.failed, version.status) == (45, 0, "active")
    assert set(KnowledgeDocument.objects.values_list("type", flat=True)) == {
        "runbook", "known_issue", "architecture", "postmortem",
    }  # fmt: skip
    runbook = KnowledgeDocument.objects.get(doc_id="KB-RB-001")
    assert runbook.chunks.count() > 3
    assert runbook.chunks.filter(text__startswith=f"{runbook.title} — Symptoms").exists()


def test_a_markdown_folder_imports_front_matter_and_path(tmp_path: Path) -> None:
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "restart-gateway.md").write_text(RUNBOOK)
    (tmp_path / "broken.md").write_text("---\ntitle: [unclosed\n---\nbody")
    _, result = knowledge_import_file(path=tmp_path, dataset_name="runbooks")
    document = KnowledgeDocument.objects.get()
    assert (document.doc_id, document.type, document.path) == (
        "RESTART-GATEWAY", "runbook", "ops/restart-gateway.md",
    )  # fmt: skip
    assert (document.services, document.tags) == (["Checkout Gateway"], ["restart"])
    assert str(result.errors[0]).startswith("line 1: broken.md: front matter")


def test_a_document_without_a_valid_type_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "kb.jsonl"
    path.write_text('{"doc_id": "KB-1", "title": "t", "type": "howto", "body": "b"}\n')
    with pytest.raises(CommandError, match="1 row"):
        call_command("import_knowledge", str(path), "--verbosity", "0")
    assert KnowledgeDocument.objects.count() == 0


def test_reembedding_after_an_edit_replaces_the_chunks(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(RUNBOOK)
    knowledge_import_file(path=tmp_path, dataset_name="runbooks")
    document = KnowledgeDocument.objects.get()
    document.body = "## Steps\n1. Call the payments on-call."
    document.save()
    assert knowledge_document_reembed(document=document) == 2
    texts = list(KnowledgeChunk.objects.values_list("text", flat=True).order_by("ordinal"))
    assert texts[1] == "Restart the gateway — Steps\n1. Call the payments on-call."


def test_an_admin_edit_saves_then_queues_the_reembedding(
    client, bob, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    (tmp_path / "a.md").write_text(RUNBOOK)
    knowledge_import_file(path=tmp_path, dataset_name="runbooks")
    document = KnowledgeDocument.objects.get()
    client.force_login(bob)
    form = {
        "version": document.version_id, "doc_id": document.doc_id, "title": "Restart it",
        "type": "runbook", "services": "Checkout Gateway", "tags": "restart",
        "related_incidents": "", "path": "", "source_url": "", "body": "## Steps\nDo it.",
        "extra": "{}", "last_validated_at_0": "", "last_validated_at_1": "",
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(f"/admin/knowledge/knowledgedocument/{document.pk}/change/", form)
    assert response.status_code == 302
    assert KnowledgeDocument.objects.get().title == "Restart it"
    assert len(callbacks) == 1


def test_an_uploaded_knowledge_file_is_imported_through_the_registered_spec() -> None:
    """Upload jobs find the knowledge spec in IMPORT_SPECS, which KnowledgeConfig.ready() fills:
    incidents, which runs every job, never imports knowledge."""
    rows = [
        {"doc_id": f"KB-RB-00{n}", "title": f"Runbook {n}", "type": "runbook", "body": "Restart."}
        for n in (1, 2)
    ]
    upload = SimpleUploadedFile("kb.jsonl", "\n".join(json.dumps(r) for r in rows).encode())
    dataset = DatasetFactory(kind=Dataset.Kind.KNOWLEDGE)
    job = import_job_create(dataset=dataset, label="v1", uploaded_file=upload)
    try:
        job = import_job_run_now(job=ImportJob.objects.get(pk=job.pk))
        assert (job.status, job.created) == ("succeeded", 2)
        assert sorted(job.version.knowledge_documents.values_list("doc_id", flat=True)) == [
            "KB-RB-001",
            "KB-RB-002",
        ]
    finally:
        job.file.delete(save=False)
