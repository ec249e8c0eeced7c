"""Read-only queries for the copilot."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.postgres.aggregates import ArrayAgg
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone

from copilot.filtersets import GoldenExampleFilter
from copilot.models import (
    AgentRun,
    Conversation,
    GoldenExample,
    Message,
    ReportScreenshot,
    ToolCall,
)
from incidentdesk.db import hnsw_ef_search_use, rows_select
from incidentdesk.embeddings import embed_query_literal
from incidentdesk.errors import NotFoundError
from incidentdesk.filtering import filter_queryset
from incidents.models import DatasetVersion
from incidents.selectors import incident_ids_existing
from knowledge.selectors import document_ids_existing

GOLDEN_MIN_SIMILARITY = 0.6


@dataclass(frozen=True)
class GoldenMatch:
    question: str
    answer: str
    similarity: float


def golden_example_list_nearest(
    *, question: str, limit: int = 2, min_similarity: float = GOLDEN_MIN_SIMILARITY
) -> list[GoldenMatch]:
    """Active golden examples closest to `question` (cosine ≥ min_similarity).

    Raw SQL with the cached vector literal the searches use: through the ORM,
    writing the vector out again cost about 0.3 ms per answer.
    """
    table = GoldenExample._meta.db_table
    hnsw_ef_search_use(settings.HNSW_EF_SEARCH)  # its HNSW index, as the connection's default
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT "question", "answer", "embedding" <=> %s::vector AS distance FROM "{table}"'  # noqa: S608 - the table name is ours
            ' WHERE "is_active" AND "embedding" IS NOT NULL ORDER BY distance LIMIT %s',
            [embed_query_literal(question), limit],
        )
        nearest = cursor.fetchall()
    # Nearest first, so cutting at the threshold after the LIMIT is the same.
    return [GoldenMatch(q, a, 1 - d) for q, a, d in nearest if d <= 1 - min_similarity]


def conversation_scope_for_user(
    *, user: AbstractBaseUser | AnonymousUser
) -> QuerySet[Conversation]:
    """Every conversation `user` may open: their own, not deleted (even empty ones)."""
    if not user.is_authenticated:
        return Conversation.objects.none()
    return Conversation.objects.filter(owner_id=user.pk, deleted_at__isnull=True)


SEARCHED_ROLES = (Message.Role.USER, Message.Role.ASSISTANT)
MAX_SEARCH_WORDS = 8


def conversation_search_query(text: str) -> SearchQuery | None:
    """Every word as an English prefix (`gatew` finds "gateway"), all required.

    Only word characters reach the tsquery, so nothing typed can break its syntax.
    """
    words = re.findall(r"\w+", text.lower())[:MAX_SEARCH_WORDS]
    if not words:
        return None
    return SearchQuery(
        " & ".join(f"{word}:*" for word in words), config="english", search_type="raw"
    )


def conversation_list_for_user(
    *, user: AbstractBaseUser | AnonymousUser, query: str = ""
) -> QuerySet[Conversation]:
    """The user's conversations with at least one message, most recently active first
    (the sidebar and the API); `query` keeps those whose title or messages match it.

    Empty conversations stay openable (`conversation_get_for_user`) but are not listed:
    a "+ New chat" nobody asked in is not history.
    """
    said = Message.objects.filter(conversation=OuterRef("pk"), role__in=SEARCHED_ROLES)
    conversations = conversation_scope_for_user(user=user).filter(Exists(said))
    search = conversation_search_query(query)
    if search is not None:
        # Same expression and condition as the copilot_msg_content_fts index.
        matching = said.annotate(text=SearchVector("content", config="english")).filter(text=search)
        conversations = conversations.annotate(
            title_text=SearchVector("title", config="english")
        ).filter(Q(title_text=search) | Q(Exists(matching)))
    return conversations.order_by("-updated_at", "-pk")


def conversation_get_for_user(
    *, conversation_id: int | str, user: AbstractBaseUser | AnonymousUser
) -> Conversation:
    """The conversation if `user` owns it; NotFoundError otherwise, so ids leak nothing.

    `conversation_scope_for_user(...).get(pk=...)` as one fixed statement: the
    ORM compiled it anew for every question and every socket's connect
    (0.8-1.2 ms of CPU here, against 0.35 ms; 0.13 ms read by `rows_select`).
    """
    try:
        wanted = int(conversation_id)
    except (ValueError, TypeError):
        wanted = None
    # An id past the key's range is no conversation (the ORM's answer), not an error.
    low, high = connection.ops.integer_field_range(Conversation._meta.pk.get_internal_type())
    if wanted is not None and low <= wanted <= high and user.is_authenticated:
        found = rows_select(Conversation, _CONVERSATION_OF_USER, [wanted, user.pk])
        if found:
            return found[0]
    raise NotFoundError(f"Conversation {conversation_id} not found.")


# What conversation_scope_for_user(...).get(pk=...) runs: owned and not deleted.
_CONVERSATION_OF_USER = (
    'SELECT * FROM "copilot_conversation"'
    ' WHERE "id" = %s AND "owner_id" = %s AND "deleted_at" IS NULL'
)


def conversation_get_deleted_for_user(
    *, conversation_id: int | str, user: AbstractBaseUser | AnonymousUser
) -> Conversation:
    """A conversation `user` deleted and may still restore; NotFoundError otherwise."""
    if not user.is_authenticated:
        raise NotFoundError(f"Conversation {conversation_id} not found.")
    try:
        return Conversation.objects.get(
            pk=int(conversation_id), owner_id=user.pk, deleted_at__isnull=False
        )
    except (Conversation.DoesNotExist, ValueError, TypeError):
        raise NotFoundError(f"Conversation {conversation_id} not found.") from None


def conversation_list_empty(*, created_before: dt.datetime) -> QuerySet[Conversation]:
    """Conversations without a single message created before `created_before`."""
    said = Message.objects.filter(conversation=OuterRef("pk"))
    return Conversation.objects.filter(created_at__lt=created_before).exclude(Exists(said))


def conversation_list_to_purge(*, deleted_before: dt.datetime) -> QuerySet[Conversation]:
    """Conversations deleted before `deleted_before` (copilot_conv_deleted index)."""
    return Conversation.objects.filter(deleted_at__lt=deleted_before)


def report_screenshot_files(*, conversation_ids: list[int] | None = None) -> set[str]:
    """The stored file names of report screenshots: all, or those of these conversations."""
    screenshots = ReportScreenshot.objects.all()
    if conversation_ids is not None:
        screenshots = screenshots.filter(message__conversation_id__in=conversation_ids)
    return set(screenshots.values_list("image", flat=True))


def conversation_messages(*, conversation: Conversation) -> QuerySet[Message]:
    """Every message in order, as stored (user, assistant, tool)."""
    return conversation.messages.order_by("created_at", "pk")


def message_get_for_user(
    *, message_id: int | str, user: AbstractBaseUser | AnonymousUser
) -> Message:
    """A message of one of the user's conversations; NotFoundError otherwise."""
    try:
        return Message.objects.select_related("conversation").get(
            pk=int(message_id), conversation__owner_id=user.pk, conversation__deleted_at=None
        )
    except (Message.DoesNotExist, ValueError, TypeError):
        raise NotFoundError(f"Message {message_id} not found.") from None


