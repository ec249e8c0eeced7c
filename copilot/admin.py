"""Admin for golden examples: saved, then embedded by Celery."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from copilot.models import GoldenExample
from copilot.services import golden_example_save


@admin.register(GoldenExample)
class GoldenExampleAdmin(admin.ModelAdmin[GoldenExample]):
    list_display = ["question", "source", "is_active", "is_embedded", "updated_at"]
    list_filter = ["is_active", "source"]
    search_fields = ["question", "answer"]
    raw_id_fields = ["created_by"]
    readonly_fields = ["embedded_question", "created_at", "updated_at"]
    exclude = ["embedding"]

    @admin.display(boolean=True, description="Embedded")
    def is_embedded(self, obj: GoldenExample) -> bool:
        return not obj.needs_embedding

    def save_model(self, request: HttpRequest, obj: GoldenExample, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        golden_example_save(example=obj)
