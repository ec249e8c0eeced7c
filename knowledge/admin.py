"""Admin for knowledge documents: an edit is saved, then re-embedded by Celery."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from knowledge.models import KnowledgeDocument
from knowledge.services import knowledge_document_update


@admin.register(KnowledgeDocument)
class KnowledgeDocumentAdmin(admin.ModelAdmin[KnowledgeDocument]):
    list_display = ["doc_id", "title", "type", "version", "last_validated_at", "updated_at"]
    list_filter = ["type", "version__status", "version__dataset"]
    list_select_related = ["version__dataset"]
    search_fields = ["doc_id", "title", "body"]
    raw_id_fields = ["version"]
    readonly_fields = ["content_hash", "created_at", "updated_at"]

    def save_model(
        self, request: HttpRequest, obj: KnowledgeDocument, form: Any, change: bool
    ) -> None:
        knowledge_document_update(document=obj)
