"""The intake steps. Each reads and fills the shared `IntakeContext` and returns its outcome.

A step that cannot do its job raises `IncidentDeskError` with a reason for the
user; the executor records it and runs the rest. Retrieved text (incidents,
documents, screenshot text) is only ever quoted into the answer: no step
decides anything from it, so nothing written there can file a ticket.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone
from django.utils.text import slugify

from copilot.intake import media, planner, rules
from copilot.intake import selectors as intake_selectors
from copilot.intake import services as store
from copilot.intake.planner import Step
from copilot.intake.playbook import PlaybookItem, logs_action, playbook_for
from copilot.intake.state import IntakeState, RememberedTicket, TicketProposal
from copilot.logsearch import log_search_configured
from copilot.models import Conversation, Message, Ticket
from copilot.tickets import services as ticket_services
from copilot.tickets.base import TrackerError
from copilot.tickets.selectors import ticket_get_by_key, ticket_url
from copilot.tickets.trackers import get_tracker
from copilot.titles import heuristic_title
from copilot.tools import ToolContext, ToolResult, run_tool
from incidentdesk.errors import IncidentDeskError
from incidents import query_parsing as qp
from incidents import selectors as incident_selectors
from incidents.rendering import incident_data
from knowledge import selectors as knowledge_selectors
from knowledge.selectors import KnowledgeHit

SIMILAR_LIMIT = 5
KNOWLEDGE_LIMIT = 5
AUTH_FAILED = "Ticket creation failed, please check Jira credentials."
COMMENT_AUTH_FAILED = "Adding the comment failed, please check Jira credentials."


@dataclass
class StepRecord:
    name: str
    outcome: str
    ms: int
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome, "ms": self.ms, "error": self.error}


@dataclass
class IntakeContext:
    """One turn's inputs, intermediate results and the conversation's intake state.

    `state` is frozen: a step that changes it assigns a new one, which the
    executor stores at the end of the turn (even when the step then fails:
    a failed filing still leaves its proposal for "yes" to retry).
    """

    conversation: Conversation
    user: AbstractBaseUser
    typed_text: str
    user_message: Message
    plan: planner.Plan
    state: IntakeState
    screenshot: media.Screenshot | None = None
    voice: media.VoiceNote | None = None
    transcript: str = ""
    screenshot_text: str = ""
    description: str = ""
    incident: dict[str, Any] = field(default_factory=dict)
    similar: list[dict[str, Any]] = field(default_factory=list)
    documents: list[KnowledgeHit] = field(default_factory=list)
    causes: list[PlaybookItem] = field(default_factory=list)
    actions: list[PlaybookItem] = field(default_factory=list)
    logs: PlaybookItem | None = None  # what LOG_SEARCH found, for the playbook
    # What a step that searches found, as its tool's call (name, arguments, result):
    # the executor says it in that tool's status wording.
    searched: dict[Step, tuple[str, dict[str, Any], ToolResult]] = field(default_factory=dict)
    owner_team: str = ""
    duplicate: dict[str, Any] | None = None
    ticket: Ticket | None = None
    ticket_note: str = ""  # created | existing | proposed | proposed_comment | commented
    ticket_error: str = ""
    comment_body: str = ""
    ledger: list[rules.LedgerEntry] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    reported_dataset: str = ""  # "" is the live one; see ToolContext.reported_dataset
    # A step that failed in part but whose writes must stay (the ledger when a
    # Jira comment fails) sets this instead of raising, which would roll back.
    step_error: str = ""

    @property
    def text(self) -> str:
        """What the user said: typed text and the voice note's transcript."""
        return " ".join(part for part in (self.typed_text, self.transcript) if part.strip())

    @property
    def today(self) -> dt.date:
        return timezone.localdate()


# --- a new report -------------------------------------------------------------------


def ingestion(ctx: IntakeContext) -> str:
    """Transcribe a voice note, then normalise the description."""
    _transcribe(ctx)
    ctx.description = rules.normalise_description(ctx.text)
    if not ctx.description and ctx.screenshot is None:
        raise IncidentDeskError("The report is empty: describe what is failing.")
    return f"{len(ctx.description)} characters"


def _transcribe(ctx: IntakeContext) -> None:
    if ctx.voice is not None and not ctx.transcript:
        ctx.transcript = media.voice_note_transcribe(ctx.voice)


def vision_analysis(ctx: IntakeContext) -> str:
    """Error text from the screenshot: the online vision model, else OCR (offline)."""
    if ctx.screenshot is None:
        return "no screenshot"
    model = planner.online_model()
    how = "OCR"
    if model is not None:
        try:
            ctx.screenshot_text, how = media.screenshot_vision(ctx.screenshot, model), "vision"
        except IncidentDeskError:
            how = "OCR (the vision model failed)"
    if how != "vision":
        ctx.screenshot_text = media.screenshot_ocr(ctx.screenshot)
    ctx.description = rules.normalise_description(ctx.text, ctx.screenshot_text)
    return f"{how}: {len(ctx.screenshot_text)} characters"