def answer_get_for_user(*, message_id: int, user: AbstractBaseUser | AnonymousUser) -> Message:
    """An answer (an assistant message) of one of the user's conversations; NotFoundError
    otherwise: to the API, a question's id names no answer (a 404, not a 400)."""
    message = message_get_for_user(message_id=message_id, user=user)
    if message.role != Message.Role.ASSISTANT:
        raise NotFoundError(f"Message {message_id} is not an answer; feedback applies to answers.")
    return message


def message_list_disliked() -> QuerySet[Message]:
    """Thumbs-down answers, newest first: the curators' review queue."""
    return (
        Message.objects.filter(role=Message.Role.ASSISTANT, feedback=Message.Feedback.DOWN)
        .select_related("conversation__owner", "run")
        .order_by("-feedback_at", "-pk")
    )


HISTORY_FIELDS = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "tool_name",
    "citations",
    "created_at",
)
CHARS_PER_TOKEN = 4  # a rough estimate that holds for English prose and JSON


def _estimated_tokens(message: Message) -> int:
    return (len(message.content) + len(str(message.tool_calls or ""))) // CHARS_PER_TOKEN + 4


def conversation_history(*, conversation: Conversation, token_budget: int) -> list[Message]:
    """The most recent whole turns that fit the budget, oldest first.

    Cut only at user messages, so an assistant's tool calls never lose
    their tool results; the latest turn is always kept.
    """
    return conversation_memory(conversation=conversation, token_budget=token_budget)[0]


