"""Replies: a turn in a conversation, sent to the agent or to intake.

`conversation_reply` is the one entry point the websocket, the REST API,
the evaluation and the benches call; it checks the question and hands the
turn to the agent loop (questions, small talk) or to intake (a new report,
its follow-ups). `conversation_answer` and `intake_report` run a reply to
its end for the API. Writes stay in `copilot.services` and
`copilot.intake.services`; this module only dispatches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from copilot import agent, selectors, services
from copilot.chat_models import configured_model
from copilot.chat_models.base import ChatModel
from copilot.events import Collected, DoneEvent, Event, events_collect
from copilot.intake import services as intake_services
from copilot.intake.executor import intake_reply
from copilot.intake.state import INTAKE_KINDS, TurnKind
from copilot.models import Conversation
from copilot.tools import ToolContext
from incidentdesk.errors import (
    ConflictError,
    IncidentDeskError,
    NotFoundError,
    UnavailableError,
    ValidationError,
)

QUESTION_MAX_CHARS = 8000


def conversation_reply(
    *,
    conversation: Conversation,
    user: AbstractBaseUser,
    text: str,
    model: ChatModel | None = None,
    context: ToolContext | None = None,
    image: bytes | None = None,
) -> Iterator[Event]:
    """Answer `text` in `conversation`, yielding DESIGN's events as they happen.

    The user's message is stored before the model is called; the tool
    steps before the agent waits on a model over the network (offline: with
    the answer), and always when the run ends, stopped or failed, so
    nothing sent is lost.
    `model` defaults to the configured one (offline without OPENAI_API_KEY);
    `context` pins "now" and dataset versions (the evaluation uses it).
    New incident reports and their follow-ups (`image`: a screenshot) go to
    intake; questions about past incidents go to the agent.
    """
    if conversation.owner_id != user.pk:
        raise NotFoundError(f"Conversation {conversation.pk} not found.")
    question = _checked_question(text, screenshot=image is not None)
    if selectors.agent_run_is_active(
        conversation=conversation, stale_after=services.RUN_STALE_AFTER
    ):
        raise ConflictError("An answer is still being written in this conversation.")
    # Questions and small talk go to the agent, whose model answers a greeting
    # without tools; reports (a screenshot is one) and their follow-ups run intake.
    if intake_services.turn_kind(conversation, question, image is not None) in INTAKE_KINDS:
        return intake_reply(
            conversation=conversation,
            user=user,
            text=question,
            image=image,
            reported_dataset=context.reported_dataset if context else "",
        )
    return agent.reply(conversation=conversation, text=question, model=model, context=context)


def _checked_question(text: str, *, screenshot: bool = False) -> str:
    """The question, stripped; a screenshot may come without words."""
    if not isinstance(text, str) or (not text.strip() and not screenshot):
        raise ValidationError("The question is empty.", {"text": "required"})
    if len(text) > QUESTION_MAX_CHARS:
        raise ValidationError(
            f"The question is longer than {QUESTION_MAX_CHARS} characters.", {"text": "too long"}
        )
    return text.strip()


def conversation_answer(
    *, conversation: Conversation, user: AbstractBaseUser, text: str
) -> DoneEvent:
    """The whole answer at once: the `done` event of `conversation_reply`.

    The stream is always read to its end (stopping early would record the
    run as cancelled). An answer that ends in an error event raises it.
    """
    # Nobody watches this stream arrive, so the offline engine is not paced.
    events = conversation_reply(
        conversation=conversation, user=user, text=text, model=configured_model(paced=False)
    )
    collected = events_collect(events)
    if collected.done is not None:
        return collected.done
    error = collected.error
    if error is not None and error.code == "cancelled":
        raise ConflictError(error.message, {"code": error.code})
    raise UnavailableError(error.message if error else "The copilot did not answer.")


# --- an incident report at once (the API) ------------------------------------------


@dataclass(frozen=True)
class IntakeResult:
    conversation_id: int
    message_id: int
    reply_text: str
    payload: dict[str, Any]


def intake_report(
    *,
    conversation: Conversation,
    user: AbstractBaseUser,
    text: str,
    image: bytes | None = None,
    audio: bytes | None = None,
    audio_name: str = "",
) -> IntakeResult:
    """`intake_reply` run to the end: the stored answer and the intake card's data.

    A question is answered as a past-incident query and a greeting gets a
    reply; neither stores an incident (`POST /api/incident` with "hello").
    """
    if image is None and audio is None and text.strip():
        kind = intake_services.turn_kind(conversation, text, False)
        if kind not in INTAKE_KINDS:
            return _answered(conversation=conversation, user=user, text=text, kind=kind)
    collected = events_collect(
        intake_reply(
            conversation=conversation,
            user=user,
            text=text,
            image=image,
            audio=audio,
            audio_name=audio_name,
        )
    )
    payload = collected.result_data(intake_services.INTAKE_TOOL_NAME)
    return _intake_result(
        conversation, collected, payload, "The incident report ended without an answer."
    )


def _answered(
    *, conversation: Conversation, user: AbstractBaseUser, text: str, kind: TurnKind
) -> IntakeResult:
    """A question or a greeting sent to intake, answered by the copilot instead."""
    payload: dict[str, Any] = {
        "kind": kind, "incident": {}, "similar_incidents": [], "actions": [], "owner_team": "",
        "ticket": None, "ticket_error": "", "decisions": [], "steps": [],
    }  # fmt: skip
    events = conversation_reply(
        conversation=conversation, user=user, text=text, model=configured_model(paced=False)
    )
    collected = events_collect(events)
    return _intake_result(conversation, collected, payload, "The answer ended without a reply.")


def _intake_result(
    conversation: Conversation, collected: Collected, payload: dict[str, Any], missing: str
) -> IntakeResult:
    """The stored answer of a reply read to its end; its error, or `missing`, raised."""
    if collected.error is not None:
        raise IncidentDeskError(collected.error.message)
    if collected.done is None:
        raise IncidentDeskError(missing)
    done = collected.done
    return IntakeResult(conversation.pk, done.message_id, done.content, payload)