def incident_classification(ctx: IntakeContext) -> str:
    """Title, service, severity (rules in `rules.SEVERITY_RULES`), impact, components, tags."""
    text = ctx.description or ctx.text
    severity, reason = rules.severity_for(text)
    components = rules.components_for(text)
    catalog = incident_selectors.application_catalog()
    service = rules.service_for(ctx.text, catalog) or rules.service_for(text, catalog)
    ctx.incident = {
        "incident_id": reported_incident_id(ctx.today, ctx.user_message.pk),
        "title": report_title(ctx, service=service, text=text),
        "service": service,
        "severity": severity,
        "severity_reason": reason,
        "impact": rules.impact_for(text, severity),
        "components": components,
        "tags": rules.tags_for(text, components),
        "error_codes": rules.error_codes(text),
        "description": ctx.description,
        "reported_at": timezone.now().isoformat(),
        "reported_by": ctx.user.get_username(),
        "message_id": ctx.user_message.pk,  # the report's message: its screenshot, if any
    }
    return f"{severity}, {ctx.incident['service'] or 'service unknown'}"


def report_title(ctx: IntakeContext, *, service: str, text: str) -> str:
    """2-4 words from the key phrase ("Checkout Gateway 502 errors"), not the raw
    sentence: the service (else the report's key words) and the symptom."""
    sentence = rules.title_for(ctx.text, fallback=screenshot_headline(ctx.screenshot_text))
    codes = rules.error_codes(text)
    numbers = {code.removeprefix("HTTP ") for code in codes}
    key_words = [w for w in heuristic_title(sentence).split() if w not in numbers]
    subject = service or " ".join(key_words[:2])
    short = rules.short_title(subject=subject, text=text, codes=codes)
    return short or heuristic_title(sentence) or sentence


def screenshot_headline(text: str) -> str:
    """A title for a screenshot-only report: its first line, then its first error line."""
    lines = [line for line in text.splitlines() if line.strip()]
    error = next((line for line in lines if rules.error_codes(line)), "")
    head = lines[0] if lines else ""
    return f"{head}: {error}" if error and error != head else head or error


def reported_incident_id(today: dt.date, message_id: int) -> str:
    """INC-<date>-9<message id>: unique per report, and found by id lookups.

    Imported incidents number from 001 each day; the leading 9 and the
    message id (at least five digits) keep reported ones apart from them.
    """
    return f"INC-{today:%Y-%m-%d}-9{message_id:05d}"


def memory_retrieval(ctx: IntakeContext) -> str:
    """Similar past incidents and matching documents, by the copilot's own selectors."""
    query = _search_text(ctx)
    search, similar = intake_selectors.similar_incident_search(query=query, limit=SIMILAR_LIMIT)
    ctx.similar = [
        incident_data(
            hit.incident, score=round(hit.score, 4), dataset=hit.incident.version.dataset.name
        )
        for hit in similar
    ]
    found = ToolResult("", count=len(ctx.similar), broadened=search.expanded)
    ctx.searched[Step.MEMORY_RETRIEVAL] = ("search_similar_incidents", {"query": query}, found)
    ctx.documents = knowledge_selectors.knowledge_search(query=query, limit=KNOWLEDGE_LIMIT).hits
    if not ctx.incident.get("service"):
        ctx.incident["service"] = _service_from_similar(ctx.similar)
    return f"{len(ctx.similar)} incidents, {len(ctx.documents)} documents"


def _search_text(ctx: IntakeContext) -> str:
    """The report without its time words ("since 14:00", "today"), which say when it
    happened, not a filter on past incidents, and without its ask for a ticket."""
    _, rest = qp.parse_time_window(ctx.description or ctx.text, ctx.today)
    return (rules.without_ticket_ask(rest) or rest)[:2000]


def _service_from_similar(similar: list[dict[str, Any]]) -> str:
    names = [item["impacted_application"] for item in similar[:3] if item["impacted_application"]]
    return Counter(names).most_common(1)[0][0] if names else ""


