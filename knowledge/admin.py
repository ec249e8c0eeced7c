"""Admin for knowledge documents: an edit is saved, then re-embedded by Celery."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from incidents.admin import DatasetOfKindFilter
from incidents.models import Dataset
from knowledge.models import KnowledgeDocument
from knowledge.selectors import knowledge_document_annotate_stale, knowledge_stale_q
from knowledge.services import knowledge_document_update


class StaleFilter(admin.SimpleListFilter):
    title = "validation"
    parameter_name = "stale"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        days = settings.KNOWLEDGE_STALE_DAYS
        return [("yes", f"stale (not validated for {days} days)"), ("no", "validated recently")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(knowledge_stale_q())
        if self.value() == "no":
            return queryset.exclude(knowledge_stale_q())
        return queryset


class KnowledgeDatasetFilter(DatasetOfKindFilter):
    kind = Dataset.Kind.KNOWLEDGE


@admin.register(KnowledgeDocument)
class KnowledgeDocumentAdmin(admin.ModelAdmin[KnowledgeDocument]):
    list_display = [
        "doc_id", "title", "type", "version", "last_validated_at", "stale", "updated_at",
    ]  # fmt: skip
    list_filter = [StaleFilter, "type", "version__status", KnowledgeDatasetFilter]
    list_select_related = ["version__dataset"]
    search_fields = ["doc_id", "title", "body"]
    raw_id_fields = ["version"]
    readonly_fields = ["content_hash", "created_at", "updated_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[KnowledgeDocument]:
        return knowledge_document_annotate_stale(super().get_queryset(request))

    @admin.display(boolean=True, description="Stale", ordering="is_stale")
    def stale(self, obj: KnowledgeDocument) -> bool:
        """Never validated, or longer ago than KNOWLEDGE_STALE_DAYS."""
        return bool(getattr(obj, "is_stale", False))

    def save_model(
        self, request: HttpRequest, obj: KnowledgeDocument, form: Any, change: bool
    ) -> None:
        knowledge_document_update(document=obj)
