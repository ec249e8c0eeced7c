"""Knowledge documents (runbooks, postmortems, architecture, known issues)."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from incidents.models import (
    DatasetVersion,
    EmbeddedChunk,
    hnsw_cosine_index,
    versioned_search_index,
)


class KnowledgeDocument(models.Model):
    """A markdown document engineers follow or learn from, within one version."""

    class Type(models.TextChoices):
        RUNBOOK = "runbook", "Runbook"
        POSTMORTEM = "postmortem", "Postmortem"
        ARCHITECTURE = "architecture", "Architecture"
        KNOWN_ISSUE = "known_issue", "Known issue"

    version = models.ForeignKey(
        DatasetVersion, on_delete=models.CASCADE, related_name="knowledge_documents"
    )
    doc_id = models.CharField(max_length=64)
    title = models.CharField(max_length=500)
    type = models.CharField(max_length=20, choices=Type.choices)
    services = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    related_incidents = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    path = models.CharField(max_length=500, blank=True)
    source_url = models.URLField(max_length=1000, blank=True)
    body = models.TextField()
    last_validated_at = models.DateTimeField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    # sha256 of the imported fields: an unchanged document is not re-embedded.
    content_hash = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["doc_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "doc_id"], name="%(app_label)s_%(class)s_unique_id"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.doc_id}: {self.title}"


class KnowledgeChunk(EmbeddedChunk):
    """A markdown section of a document (windowed when long), embedded."""

    document = models.ForeignKey(KnowledgeDocument, on_delete=models.CASCADE, related_name="chunks")
    version = models.ForeignKey(
        DatasetVersion, on_delete=models.CASCADE, related_name="knowledge_chunks"
    )

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "ordinal"], name="%(app_label)s_%(class)s_unique_ordinal"
            ),
        ]
        indexes = [
            # knowledge_search and knowledge_best_similarity: cosine nearest neighbours.
            hnsw_cosine_index("knowledge_chunk_embedding_hnsw", half_precision=True),
            # knowledge_search: the full-text half of hybrid search, within the
            # versions searched.
            versioned_search_index("knowledge_chunk_fts_ver_gin"),
        ]

    def __str__(self) -> str:
        return f"{self.document.doc_id} #{self.ordinal}"