def conversation_memory(
    *, conversation: Conversation, token_budget: int
) -> tuple[list[Message], set[str]]:
    """`conversation_history`, and every id a tool returned in the conversation
    (what an answer may cite), from one query."""
    # Only what the model reads: tool results' `data` (for the UI) is the
    # bulk of a conversation's bytes, and decoding it was a sixth of an answer.
    # `conversation_messages(...).only(*HISTORY_FIELDS)` as one fixed statement:
    # the ORM's took 2.2 ms of CPU for ten messages at every question, against 0.4 ms.
    messages = rows_select(Message, _HISTORY, [conversation.pk])
    returned = {cited for m in messages if m.role == Message.Role.TOOL for cited in m.citations}
    return _whole_turns(messages, token_budget), returned


# What conversation_messages(...).only(*HISTORY_FIELDS) runs (the primary key is always read).
_HISTORY = (
    'SELECT "id", "role", "content", "tool_calls", "tool_call_id", "tool_name", "citations",'
    ' "created_at" FROM "copilot_message" WHERE "conversation_id" = %s ORDER BY "created_at", "id"'
)


def citable_ids_existing(
    *,
    ids: Collection[str],
    incident_version: DatasetVersion | None = None,
    knowledge_version: DatasetVersion | None = None,
) -> set[str]:
    """Which of these incident and document ids name a record the copilot may show
    (active versions, or the pinned ones): the ids an answer may cite although no
    tool returned them, such as an incident a runbook quotes."""
    documents = {i for i in ids if i.startswith("KB")}
    return incident_ids_existing(
        incident_ids=set(ids) - documents, version=incident_version
    ) | document_ids_existing(doc_ids=documents, version=knowledge_version)


def _whole_turns(messages: list[Message], token_budget: int) -> list[Message]:
    kept: list[Message] = []
    turn: list[Message] = []
    used = 0
    for message in reversed(messages):
        turn.insert(0, message)
        if message.role != Message.Role.USER:
            continue
        cost = sum(_estimated_tokens(m) for m in turn)
        if kept and used + cost > token_budget:
            break
        kept[:0], used, turn = turn, used + cost, []
    return kept


def agent_run_is_active(*, conversation: Conversation, stale_after: dt.timedelta) -> bool:
    """A run of this conversation is still writing (and not left over from a crash).

    The ORM's exists() as one fixed statement: compiled anew at every question,
    it cost 0.7-0.9 ms of CPU here, against 0.1 ms.
    """
    since = timezone.now() - stale_after
    with connection.cursor() as cursor:
        cursor.execute(_RUN_ACTIVE, [conversation.pk, AgentRun.Status.RUNNING.value, since])
        return cursor.fetchone() is not None


_RUN_ACTIVE = (
    'SELECT 1 AS "a" FROM "copilot_agentrun" WHERE "conversation_id" = %s'
    ' AND "status" = %s AND "started_at" >= %s LIMIT 1'
)


def agent_run_list_running_owned() -> QuerySet[AgentRun]:
    """Runs still `running` that name their process (the orphan check's candidates)."""
    running = AgentRun.objects.filter(status=AgentRun.Status.RUNNING).exclude(owner="")
    return running.only("pk", "owner", "conversation_id")


