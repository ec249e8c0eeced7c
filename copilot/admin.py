"""Admin for golden examples: saved, then embedded by Celery."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.text import Truncator

from copilot.models import (
    AgentRun,
    AnswerForReview,
    Conversation,
    Decision,
    GoldenExample,
    Message,
    Ticket,
    TicketComment,
    ToolCall,
)
from copilot.selectors import (
    message_annotate_for_review,
    message_get_for_review,
    message_list_disliked,
)
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

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """`?from_message=<id>` (the review queue's promote): the answer, ready for correction."""
        initial = dict(super().get_changeform_initial_data(request))
        if "from_message" in request.GET:
            answer = message_get_for_review(message_id=request.GET["from_message"])
            initial |= {
                "question": getattr(answer, "question", "") or "",
                "answer": answer.content,
                "source": GoldenExample.Source.FEEDBACK,
            }
        return initial

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


# --- curation: conversations for audit, the thumbs-down review queue ----------------------


MESSAGE_FIELDS = ("created_at", "role", "content", "tool_name", "citations", "feedback", "run")
REVIEW_FIELDS = (
    "question_text", "content", "feedback_comment", "tools", "citations", "owner",
    "feedback_at", "run",
)  # fmt: skip


class MessageInline(ReadOnlyAdminMixin, admin.TabularInline[Message, Conversation]):
    model = Message
    extra = 0
    can_delete = False
    fields = readonly_fields = MESSAGE_FIELDS


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin[Conversation]):
    """Every conversation, read-only, for audit (deleting is the owner's call)."""

    list_display = ["pk", "title", "owner", "message_count", "updated_at", "deleted_at"]
    list_select_related = ["owner"]
    list_filter = [("deleted_at", admin.EmptyFieldListFilter)]  # deleted, waiting for the purge
    search_fields = ["title", "owner__username"]
    readonly_fields = [
        "owner", "title", "tracing_enabled", "state", "created_at", "updated_at", "deleted_at",
    ]  # fmt: skip
    inlines = [MessageInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        return super().get_queryset(request).annotate(message_count=Count("messages"))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Messages", ordering="message_count")
    def message_count(self, obj: Conversation) -> int:
        return int(obj.message_count)  # type: ignore[attr-defined]


@admin.register(AnswerForReview)
class AnswerForReviewAdmin(ReadOnlyAdminMixin, admin.ModelAdmin[AnswerForReview]):
    """Thumbs-down answers, newest first: read, then promote a corrected one to golden."""

    list_display = [
        "question_text", "answer_text", "feedback_comment", "tools", "owner", "feedback_at",
        "promote_link",
    ]  # fmt: skip
    list_display_links = None
    ordering = ["-feedback_at", "-pk"]
    search_fields = ["content", "feedback_comment"]
    actions = ["promote"]
    fields = readonly_fields = REVIEW_FIELDS

    def get_queryset(self, request: HttpRequest) -> QuerySet[AnswerForReview]:
        disliked = super().get_queryset(request).filter(pk__in=message_list_disliked().values("pk"))
        return message_annotate_for_review(disliked).select_related("conversation__owner", "run")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Question")
    def question_text(self, obj: AnswerForReview) -> str:
        return Truncator(getattr(obj, "question", "") or "").chars(200)

    @admin.display(description="Answer")
    def answer_text(self, obj: AnswerForReview) -> str:
        return Truncator(obj.content).chars(300)

    @admin.display(description="Tools used")
    def tools(self, obj: AnswerForReview) -> str:
        return ", ".join(getattr(obj, "tools_used", None) or []) or "none"

    @admin.display(description="Asked by", ordering="conversation__owner__username")
    def owner(self, obj: AnswerForReview) -> str:
        return str(obj.conversation.owner)

    @admin.display(description="")
    def promote_link(self, obj: AnswerForReview) -> str:
        return format_html('<a class="button" href="{}">Promote…</a>', promote_url(obj.pk))

    @admin.action(description="Promote to golden example (opens the form for correction)")
    def promote(
        self, request: HttpRequest, queryset: QuerySet[AnswerForReview]
    ) -> HttpResponseRedirect | None:
        if queryset.count() != 1:
            self.message_user(request, "Promote one answer at a time.", messages.WARNING)
            return None
        return HttpResponseRedirect(promote_url(queryset.get().pk))


def promote_url(message_id: int) -> str:
    """The golden-example add form, pre-filled from a reviewed answer."""
    return (
        reverse("admin:copilot_goldenexample_add") + "?" + urlencode({"from_message": message_id})
    )


# --- intake: tickets and the decision ledger ---------------------------------------------


class TicketCommentInline(ReadOnlyAdminMixin, admin.TabularInline[TicketComment, Ticket]):
    model = TicketComment
    extra = 0
    can_delete = False
    fields = readonly_fields = ("created_at", "author", "body", "external_id", "source_message")


class TicketDecisionInline(ReadOnlyAdminMixin, admin.TabularInline[Decision, Ticket]):
    model = Decision
    extra = 0
    can_delete = False
    fields = readonly_fields = ("decided_at", "kind", "what", "who", "source_message")


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin[Ticket]):
    """Tickets filed from reports. Only the status is edited here (closing a built-in
    ticket); what was reported stays as it was filed."""

    list_display = ["key", "title", "severity", "status", "service", "tracker", "created_at"]
    list_filter = ["status", "severity", "tracker"]
    list_select_related = ["created_by"]
    search_fields = ["key", "title", "service", "incident_id"]
    raw_id_fields = ["conversation", "created_by"]
    readonly_fields = [
        "key", "title", "description", "severity", "service", "conversation", "incident_id",
        "external_url", "tracker", "created_by", "idempotency_key", "created_at", "updated_at",
    ]  # fmt: skip
    inlines = [TicketCommentInline, TicketDecisionInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tickets come from reports, with their idempotency key


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin[Decision]):
    """The decision ledger, for audit: what, who, when, and where it was said."""

    list_display = ["what", "kind", "who", "decided_at", "ticket", "conversation"]
    list_filter = ["kind"]
    list_select_related = ["ticket", "conversation"]
    search_fields = ["what", "who", "ticket__key"]
    readonly_fields = [
        "conversation", "ticket", "kind", "what", "who", "decided_by", "decided_at",
        "source_message", "ticket_comment", "created_at",
    ]  # fmt: skip
