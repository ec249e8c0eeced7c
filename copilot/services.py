"""Writes for the copilot: conversations, messages, feedback, runs, golden examples."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import User
from django.core.files.storage import Storage
from django.db import DatabaseError, transaction
from django.utils import timezone

from copilot import selectors
from copilot.models import (
    AgentRun,
    Conversation,
    GoldenExample,
    Message,
    ReportScreenshot,
    ToolCall,
)
from copilot.tools import ToolResult
from incidentdesk import owners
from incidentdesk.db import row_update, rows_insert
from incidentdesk.embeddings import embed_texts
from incidentdesk.errors import ConflictError, NotFoundError, ValidationError
from incidents import importers
from incidents.importers import FieldError, RowError, SourceRow, as_text


@dataclass
class GoldenImportResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[RowError] = field(default_factory=list)


def golden_example_embed(*, example: GoldenExample) -> GoldenExample:
    """Embed the question (what new questions are compared with)."""
    example.embedding = embed_texts([example.question])[0]
    example.embedded_question = example.question
    GoldenExample.objects.filter(pk=example.pk).update(
        embedding=example.embedding, embedded_question=example.question
    )
    return example


def golden_example_save(*, example: GoldenExample) -> GoldenExample:
    """Validate and save; embedding follows in the background when needed."""
    from copilot.tasks import golden_example_embed_task  # a real cycle: tasks call these services

    duplicate = GoldenExample.objects.filter(question=example.question).exclude(pk=example.pk)
    if (other := duplicate.first()) is not None:  # the state's conflict, not bad input: 409
        raise ConflictError(f"Golden example {other.pk} already has this question.")
    example.full_clean()
    example.save()
    if example.needs_embedding:
        transaction.on_commit(lambda: golden_example_embed_task.delay(example.pk))
    return example


def _parse_golden(row: SourceRow) -> tuple[str, str]:
    data = importers.check_object(row)
    question = as_text(data.get("question"))
    answer = as_text(data.get("answer"))
    if not question:
        raise FieldError("question is required")
    if not answer:
        raise FieldError("answer is required")
    return question, answer


def golden_examples_import_file(
    *, path: Path, file_format: str | None = None, user: User | None = None
) -> GoldenImportResult:
    """Upsert examples by question and embed them right away (they are few)."""
    result = GoldenImportResult()
    for row in importers.read_rows(path, file_format):
        try:
            question, answer = _parse_golden(row)
        except FieldError as exc:
            result.errors.append(RowError(row.line, "", str(exc)))
            continue
        _golden_upsert(question, answer, user, result)
    return result


def _golden_upsert(
    question: str, answer: str, user: User | None, result: GoldenImportResult
) -> None:
    example = GoldenExample.objects.filter(question=question).first()
    if example is not None and example.answer == answer and not example.needs_embedding:
        result.unchanged += 1
        return
    if example is None:
        example = GoldenExample(question=question, created_by=user if user and user.pk else None)
        result.created += 1
    else:
        result.updated += 1
    example.answer = answer
    example.full_clean()
    example.save()
    golden_example_embed(example=example)


# --- conversations ---------------------------------------------------------------

TITLE_MAX_CHARS = 200
# A run still marked running after this long was cut off (a crash, a restart):
# it no longer blocks new questions in its conversation.
RUN_STALE_AFTER = dt.timedelta(minutes=10)
COMMENT_MAX_CHARS = 4000


def _check_owner(conversation: Conversation, user: AbstractBaseUser) -> None:
    if conversation.owner_id != user.pk:
        raise NotFoundError(f"Conversation {conversation.pk} not found.")


def conversation_create(*, owner: AbstractBaseUser, title: str = "") -> Conversation:
    conversation = Conversation(owner_id=owner.pk, title=title.strip()[:TITLE_MAX_CHARS])
    conversation.full_clean()
    conversation.save()
    return conversation


def conversation_rename(
    *, conversation: Conversation, user: AbstractBaseUser, title: str
) -> Conversation:
    _check_owner(conversation, user)
    cleaned = " ".join(title.split())
    if not cleaned:
        raise ValidationError("The title cannot be empty.", {"title": "required"})
    if len(cleaned) > TITLE_MAX_CHARS:
        raise ValidationError(
            f"The title is longer than {TITLE_MAX_CHARS} characters.", {"title": "too long"}
        )
    conversation.title = cleaned
    conversation.full_clean()
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


def conversation_delete(*, conversation: Conversation, user: AbstractBaseUser) -> None:
    """Hide the conversation from its owner everywhere; `conversation_restore` undoes it."""
    _check_owner(conversation, user)
    conversation.deleted_at = timezone.now()
    conversation.save(update_fields=["deleted_at"])  # updated_at kept: undo puts it back in place


def conversation_restore(*, conversation: Conversation, user: AbstractBaseUser) -> Conversation:
    """Undo a delete that was not purged yet."""
    _check_owner(conversation, user)
    conversation.deleted_at = None
    conversation.save(update_fields=["deleted_at"])
    return conversation


EMPTY_CONVERSATION_GRACE = dt.timedelta(days=1)
# A screenshot file is written a moment before its row (report_screenshot_store):
# a younger file may be a report still being stored, so the sweep leaves it. Only
# milliseconds are at stake, but the purge runs daily, so a shorter wait would not
# remove anything sooner; and deleted conversations keep their files for
# CONVERSATION_PURGE_AFTER_DAYS anyway, so a day is no weaker a promise.
ORPHAN_SCREENSHOT_GRACE = dt.timedelta(days=1)
SCREENSHOTS_DIR = "screenshots"  # ReportScreenshot.image's upload_to, without the dates


@transaction.atomic
def conversation_purge_deleted(*, older_than: dt.timedelta, now: dt.datetime | None = None) -> int:
    """Remove conversations deleted more than `older_than` ago, with their messages and
    runs, and empty ones (a failed first question) a day old; return how many."""
    now = now or timezone.now()
    deleted = selectors.conversation_list_to_purge(deleted_before=now - older_than)
    empty = selectors.conversation_list_empty(created_before=now - EMPTY_CONVERSATION_GRACE)
    ids = {*deleted.values_list("pk", flat=True), *empty.values_list("pk", flat=True)}
    # Orphans first: a file whose row this purge deletes must wait for the commit.
    report_screenshot_orphans_delete(older_than=ORPHAN_SCREENSHOT_GRACE, now=now)
    conversation_remove(conversation_ids=list(ids))
    return len(ids)


@transaction.atomic
def conversation_remove(*, conversation_ids: list[int]) -> None:
    """Delete conversations for good: messages, runs and the reports' screenshot files.

    A FileField never deletes its file, and once the row is gone nobody can reach
    it: a screenshot of a production error would stay on disk for ever. The files
    go once the delete commits, so a rollback keeps rows and files together.
    """
    files = selectors.report_screenshot_files(conversation_ids=conversation_ids)
    Conversation.objects.filter(pk__in=conversation_ids).delete()
    transaction.on_commit(partial(_screenshot_files_delete, files))


def report_screenshot_orphans_delete(*, older_than: dt.timedelta, now: dt.datetime) -> int:
    """Delete screenshot files no row names any more, older than `older_than`; how many.

    The backstop for rows that went another way (a user deleted in the admin
    takes their conversations along, a crash between a delete and its commit
    hook). A younger file may be a report whose row is still being written.
    """
    storage = ReportScreenshot.image.field.storage
    known = selectors.report_screenshot_files()
    orphans = [
        name
        for name in _stored_files(storage, SCREENSHOTS_DIR)
        if name not in known and storage.get_modified_time(name) < now - older_than
    ]
    _screenshot_files_delete(orphans)
    return len(orphans)


def _stored_files(storage: Storage, folder: str) -> Iterator[str]:
    if not storage.exists(folder):
        return
    folders, files = storage.listdir(folder)
    yield from (f"{folder}/{name}" for name in files)
    for name in folders:
        yield from _stored_files(storage, f"{folder}/{name}")


def _screenshot_files_delete(names: Iterable[str]) -> None:
    storage = ReportScreenshot.image.field.storage
    for name in names:
        storage.delete(name)  # a file already gone is no error


def message_feedback_set(
    *, message: Message, user: AbstractBaseUser, feedback: str, comment: str = ""
) -> Message:
    """Thumbs up or down (or "" to clear) on an assistant answer, with a comment."""
    _check_owner(message.conversation, user)
    if message.role != Message.Role.ASSISTANT:
        raise ValidationError("Feedback applies to answers only.", {"message": "not an answer"})
    if feedback not in {"", *Message.Feedback.values}:
        raise ValidationError(
            f"Feedback must be 'up', 'down' or empty, got {feedback!r}.", {"feedback": "invalid"}
        )
    if len(comment) > COMMENT_MAX_CHARS:
        raise ValidationError(
            f"The comment is longer than {COMMENT_MAX_CHARS} characters.", {"comment": "too long"}
        )
    message.feedback = feedback
    message.feedback_comment = comment.strip()
    message.feedback_at = timezone.now() if feedback else None
    message.save(update_fields=["feedback", "feedback_comment", "feedback_at"])
    return message


def agent_run_cancel(*, conversation: Conversation, user: AbstractBaseUser) -> int:
    """Ask the conversation's running answer to stop; the loop checks between steps."""
    _check_owner(conversation, user)
    return AgentRun.objects.filter(
        conversation=conversation, status=AgentRun.Status.RUNNING
    ).update(cancel_requested=True)


