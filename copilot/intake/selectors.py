"""Reads for intake: the conversation's intake state, the decision ledger, duplicates."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import QuerySet

from copilot.intake import rules
from copilot.intake.state import IntakeState
from copilot.models import Conversation, Decision, Ticket
from copilot.tickets.selectors import ticket_list_open_for_service, ticket_url
from incidents.ranking import content_words
from incidents.selectors import incident_scope

DUPLICATE_WINDOW_DAYS = 2  # an open problem older than this is a new incident, not a repeat
SAME_PROBLEM_OVERLAP = 0.3  # share of content words two reports must have in common


def intake_state(conversation: Conversation) -> IntakeState:
    """The current incident, ticket and pending proposal."""
    state = conversation.state.get("intake") if isinstance(conversation.state, dict) else None
    return IntakeState.from_json(state)


def decision_list_for_conversation(*, conversation: Conversation) -> QuerySet[Decision]:
    """The ledger in order, with everything its provenance names (uses copilot_decision_conv_at)."""
    return (
        Decision.objects.filter(conversation=conversation)
        .select_related("decided_by", "ticket", "ticket_comment")
        .order_by("decided_at", "pk")
    )


def decision_data(decision: Decision) -> dict[str, Any]:
    """One ledger row as JSON, provenance included."""
    return {
        "id": decision.pk,
        "kind": decision.kind,
        "what": decision.what,
        "who": decision.who,
        "decided_by": decision.decided_by.get_username() if decision.decided_by else "",
        "decided_at": decision.decided_at.isoformat(),
        "source_message_id": decision.source_message_id,
        "ticket_key": decision.ticket.key if decision.ticket else "",
        "ticket_comment_id": decision.ticket_comment_id,
    }


# --- duplicates -------------------------------------------------------------------------


def duplicate_find(*, incident: dict[str, Any], today: dt.date) -> dict[str, Any] | None:
    """An open ticket, else a recent incident, of the same service about the same problem."""
    service = incident.get("service") or ""
    if not service:
        return None
    since = today - dt.timedelta(days=DUPLICATE_WINDOW_DAYS)
    for ticket in ticket_list_open_for_service(service=service):
        if ticket.created_at.date() >= since and same_problem(incident, ticket.title):
            return _ticket_duplicate(ticket, "an open ticket for the same service")
    return _recent_incident_duplicate(incident, service, since)


def _recent_incident_duplicate(
    incident: dict[str, Any], service: str, since: dt.date
) -> dict[str, Any] | None:
    recent = incident_scope().filter(impacted_application__iexact=service, occurred_at__gte=since)
    for other in recent.exclude(incident_id=incident.get("incident_id", "")).order_by(
        "-occurred_at"
    )[:20]:
        if same_problem(incident, f"{other.title} {other.body}"):
            ticket = Ticket.objects.filter(incident_id=other.incident_id).first()
            if ticket is not None and ticket.status in {"open", "in_progress"}:
                return _ticket_duplicate(ticket, f"the open ticket of {other.incident_id}")
            return {
                "incident_id": other.incident_id,
                "title": other.title,
                "ticket_key": "",
                "ticket_url": "",
                "reason": "a recent incident of the same service",
            }
    return None


def _ticket_duplicate(ticket: Ticket, reason: str) -> dict[str, Any]:
    return {
        "incident_id": ticket.incident_id,
        "title": ticket.title,
        "ticket_key": ticket.key,
        "ticket_url": ticket_url(ticket=ticket),
        "reason": reason,
    }


def same_problem(incident: dict[str, Any], other_text: str) -> bool:
    """Same error code, or enough of the same words in the titles."""
    codes = set(incident.get("error_codes") or [])
    if codes & set(rules.error_codes(other_text)):
        return True
    mine = set(content_words(str(incident.get("title", ""))))
    theirs = set(content_words(other_text))
    if not mine or not theirs:
        return False
    return len(mine & theirs) / min(len(mine), len(theirs)) >= SAME_PROBLEM_OVERLAP
