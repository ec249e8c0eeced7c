"""The planner: what kind of turn this is, and which steps answer it.

Offline, rules decide (`copilot.intake.rules`). With OPENAI_API_KEY the
model checks the reports the rules only guessed from weak signals ("right
now", a screenshot). It never turns a question or a plain statement into a
report, never overrides a follow-up or an explicit report, and never decides
whether a ticket is filed: that comes from the user's own words.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from enum import StrEnum

from django.conf import settings

from copilot.chat_models.base import ChatModel, ModelFailure, collect_text
from copilot.chat_models.offline.intents import guess_intent
from copilot.intake import rules
from copilot.intake.state import INTAKE_KINDS, IntakeState, TurnKind
from copilot.logsearch import log_search_configured

logger = logging.getLogger(__name__)


class Step(StrEnum):
    INGESTION = "INGESTION"
    VISION_ANALYSIS = "VISION_ANALYSIS"
    INCIDENT_CLASSIFICATION = "INCIDENT_CLASSIFICATION"
    MEMORY_RETRIEVAL = "MEMORY_RETRIEVAL"
    LOG_SEARCH = "LOG_SEARCH"
    PLAYBOOK = "PLAYBOOK"
    DUPLICATE_CHECK = "DUPLICATE_CHECK"
    TICKET_CREATE = "TICKET_CREATE"
    MEMORY_WRITE = "MEMORY_WRITE"
    COMMENT_DRAFT = "COMMENT_DRAFT"
    TICKET_ADD_COMMENT = "TICKET_ADD_COMMENT"
    SUMMARY = "SUMMARY"


@dataclass(frozen=True)
class Plan:
    kind: TurnKind
    steps: tuple[Step, ...]
    decision: rules.TurnDecision


# Rule outcomes the online model checks: a report guessed from weak signals.
# Plain statements without them stay questions with no model call, which
# keeps every symptom search one round trip and never steals it.
_UNCERTAIN_REASONS = frozenset({"describes something ongoing", "attaches a screenshot"})
CLASSIFIER_PROMPT = (
    # One word back keeps parsing trivial and works on small local models.
    "You sort messages sent to an incident copilot. Reply with exactly one word.\n"
    "new_incident: the user reports a production problem happening now in their own "
    "systems and wants it triaged or filed.\n"
    "query_past: the user describes symptoms to find similar past incidents, or asks "
    "about past incidents, runbooks or history.\n"
    "When unsure, reply query_past."
)
_LABEL_RE = re.compile(r"\b(new_incident|query_past)\b")


def classify(
    *, text: str, has_image: bool, state: IntakeState, model: ChatModel | None = None
) -> rules.TurnDecision:
    """The turn's kind: rules first; the online model only where the rules guess."""
    decision = rules.classify_turn(
        text,
        has_image=has_image,
        has_incident=bool(state.incident),
        has_proposal=state.proposal is not None,
        guess=guess_intent(text),
    )
    if decision.reason not in _UNCERTAIN_REASONS:
        return decision
    model = model or online_model()
    if model is None:
        return decision
    return _model_decision(model, text, has_image, decision)


def online_model() -> ChatModel | None:
    if not settings.OPENAI_API_KEY:
        return None
    from copilot.chat_models.openai_compat import OpenAIChatModel  # deferred: only when online

    return OpenAIChatModel.from_settings()


def _model_decision(
    model: ChatModel, text: str, has_image: bool, fallback: rules.TurnDecision
) -> rules.TurnDecision:
    content = text + ("\n[A screenshot is attached.]" if has_image else "")
    messages = [
        {"role": "system", "content": CLASSIFIER_PROMPT},
        {"role": "user", "content": content},
    ]
    events = list(model.stream(messages, []))
    failure = next((e for e in events if isinstance(e, ModelFailure)), None)
    found = _LABEL_RE.search(collect_text(iter(events)).lower())
    if failure is not None or found is None:
        logger.warning("intake classifier fell back to the rules: %s", failure or "no label")
        return fallback
    return replace(fallback, kind=TurnKind(found.group(1)), reason="the online model")


def build_plan(decision: rules.TurnDecision, *, has_image: bool) -> Plan:
    """The steps for a turn; a confirmation only files (or comments on) the ticket."""
    if decision.kind == TurnKind.ADD_COMMENT:
        steps: tuple[Step, ...] = (Step.COMMENT_DRAFT, Step.TICKET_ADD_COMMENT)
    elif decision.kind == TurnKind.ASK_SUMMARY:
        steps = (Step.SUMMARY,)
    elif decision.confirms:
        steps = (Step.TICKET_CREATE,)
    else:
        steps = _report_steps(has_image)
    return Plan(decision.kind, steps, decision)


def _report_steps(has_image: bool) -> tuple[Step, ...]:
    vision = (Step.VISION_ANALYSIS,) if has_image else ()
    # The service's logs, when a log backend is configured (search_logs).
    logs = (Step.LOG_SEARCH,) if log_search_configured() else ()
    return (
        Step.INGESTION,
        *vision,
        Step.INCIDENT_CLASSIFICATION,
        Step.MEMORY_RETRIEVAL,
        *logs,
        Step.PLAYBOOK,
        Step.DUPLICATE_CHECK,
        Step.TICKET_CREATE,
        Step.MEMORY_WRITE,
    )


def plan_turn(
    *, text: str, has_image: bool, state: IntakeState, model: ChatModel | None = None
) -> Plan:
    """The plan intake runs. Intake was chosen by the caller, so a turn the rules
    call query_past is handled as a report (the API's `POST /api/incident`)."""
    decision = classify(text=text, has_image=has_image, state=state, model=model)
    if decision.kind not in INTAKE_KINDS:
        decision = replace(decision, kind=TurnKind.NEW_INCIDENT, reason="sent to intake")
    return build_plan(decision, has_image=has_image)