# --- what the agent loop writes --------------------------------------------------


def message_build(
    *, conversation: Conversation, role: str, content: str = "", **fields: Any
) -> Message:
    """A checked message, not stored yet (see `agent_rows_write`).

    The foreign keys are instances the caller holds, so validating them
    would only re-read rows (a query each, on every step of every answer).
    """
    message = Message(conversation=conversation, role=role, content=content, **fields)
    message.full_clean(exclude=["conversation", "run"])
    return message


def conversation_message_append(
    *, conversation: Conversation, role: str, content: str = "", **fields: Any
) -> Message:
    """Store one message now, before the next step runs."""
    message = message_build(conversation=conversation, role=role, content=content, **fields)
    rows_insert(message)
    return message


def conversation_touch(*, conversation: Conversation, title: str = "") -> None:
    """Mark activity, which orders the sidebar; store `title` too when given
    (the generated one, written with the answer rather than on its own)."""
    conversation.updated_at = timezone.now()
    if title:
        conversation.title = title[:TITLE_MAX_CHARS]
    row_update(conversation, "updated_at", *(["title"] if title else []))


def conversation_title_set(*, conversation: Conversation, title: str) -> Conversation:
    conversation.title = title[:TITLE_MAX_CHARS]
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


def agent_run_start(*, conversation: Conversation, question: Message, model: str) -> AgentRun:
    run = AgentRun(
        conversation=conversation, question=question, model=model, owner=owners.current()
    )
    run.full_clean(exclude=["conversation", "question"])
    rows_insert(run)
    return run