def log_search(ctx: IntakeContext) -> str:
    """The service's log lines of the last hour with the report's error code, read by
    the search_logs tool (bounded, secrets redacted), for the playbook."""
    service = log_service(ctx)
    codes = [str(code).removeprefix("HTTP ") for code in ctx.incident.get("error_codes") or []]
    query = codes[0] if codes else ""
    lines: list[dict[str, Any]] = []
    error = ""
    if service:
        arguments = {"service": service, "query": query, "time_range": LOG_TIME_RANGE}
        result = run_tool("search_logs", json.dumps(arguments), ToolContext())
        ctx.searched[Step.LOG_SEARCH] = ("search_logs", arguments, result)
        lines, error = result.data.get("lines", []), result.error
    ctx.logs = logs_action(
        service=service, query=query, window=LOG_WINDOW, lines=lines, error=error
    )
    if error:
        raise IncidentDeskError(error)
    return f"{len(lines)} lines of {service}" if service else "no service to search"


def log_service(ctx: IntakeContext) -> str:
    """The service as log backends label it: its name's slug (Checkout Gateway →
    checkout-gateway)."""
    return slugify(ctx.incident.get("service") or "")


# An hour: a report is about now, and search_logs bounds longer ranges anyway.
LOG_TIME_RANGE, LOG_WINDOW = "1h", "hour"


def playbook(ctx: IntakeContext) -> str:
    """Likely causes and next actions, each citing its source, and an owner team."""
    result = playbook_for(
        ctx.similar,
        ctx.documents,
        ctx.incident,
        logs_searchable=log_search_configured(),
        logs=ctx.logs,
    )
    ctx.causes, ctx.actions, ctx.owner_team = result.causes, result.actions, result.owner_team
    return f"{len(ctx.actions)} actions, owner {ctx.owner_team or 'unknown'}"


def duplicate_check(ctx: IntakeContext) -> str:
    """An open ticket, or a recent reported incident, for the same service and problem."""
    ctx.duplicate = intake_selectors.duplicate_find(incident=ctx.incident, today=ctx.today)
    if ctx.duplicate is None:
        return "no duplicate"
    return (
        f"possible duplicate of {ctx.duplicate.get('ticket_key') or ctx.duplicate['incident_id']}"
    )


def memory_write(ctx: IntakeContext) -> str:
    """Store the incident (embedded) in the "reported" dataset, active, so searches find it."""
    store.reported_incident_store(
        incident=ctx.incident,
        owner_team=ctx.owner_team,
        user=ctx.user,
        conversation=ctx.conversation,
        ticket_key=ctx.ticket.key if ctx.ticket else "",
        dataset_name=ctx.reported_dataset,
    )
    return f"stored {ctx.incident['incident_id']}"


# --- tickets ------------------------------------------------------------------------------


def ticket_create(ctx: IntakeContext) -> str:
    """File only on the user's own words: asked in this report, or confirming the proposal."""
    decision = ctx.plan.decision
    if decision.confirms:
        return _confirm_proposal(ctx)
    duplicate_key = (ctx.duplicate or {}).get("ticket_key")
    if duplicate_key and not decision.new_ticket_anyway:
        return _propose(ctx, "comment", duplicate_key)
    if decision.wants_ticket:
        return _file(ctx, ctx.incident)
    return _propose(ctx, "create", "")


def _propose(ctx: IntakeContext, action: Literal["create", "comment"], ticket_key: str) -> str:
    ctx.state = replace(ctx.state, proposal=TicketProposal(action, ticket_key))
    ctx.ticket_note = "proposed_comment" if action == "comment" else "proposed"
    return f"proposed: comment on {ticket_key}" if ticket_key else "proposed: awaiting confirmation"


def _confirm_proposal(ctx: IntakeContext) -> str:
    incident = dict(ctx.state.incident)
    proposal = ctx.state.proposal or TicketProposal("create")
    if not incident:
        raise IncidentDeskError("There is no reported incident to file yet.")
    ctx.incident = incident
    if proposal.action == "comment" and not ctx.plan.decision.new_ticket_anyway:
        return _comment_on_duplicate(ctx, proposal.ticket_key)
    return _file(ctx, incident)


def _file(ctx: IntakeContext, incident: dict[str, Any]) -> str:
    try:
        outcome = ticket_services.ticket_create(
            conversation=ctx.conversation,
            user=ctx.user,
            incident=incident,
            # The evaluation's sandbox files in our own tables only, never in Jira.
            tracker=get_tracker("builtin") if ctx.reported_dataset else None,
        )
    except TrackerError as exc:
        ctx.ticket_error = (
            AUTH_FAILED if exc.kind == "auth" else f"Ticket creation failed: {exc.message}"
        )
        ctx.state = replace(ctx.state, proposal=TicketProposal("create"))  # "yes" retries
        raise IncidentDeskError(ctx.ticket_error) from exc
    ctx.ticket, ctx.ticket_note = outcome.ticket, "created" if outcome.created else "existing"
    _remember_ticket(ctx, outcome.ticket)
    if outcome.created:
        _ledger_note(
            ctx, f"File ticket {outcome.ticket.key}: {outcome.ticket.title}", outcome.ticket
        )
    return f"{ctx.ticket_note} {outcome.ticket.key}"


