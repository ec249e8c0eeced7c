"""An intake turn as data (the `incident_intake` tool result) and as the answer's text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import reverse

from copilot.intake.state import TurnKind
from copilot.tickets.selectors import ticket_url
from incidents.parsing import INCIDENT_ID_RE
from knowledge.parsing import DOCUMENT_ID_IN_TEXT_RE

if TYPE_CHECKING:
    from copilot.intake.steps import IntakeContext

SIMILAR_FIELDS = (
    "incident_id",
    "title",
    "impacted_application",
    "occurred_at",
    "severity",
    "root_cause",
    "mitigation",
    "accountable_party",
    "score",
    "dataset",
)
STATE_FIELDS = (
    "incident_id",
    "title",
    "service",
    "severity",
    "severity_reason",
    "impact",
    "components",
    "tags",
    "error_codes",
    "description",
    "reported_at",
    "reported_by",
)


def _match_word(rank: int) -> str:
    """How close a similar incident is, in words for people (fused scores such as
    0.0328 mean nothing to a reader, and measured, they do not separate the
    relevant from the rest: the order does)."""
    return "closest match" if rank == 0 else "also similar"


def intake_payload(ctx: IntakeContext) -> dict[str, Any]:
    """What the web card and the API show; DESIGN's keys plus the turn's kind."""
    return {
        "kind": ctx.plan.kind,
        "description": ctx.incident.get("description", ctx.description),
        "incident": ctx.incident,
        "similar_incidents": [
            {name: item.get(name) for name in SIMILAR_FIELDS} | {"match": _match_word(rank)}
            for rank, item in enumerate(ctx.similar)
        ],
        "causes": [item.as_dict() for item in ctx.causes],
        "actions": [item.as_dict() for item in ctx.actions],
        "owner_team": ctx.owner_team,
        "duplicate": ctx.duplicate,
        "ticket": ticket_info(ctx),
        "ticket_proposal": ctx.state.proposal.to_json() if ctx.state.proposal else None,
        "ticket_error": ctx.ticket_error,
        "steps": [record.as_dict() for record in ctx.steps],
        "decisions": ctx.decisions,
        "screenshot_text": ctx.screenshot_text,
    }


def ticket_info(ctx: IntakeContext) -> dict[str, Any] | None:
    if ctx.ticket is None:
        return None
    return {
        "key": ctx.ticket.key,
        "url": ticket_url(ticket=ctx.ticket),
        # Our page (status actions, screenshot, the way back here) even when Jira holds it.
        "page_url": reverse("ticket-detail", kwargs={"key": ctx.ticket.key}),
        "status": ctx.ticket.status,
        "tracker": ctx.ticket.tracker,
    }


def state_incident(ctx: IntakeContext) -> dict[str, Any]:
    """The incident as remembered for follow-ups (no retrieval results)."""
    return {name: ctx.incident.get(name) for name in STATE_FIELDS} | {"owner_team": ctx.owner_team}


def citations(ctx: IntakeContext) -> list[str]:
    """The incidents and documents the card draws on; the playbook's other sources
    ("severity rules", "change rule", "log search") are no record to cite or link."""
    sources = [item["incident_id"] for item in ctx.similar]
    sources += [item.source for item in ctx.causes + ctx.actions]
    return [s for s in dict.fromkeys(sources) if is_record_id(s)]


def is_record_id(source: str) -> bool:
    return bool(INCIDENT_ID_RE.match(source) or DOCUMENT_ID_IN_TEXT_RE.fullmatch(source))


# --- the answer's text ---------------------------------------------------------------


def reply_text(ctx: IntakeContext) -> str:
    if ctx.plan.kind == TurnKind.ASK_SUMMARY:
        parts = [_ledger_text(ctx)]
    elif ctx.plan.kind == TurnKind.ADD_COMMENT:
        parts = [_comment_text(ctx)]
    elif ctx.plan.decision.confirms:
        parts = [_ticket_text(ctx)]
    else:
        parts = [_report_text(ctx), _ticket_text(ctx)]
    parts.append(_failures_text(ctx))
    return "\n\n".join(part for part in parts if part)


def _report_text(ctx: IntakeContext) -> str:
    incident = ctx.incident
    if not incident:
        return "I could not turn this into an incident report."
    lines = [
        f"**{incident['title']}** ({incident['severity']}: {incident['severity_reason']})",
        f"Service: {incident.get('service') or 'unknown'} · Impact: {incident.get('impact')}",
        f"Components: {', '.join(incident.get('components') or []) or 'unknown'}",
        f"Recorded as {incident['incident_id']}.",
    ]
    return "\n".join(lines) + "\n\n" + _findings_text(ctx)


def _findings_text(ctx: IntakeContext) -> str:
    blocks = []
    if ctx.similar:
        similar = [f"- {s['incident_id']}: {s['title']}" for s in ctx.similar]
        blocks.append("Similar past incidents:\n" + "\n".join(similar))
    else:
        blocks.append("No similar incidents found.")
    if ctx.causes:
        causes = [f"- {item.text} [{item.source}]" for item in ctx.causes]
        blocks.append("Likely causes:\n" + "\n".join(causes))
    if ctx.actions:
        actions = [f"{n}. {item.text} [{item.source}]" for n, item in enumerate(ctx.actions, 1)]
        blocks.append("Proposed actions:\n" + "\n".join(actions))
    blocks.append(f"Owner team: {ctx.owner_team or 'unknown (on-call triages)'}")
    return "\n\n".join(blocks)


def _ticket_text(ctx: IntakeContext) -> str:
    if ctx.ticket_error:
        return ctx.ticket_error
    if ctx.ticket is not None:
        info = ticket_info(ctx) or {}
        verbs = {"created": "Filed", "existing": "Already filed", "commented": "Added this to"}
        verb = verbs.get(ctx.ticket_note, "Ticket")
        return f"{verb} {info['key']} ({info['status']}): {info['url']}"
    proposal = ctx.state.proposal
    action = proposal.action if proposal else None
    if proposal and action == "comment":
        duplicate = ctx.duplicate or {}
        return (
            f"This looks like {proposal.ticket_key} ({duplicate.get('reason', 'open')}: "
            f'{duplicate.get("title", "")}). Reply "yes" to add this report to it as a '
            'comment, or "create a new ticket" to file a separate one.'
        )
    if action == "create":
        return 'Shall I file a ticket? Reply "yes, file it".'
    return ""


def _comment_text(ctx: IntakeContext) -> str:
    if ctx.ticket_error:
        head = ctx.ticket_error
    elif ctx.ticket is not None:
        head = f"Added your comment to {ctx.ticket.key}."
    else:
        head = "There is no ticket yet, so the comment was not filed anywhere."
    if not ctx.decisions:
        return head
    return head + "\n\nRecorded in the decision ledger:\n" + _decision_lines(ctx.decisions)


def _ledger_text(ctx: IntakeContext) -> str:
    if not ctx.decisions:
        return "No decisions or actions have been recorded in this conversation yet."
    ticket = f" (ticket {ctx.ticket.key}, {ctx.ticket.status})" if ctx.ticket else ""
    title = ctx.incident.get("title")
    about = f" about **{title}**{ticket}" if title else ticket
    return f"What we decided{about}:\n" + _decision_lines(ctx.decisions)


def _decision_lines(decisions: list[dict[str, Any]]) -> str:
    return "\n".join(f"{n}. {_decision_line(d)}" for n, d in enumerate(decisions, 1))


def _decision_line(decision: dict[str, Any]) -> str:
    """The decision, then its provenance: who, when, which message, which comment."""
    when = decision["decided_at"][:16].replace("T", " ")
    source = f"message #{decision['source_message_id']}"
    if decision["ticket_comment_id"]:
        source += f", comment #{decision['ticket_comment_id']} on {decision['ticket_key']}"
    elif decision["ticket_key"]:
        source += f", {decision['ticket_key']}"
    kind = "Action" if decision["kind"] == "action" else "Decision"
    return f"{kind}: {decision['what']} ({decision['who']}, {when} UTC; {source})"


def _failures_text(ctx: IntakeContext) -> str:
    failed = [
        f"- {r.name}: {r.error}" for r in ctx.steps if r.error and r.error != ctx.ticket_error
    ]
    return (
        "Some steps failed, so this answer is incomplete:\n" + "\n".join(failed) if failed else ""
    )