def agent_run_finish(*, run: AgentRun, status: str, error: str = "", **figures: Any) -> AgentRun:
    """Close the trace: status, error, and whatever figures the loop measured."""
    run.status = status
    run.error = error
    run.finished_at = timezone.now()
    for name, value in figures.items():
        setattr(run, name, value)
    if not row_update(run):  # every field, as save() wrote them; once per answer
        raise DatabaseError(f"Run {run.pk} is gone; it was not closed.")
    return run


INTERRUPTED = "interrupted: the server stopped before the answer finished"


def agent_run_fail_interrupted() -> list[int]:
    """Close the runs a crash left `running`; return their conversations' ids.

    Called at start-up (`manage.py serve`), before any daphne process runs,
    so no run still `running` has a process writing it. Without this the
    conversation answers "busy" until CHAT_RUN_LOCK_SECONDS pass and the page
    shows the partial answer as still streaming; a failed run shows it as
    interrupted.
    """
    running = AgentRun.objects.filter(status=AgentRun.Status.RUNNING)
    conversations = list(running.values_list("conversation_id", flat=True))
    running.update(status=AgentRun.Status.FAILED, error=INTERRUPTED, finished_at=timezone.now())
    return conversations


def agent_run_fail_orphaned() -> list[int]:
    """Fail the running answers whose process is gone; return their conversations' ids.

    Run while the server runs (`manage.py recover`, which the supervisor
    starts when a daphne process dies and periodically): the runs of live
    processes are left alone (incidentdesk.owners).
    """
    running = selectors.agent_run_list_running_owned()
    orphans = [run for run in running if owners.is_gone(run.owner)]
    AgentRun.objects.filter(pk__in=[run.pk for run in orphans]).update(
        status=AgentRun.Status.FAILED, error=INTERRUPTED, finished_at=timezone.now()
    )
    return sorted({run.conversation_id for run in orphans})


def tool_call_build(
    *, run: AgentRun, round: int, call: dict[str, Any], result: ToolResult, latency_ms: int
) -> ToolCall:
    """The trace row of one tool call, not stored yet; the payloads only
    when the conversation allows tracing."""
    traced = run.conversation.tracing_enabled
    return ToolCall(
        run=run,
        round=round,
        call_id=call["id"],
        name=call["name"],
        arguments=call["arguments"] if traced else {},
        result_text=result.text if traced else "",
        result_count=result.count,
        error=result.error,
        latency_ms=latency_ms,
    )


def agent_rows_write(*, messages: list[Message], tool_calls: Sequence[ToolCall] = ()) -> None:
    """Store what an answer built as it ran, in order: new messages and
    trace rows inserted, a streamed message (stored already) updated."""
    for message in messages:
        if message.pk is not None:
            message.save()
    rows_insert(*(message for message in messages if message.pk is None), *tool_calls)


# --- the REST API: chat without streaming, golden examples ------------------------------


def conversation_for_question(
    *, user: AbstractBaseUser, conversation_id: int | None = None
) -> Conversation:
    """The user's conversation to ask in, or a new one; NotFoundError for anyone else's."""
    if conversation_id is None:
        return conversation_create(owner=user)
    return selectors.conversation_get_for_user(conversation_id=conversation_id, user=user)


def golden_example_create(
    *, question: str, answer: str, user: User | None = None, **fields: Any
) -> GoldenExample:
    """A new verified question and answer (embedded in the background)."""
    example = GoldenExample(question=question, answer=answer, created_by=user, **fields)
    return golden_example_save(example=example)


def golden_example_update(*, example: GoldenExample, **fields: Any) -> GoldenExample:
    """Change an example; a changed question is re-embedded in the background."""
    for name, value in fields.items():
        setattr(example, name, value)
    return golden_example_save(example=example)


def golden_example_delete(*, example: GoldenExample) -> None:
    example.delete()