def _comment_on_duplicate(ctx: IntakeContext, key: str) -> str:
    ticket = ticket_get_by_key(key=key)
    if ticket is None:
        raise IncidentDeskError(f"Ticket {key} no longer exists.")
    body = f"Reported again: {ctx.incident.get('description', '')}"
    _add_comment(ctx, ticket, body)
    ctx.ticket, ctx.ticket_note = ticket, "commented"
    _remember_ticket(ctx, ticket)
    _ledger_note(ctx, f"Track this report on the existing ticket {ticket.key}", ticket)
    return f"commented on {ticket.key}"


def _remember_ticket(ctx: IntakeContext, ticket: Ticket) -> None:
    url = ticket_url(ticket=ticket)
    remembered = RememberedTicket(key=ticket.key, url=url, status=ticket.status)
    ctx.state = replace(ctx.state, ticket=remembered, proposal=None)
    if ctx.plan.decision.confirms:  # the report was stored when it was made, without the key
        store.reported_incident_ticket_set(
            incident_id=ctx.incident["incident_id"],
            ticket_key=ticket.key,
            dataset_name=ctx.reported_dataset,
        )


def _ledger_note(ctx: IntakeContext, what: str, ticket: Ticket) -> None:
    entry = rules.LedgerEntry("decision", what, "")
    rows = store.decisions_record(ctx=ctx, entries=[entry], ticket=ticket, comment=None)
    ctx.decisions += [intake_selectors.decision_data(row) for row in rows]


def _add_comment(ctx: IntakeContext, ticket: Ticket, body: str) -> Any:
    try:
        return ticket_services.ticket_comment_add(
            ticket=ticket, user=ctx.user, body=body, source_message=ctx.user_message
        )
    except TrackerError as exc:
        ctx.ticket_error = (
            COMMENT_AUTH_FAILED
            if exc.kind == "auth"
            else f"Adding the comment failed: {exc.message}"
        )
        raise IncidentDeskError(ctx.ticket_error) from exc


# --- follow-ups -----------------------------------------------------------------------------


def comment_draft(ctx: IntakeContext) -> str:
    """The comment's text, and the decisions and actions it states."""
    _transcribe(ctx)
    ctx.incident = dict(ctx.state.incident)
    ctx.comment_body = rules.comment_body(ctx.text)
    ctx.ledger = rules.ledger_entries(ctx.text)
    return f"{len(ctx.ledger)} decisions or actions"


def ticket_add_comment(ctx: IntakeContext) -> str:
    """Comment on the current ticket; the ledger keeps the decisions either way."""
    ticket = ticket_get_by_key(key=ctx.state.ticket.key) if ctx.state.ticket else None
    comment = None
    if ticket is not None:
        ctx.ticket = ticket
        try:
            comment = _add_comment(ctx, ticket, ctx.comment_body)
        except IncidentDeskError as exc:
            ctx.step_error = exc.message
    rows = store.decisions_record(ctx=ctx, entries=ctx.ledger, ticket=ticket, comment=comment)
    ctx.decisions = [intake_selectors.decision_data(row) for row in rows]
    if ctx.step_error:
        return "failed: kept in the ledger"
    return f"commented on {ticket.key}" if ticket else "no ticket yet: kept in the ledger"


def summary(ctx: IntakeContext) -> str:
    """The decision ledger of this conversation, oldest first, with provenance."""
    ctx.incident = dict(ctx.state.incident)
    rows = intake_selectors.decision_list_for_conversation(conversation=ctx.conversation)
    ctx.decisions = [intake_selectors.decision_data(row) for row in rows]
    ctx.ticket = ticket_get_by_key(key=ctx.state.ticket.key) if ctx.state.ticket else None
    return f"{len(ctx.decisions)} decisions"


STEPS: dict[Step, Callable[[IntakeContext], str]] = {
    Step.INGESTION: ingestion,
    Step.VISION_ANALYSIS: vision_analysis,
    Step.INCIDENT_CLASSIFICATION: incident_classification,
    Step.MEMORY_RETRIEVAL: memory_retrieval,
    Step.LOG_SEARCH: log_search,
    Step.PLAYBOOK: playbook,
    Step.DUPLICATE_CHECK: duplicate_check,
    Step.TICKET_CREATE: ticket_create,
    Step.MEMORY_WRITE: memory_write,
    Step.COMMENT_DRAFT: comment_draft,
    Step.TICKET_ADD_COMMENT: ticket_add_comment,
    Step.SUMMARY: summary,
}
