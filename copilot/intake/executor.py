"""The executor: one intake turn, from the stored question to the stored answer.

Steps run in the plan's order, each inside its own savepoint: a failed step
is recorded (name, outcome, time, error), its writes are rolled back, and
the rest still run, so the user always gets what could be worked out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from copilot import services as copilot_services
from copilot.events import (
    DoneEvent,
    Event,
    StatusEvent,
    TitleEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from copilot.intake import media, planner, rendering
from copilot.intake import services as intake_services
from copilot.intake.planner import Step
from copilot.intake.selectors import intake_state
from copilot.intake.state import TurnKind
from copilot.intake.steps import STEPS, IntakeContext, StepRecord, log_service
from copilot.models import AgentRun, Conversation, Message, ToolCall
from copilot.runs import AnswerRun
from copilot.selectors import agent_run_is_active
from copilot.steplog import step_log
from copilot.tools import ANALYZING, TITLING, WRAPPING_UP, status_before, statuses_after
from incidentdesk.errors import ConflictError, IncidentDeskError, NotFoundError, ValidationError

logger = logging.getLogger(__name__)

TOOL_NAME = intake_services.INTAKE_TOOL_NAME
TITLE_WORDS = 4
STATUS = {
    Step.INGESTION: ANALYZING,
    Step.VISION_ANALYSIS: "Reading the screenshot...",
    Step.INCIDENT_CLASSIFICATION: "Classifying the incident...",
    Step.MEMORY_RETRIEVAL: status_before("search_similar_incidents", {}),
    Step.LOG_SEARCH: "Searching the service's logs...",
    Step.PLAYBOOK: "Drafting next actions from past incidents and runbooks...",
    Step.DUPLICATE_CHECK: "Checking open tickets for duplicates...",
    Step.TICKET_CREATE: "Preparing the ticket...",
    Step.MEMORY_WRITE: "Saving the incident so later searches find it...",
    Step.COMMENT_DRAFT: "Drafting the comment...",
    Step.TICKET_ADD_COMMENT: "Adding the comment to the ticket...",
    Step.SUMMARY: "Reading the decision ledger...",
}


class IntakeRun(AnswerRun):
    """One intake answer: its plan, steps and card (the lifecycle it shares
    with the agent is `AnswerRun`'s)."""

    label = "intake"
    failure_message = "Something went wrong with the incident report; your message was saved."

    def __init__(
        self,
        conversation: Conversation,
        user: AbstractBaseUser,
        screenshot: media.Screenshot | None,
        voice: media.VoiceNote | None,
        *,
        reported_dataset: str = "",
    ) -> None:
        super().__init__(conversation)
        self.reported_dataset = reported_dataset
        self.user = user
        self.screenshot = screenshot
        self.voice = voice

    def model_name(self) -> str:
        return f"intake+{settings.COPILOT_MODEL}" if settings.OPENAI_API_KEY else "intake-rules"

    def question_fields(self) -> dict[str, Any]:
        shot = self.screenshot
        attachments: dict[str, Any] = {
            "screenshot": {"format": shot.format, "width": shot.width, "height": shot.height}
            if shot
            else None,
            "voice_note": self.voice is not None,
        }
        return {"data": {"intake": attachments}}

    def answer(self, text: str, question: Message) -> Iterator[Event]:
        """0. keep the screenshot; 1. plan; 2. run the steps; 3. store the answer."""
        if self.screenshot is not None:  # with the report's message: its ticket shows it
            intake_services.report_screenshot_store(message=question, screenshot=self.screenshot)
        state = intake_state(self.conversation)
        plan = planner.plan_turn(text=text, has_image=self.screenshot is not None, state=state)
        if _is_new_report(plan):  # a new incident starts with neither proposal nor ticket
            state = replace(state, proposal=None, ticket=None)
        ctx = IntakeContext(
            conversation=self.conversation,
            user=self.user,
            typed_text=text,
            user_message=question,
            plan=plan,
            state=state,
            screenshot=self.screenshot,
            reported_dataset=self.reported_dataset,
            voice=self.voice,
        )
        call_id = f"intake-{self.run.pk}"
        yield ToolCallEvent(call_id, TOOL_NAME, {"kind": plan.kind, "steps": list(plan.steps)})
        yield from self._run_steps(ctx)
        _save_state(ctx)
        yield from self._title(ctx)
        yield StatusEvent(WRAPPING_UP)  # last, as the agent says it
        yield from self._done(ctx, call_id)

    def _run_steps(self, ctx: IntakeContext) -> Iterator[Event]:
        plan = ctx.plan
        step_log(run=self.run.pk, step="PLAN", outcome=plan.kind, ms=0, steps=list(plan.steps))
        for number, step in enumerate(plan.steps, start=1):
            yield StatusEvent(_status(step, ctx))
            record = run_step(step, ctx)
            if searched := ctx.searched.get(step):  # what it found, in its tool's words
                yield from (StatusEvent(text) for text in statuses_after(*searched))
            ctx.steps.append(record)
            self._trace(number, record)
            step_log(
                run=self.run.pk,
                step=record.name,
                outcome="failed" if record.error else "ok",
                ms=record.ms,
                **({"error": record.error} if record.error else {}),
            )

    def _trace(self, number: int, record: StepRecord) -> None:
        traced = self.conversation.tracing_enabled
        ToolCall.objects.create(
            run=self.run,
            round=1,
            call_id=f"intake-{self.run.pk}-{number}",
            name=record.name,
            result_text=record.outcome if traced else "",
            error=record.error,
            latency_ms=record.ms,
        )

    def _title(self, ctx: IntakeContext) -> Iterator[Event]:
        """A conversation without a title is named after the incident."""
        title = str(ctx.incident.get("title", ""))
        if self.conversation.title or not title:
            return
        yield StatusEvent(TITLING)
        short = " ".join(title.rstrip("…").split()[:TITLE_WORDS])
        copilot_services.conversation_title_set(conversation=self.conversation, title=short)
        yield TitleEvent(self.conversation.pk, self.conversation.title)

    def _done(self, ctx: IntakeContext, call_id: str) -> Iterator[Event]:
        payload = rendering.intake_payload(ctx)
        content = rendering.reply_text(ctx)
        citations = rendering.citations(ctx)
        message = copilot_services.conversation_message_append(
            conversation=self.conversation,
            role=Message.Role.ASSISTANT,
            content=content,
            run=self.run,
            data={TOOL_NAME: payload},
            citations=citations,
        )
        self.finish(AgentRun.Status.DONE, citations_kept=citations)
        failed = sum(1 for record in ctx.steps if record.error)
        count = len(payload["similar_incidents"])
        yield ToolResultEvent(call_id, TOOL_NAME, count, self.elapsed_ms(), payload, _error(failed))
        yield DoneEvent(
            conversation_id=self.conversation.pk,
            message_id=message.pk,
            run_id=self.run.pk,
            content=content,
            citations=citations,
            steps=payload["steps"],
        )


def run_step(step: Step, ctx: IntakeContext) -> StepRecord:
    """One step in a savepoint; a failure becomes the record's error, never an exception."""
    started = time.perf_counter()
    try:
        with transaction.atomic():
            outcome, error = STEPS[step](ctx), ctx.step_error
    except IncidentDeskError as exc:
        outcome, error = "failed", exc.message
    except Exception as exc:
        logger.exception("intake step %s failed", step)
        outcome, error = "failed", f"internal error ({type(exc).__name__})"
    ctx.step_error = ""
    ms = round((time.perf_counter() - started) * 1000)
    return StepRecord(step.value, outcome, ms, error)


def _status(step: Step, ctx: IntakeContext) -> str:
    """A step's status line; reading logs says it as the search_logs tool does."""
    if step == Step.LOG_SEARCH and (service := log_service(ctx)):
        return status_before("search_logs", {"service": service})
    return STATUS[step]


def _is_new_report(plan: planner.Plan) -> bool:
    return plan.kind == TurnKind.NEW_INCIDENT and not plan.decision.confirms


def _save_state(ctx: IntakeContext) -> None:
    if _is_new_report(ctx.plan) and ctx.incident:
        ctx.state = replace(ctx.state, incident=rendering.state_incident(ctx))
    intake_services.conversation_intake_state_set(conversation=ctx.conversation, state=ctx.state)


def _error(failed: int) -> str:
    return f"{failed} step(s) failed" if failed else ""


# --- the entry point -------------------------------------------------------------------


def intake_reply(
    *,
    conversation: Conversation,
    user: AbstractBaseUser,
    text: str,
    image: bytes | None = None,
    audio: bytes | None = None,
    audio_name: str = "",
    reported_dataset: str = "",
) -> Iterator[Event]:
    """Run the intake plan for this turn, yielding a status per step, then the
    `incident_intake` tool result and the stored answer (DoneEvent).

    Uploads are validated before anything is stored, so a bad file is a
    clear error (ValidationError) and leaves no trace. `reported_dataset`: see
    `ToolContext.reported_dataset` (the evaluation's sandbox).
    """
    if conversation.owner_id != user.pk:
        raise NotFoundError(f"Conversation {conversation.pk} not found.")
    if agent_run_is_active(conversation=conversation, stale_after=copilot_services.RUN_STALE_AFTER):
        raise ConflictError("An answer is still being written in this conversation.")
    screenshot = media.screenshot_validate(data=image) if image is not None else None
    voice = media.voice_note_validate(data=audio, name=audio_name) if audio is not None else None
    _check_text(text, has_attachment=screenshot is not None or voice is not None)
    run = IntakeRun(conversation, user, screenshot, voice, reported_dataset=reported_dataset)
    return run.events(text)


def _check_text(text: str, *, has_attachment: bool) -> None:
    if len(text) > intake_services.MAX_TEXT_CHARS:
        raise ValidationError(
            f"The report is longer than {intake_services.MAX_TEXT_CHARS} characters.",
            {"text": "too long"},
        )
    if not text.strip() and not has_attachment:
        raise ValidationError(
            "Describe the incident, or attach a screenshot.", {"text": "required"}
        )
