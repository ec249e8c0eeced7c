"""Reads for intake: the conversation's intake state, the decision ledger, duplicates."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.db.models import Min, QuerySet
from pgvector.django import CosineDistance

from copilot.intake import rules
from copilot.intake.state import IntakeState
from copilot.models import Conversation, Decision, Ticket
from copilot.tickets.selectors import ticket_list_open_for_service, ticket_url
from incidentdesk.embeddings import embed_query
from incidents.models import Incident, IncidentChunk
from incidents.ranking import content_words
from incidents.selectors import IncidentHit, IncidentSearch, incident_scope, incident_search_similar

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


# --- similar incidents for the playbook card ------------------------------------------------

# A similar incident is shown (and lends its mitigation to the playbook) only when
# the report's embedding is at least SIMILAR_FLOOR close (cosine) to one of its
# chunks, or SIMILAR_FLOOR_WITH_CODE when the incident also has the report's error
# code: the search's fused scores are scaled within each result list, so the fifth
# hit of a report nothing resembles still scores 0.5. Measured on a labelled set
# written for it (57 reports: 35 sentences and 10 terse ones with similar demo
# incidents, 12 with none; tests/copilot/intake/data/similar_reports.jsonl, run by
# bench/intake_similar_floor.py): the top 5 as searched had precision 0.19 and
# recall 1.00, and every unrelated report showed five incidents. Fused-score
# floors and shared words never emptied an unrelated report's list; cosine did.
# Cosine >= 0.57 alone (the best F1 of 0.45-0.65 on the sentences; 0.57 and 0.59
# when chosen on either half) gave precision 0.80 and recall 0.98, missing only a
# terse "checkout 502 after deploy" (0.45); with the error-code rule, precision
# 0.72 and recall 1.00; no unrelated report shows any either way. Valid for the
# local MiniLM embedder only: another embedder's cosines need their own measurement.
SIMILAR_FLOOR = 0.57
SIMILAR_FLOOR_WITH_CODE = 0.4


def similar_incident_search(*, query: str, limit: int) -> tuple[IncidentSearch, list[IncidentHit]]:
    """The copilot's incident search for a report, and the hits alike enough to show."""
    search = incident_search_similar(query=query, limit=limit)
    cosines = incident_cosines(query=query, incidents=[hit.incident for hit in search.hits])
    codes = rules.error_codes(query)
    kept = [
        hit
        for hit in search.hits
        if is_similar(
            cosines.get(hit.incident.pk, 0.0), shares_code=shares_code(hit.incident, codes)
        )
    ]
    return search, kept


def is_similar(cosine: float, *, shares_code: bool) -> bool:
    """SIMILAR_FLOOR, or SIMILAR_FLOOR_WITH_CODE when the incident has the report's error code."""
    return cosine >= SIMILAR_FLOOR or (shares_code and cosine >= SIMILAR_FLOOR_WITH_CODE)


def shares_code(incident: Incident, codes: list[str]) -> bool:
    """Whether the incident's own text has one of the report's error codes (502, ORA-00942),
    also in the plural ("502s")."""
    text = " ".join(
        [incident.title, incident.root_cause, incident.mitigation, incident.body, *incident.tags]
    )
    return any(
        re.search(rf"(?<![\w-]){re.escape(code.removeprefix('HTTP '))}s?(?![\w-])", text, re.I)
        for code in codes
    )


def incident_cosines(*, query: str, incidents: list[Incident]) -> dict[int, float]:
    """Cosine similarity of `query` to each incident's nearest chunk, by incident pk."""
    if not incidents:
        return {}
    nearest = (
        IncidentChunk.objects.filter(incident__in=incidents)
        .values("incident_id")
        .annotate(distance=Min(CosineDistance("embedding", embed_query(query))))
    )
    return {row["incident_id"]: 1.0 - float(row["distance"]) for row in nearest}
