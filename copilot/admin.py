"""Admin for golden examples: saved, then embedded by Celery."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from copilot.models import AgentRun, GoldenExample, ToolCall
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


class ReadOnlyAdminMixin:
    """Audit records: visible to staff, never edited or added by hand."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ToolCallInline(ReadOnlyAdminMixin, admin.TabularInline[ToolCall, AgentRun]):
    model = ToolCall
    extra = 0
    can_delete = False
    readonly_fields = ["round", "name", "arguments", "result_count", "latency_ms", "error"]
    fields = ["round", "name", "arguments", "result_count", "latency_ms", "error"]


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnlyAdminMixin, admin.ModelAdmin[AgentRun]):
    """Traces of the copilot's answers: model, rounds, timings, tokens, citations."""

    list_display = [
        "pk", "conversation", "model", "status", "rounds", "latency_ms", "dropped_count",
        "started_at",
    ]  # fmt: skip
    list_filter = ["status", "model"]
    list_select_related = ["conversation"]
    search_fields = ["conversation__title", "error"]
    readonly_fields = [
        "conversation", "question", "model", "status", "rounds", "prompt_tokens",
        "completion_tokens", "first_event_ms", "latency_ms", "golden_examples",
        "citations_kept", "citations_dropped", "error", "cancel_requested", "started_at",
        "finished_at",
    ]  # fmt: skip
    inlines = [ToolCallInline]

    @admin.display(description="Dropped citations")
    def dropped_count(self, obj: AgentRun) -> int:
        return len(obj.citations_dropped)
