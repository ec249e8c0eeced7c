"""Writes for knowledge documents: imports and re-embedding after edits."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from incidentdesk.embeddings import embed_texts
from incidentdesk.errors import StaffOnlyError
from incidents import importers
from incidents.importers import SourceRow
from incidents.importing import ImportResult, ImportSpec, content_hash
from incidents.models import Dataset, DatasetVersion
from incidents.parsing import knowledge_chunk_texts
from incidents.services import dataset_import_rows
from knowledge.importers import parse_document, read_markdown_folder
from knowledge.models import KnowledgeChunk, KnowledgeDocument


def document_chunk_texts(fields: dict[str, Any]) -> list[str]:
    """Title chunk carrying type, services and tags; then one per section."""
    heading = "\n".join(
        part
        for part in (
            fields["title"],
            f"Type: {fields['type'].replace('_', ' ')}",
            f"Services: {', '.join(fields['services'])}" if fields["services"] else "",
            f"Tags: {', '.join(fields['tags'])}" if fields["tags"] else "",
        )
        if part
    )
    sections = knowledge_chunk_texts(title=fields["title"], body=fields["body"])
    return [heading, *sections[1:]]


KNOWLEDGE_SPEC = ImportSpec(
    model=KnowledgeDocument,
    chunk_model=KnowledgeChunk,
    key_field="doc_id",
    parent_field="document",
    parse=parse_document,
    chunk_texts=document_chunk_texts,
    hnsw_index="knowledge_chunk_embedding_hnsw",
)


def knowledge_import_file(
    *, path: Path, file_format: str | None = None, **options: Any
) -> tuple[DatasetVersion, ImportResult]:
    """Import a JSONL/JSON/CSV file or a folder of markdown files."""
    rows: Iterable[SourceRow]
    if path.is_dir():
        rows = list(read_markdown_folder(path))
    else:
        rows = importers.read_rows(path, file_format)
    return dataset_import_rows(
        spec=KNOWLEDGE_SPEC, kind=Dataset.Kind.KNOWLEDGE, rows=rows, **options
    )


def _document_fields(document: KnowledgeDocument) -> dict[str, Any]:
    names = ("title", "type", "services", "tags", "related_incidents", "path")
    return {name: getattr(document, name) for name in names} | {"body": document.body}


@transaction.atomic
def knowledge_document_reembed(*, document: KnowledgeDocument) -> int:
    """Rebuild a document's chunks after an edit; returns the chunk count."""
    fields = _document_fields(document)
    texts = document_chunk_texts(fields)
    vectors = embed_texts(texts)
    document.chunks.all().delete()
    KnowledgeChunk.objects.bulk_create(
        KnowledgeChunk(document=document, version=document.version, ordinal=i, text=t, embedding=v)
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    )
    parsed = importers.ParsedRow(0, document.doc_id, fields, document.extra)
    KnowledgeDocument.objects.filter(pk=document.pk).update(content_hash=content_hash(parsed))
    return len(texts)


def knowledge_document_update(*, document: KnowledgeDocument) -> KnowledgeDocument:
    """Save an edited document and re-embed it in the background."""
    from knowledge.tasks import knowledge_document_embed  # a real cycle: tasks call services

    document.full_clean()
    document.save()
    transaction.on_commit(lambda: knowledge_document_embed.delay(document.pk))
    return document


def knowledge_document_mark_validated(
    *, document: KnowledgeDocument, user: AbstractBaseUser, now: dt.datetime | None = None
) -> KnowledgeDocument:
    """A staff member checked the document against the system: it is fresh again.

    Only the date changes, so the document is not re-embedded.
    """
    if not getattr(user, "is_staff", False):
        raise StaffOnlyError("Only staff can mark a document validated.")
    document.last_validated_at = now or timezone.now()
    document.save(update_fields=["last_validated_at", "updated_at"])
    return document


def knowledge_validation_dates_shift(*, version: DatasetVersion, latest_on: dt.date) -> int:
    """Move a version's validation dates by whole days so the latest falls on
    `latest_on`, keeping how far apart they are; returns the documents moved.

    Demo documents are written with fixed dates; loaded a year later, every one
    would be stale. Shifted to the day they are loaded, the few written to be
    stale stay stale and the rest stay fresh, whatever that day is.
    """
    documents = KnowledgeDocument.objects.filter(version=version, last_validated_at__isnull=False)
    latest = documents.aggregate(latest=Max("last_validated_at"))["latest"]
    if latest is None:
        return 0
    shift = latest_on - timezone.localtime(latest).date()
    return documents.update(last_validated_at=F("last_validated_at") + shift)