def agent_run_cancel_requested(*, run_id: int) -> bool:
    return AgentRun.objects.filter(pk=run_id, cancel_requested=True).exists()


# --- the chat page ---------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """A question and what answered it: the run, its tool messages and the answer."""

    question: Message
    run: AgentRun | None = None
    answer: Message | None = None
    tools: list[Message] = field(default_factory=list)

    @property
    def steps(self) -> list[ToolCall]:
        return list(self.run.tool_calls.all()) if self.run else []

    @property
    def is_streaming(self) -> bool:
        return self.run is not None and self.run.status == AgentRun.Status.RUNNING

    @property
    def is_interrupted(self) -> bool:
        """Its run failed before a word of the answer was written (its daphne killed
        while the model thought): the page says so, not the question alone."""
        failed = self.run is not None and self.run.status == AgentRun.Status.FAILED
        return failed and self.answer is None


def conversation_turns(*, conversation: Conversation) -> list[Turn]:
    """The conversation as the chat page shows it, in three queries.

    An assistant message that only called tools is not an answer; the turn's
    answer is its last assistant message with text (or still streaming).
    """
    runs = {
        run.question_id: run
        for run in conversation.runs.prefetch_related(
            Prefetch("tool_calls", ToolCall.objects.order_by("round", "pk"))
        )
    }
    turns: list[Turn] = []
    for message in conversation_messages(conversation=conversation):
        if message.role == Message.Role.USER:
            turns.append(Turn(message, runs.get(message.pk)))
        elif turns and message.role == Message.Role.TOOL:
            turns[-1].tools.append(message)
        elif turns and (message.content or not message.is_complete or not message.tool_calls):
            turns[-1] = replace(turns[-1], answer=message)
    return turns


def message_turn_for_user(*, message_id: int | str, user: AbstractBaseUser | AnonymousUser) -> Turn:
    """The turn an answer belongs to (the fragment the page swaps in when it is done)."""
    message = message_get_for_user(message_id=message_id, user=user)
    for turn in conversation_turns(conversation=message.conversation):
        if turn.answer is not None and turn.answer.pk == message.pk:
            return turn
    raise NotFoundError(f"Message {message_id} not found.")


# --- the API and the admin's review queue ---------------------------------------------


def golden_example_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[GoldenExample]:
    examples = GoldenExample.objects.select_related("created_by").order_by("-updated_at", "-pk")
    return filter_queryset(GoldenExampleFilter, filters, examples)


def golden_example_get(*, example_id: int) -> GoldenExample:
    example = GoldenExample.objects.select_related("created_by").filter(pk=example_id).first()
    if example is None:
        raise NotFoundError(f"Golden example {example_id} not found.")
    return example


def message_annotate_for_review[M: Message](messages: QuerySet[M]) -> QuerySet[M]:
    """Adds what a curator reads on one line of the review queue.

    `question`: the user message the answer replied to; `tools_used`: the
    names of the tools its run called.
    """
    question = (
        Message.objects.filter(
            conversation=OuterRef("conversation"),
            role=Message.Role.USER,
            created_at__lte=OuterRef("created_at"),
        )
        .order_by("-created_at", "-pk")
        .values("content")[:1]
    )
    tools = (
        ToolCall.objects.filter(run=OuterRef("run"))
        .order_by()
        .values("run")
        .annotate(names=ArrayAgg("name", distinct=True, ordering="name"))
        .values("names")
    )
    annotated: QuerySet[M] = messages.annotate(  # type: ignore[assignment]
        question=Subquery(question), tools_used=Subquery(tools)
    )
    return annotated


def message_list_for_review() -> QuerySet[Message]:
    """The thumbs-down queue, newest first, with each answer's question and tools."""
    return message_annotate_for_review(message_list_disliked())


def message_get_for_review(*, message_id: int | str) -> Message:
    """A thumbs-down answer of anyone (curators promote them); NotFoundError otherwise."""
    try:
        return message_list_for_review().get(pk=int(message_id))
    except (Message.DoesNotExist, ValueError, TypeError):
        raise NotFoundError(f"Answer {message_id} is not in the review queue.") from None
