"""Writes for tickets: idempotent creation and comments, in whichever tracker holds them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from copilot.models import Conversation, Message, Ticket, TicketComment
from copilot.tickets.base import TicketDraft, Tracker
from copilot.tickets.selectors import ticket_get_by_idempotency_key
from copilot.tickets.trackers import get_tracker
from incidentdesk.errors import ConflictError, ValidationError

logger = logging.getLogger(__name__)

DESCRIPTION_MAX_CHARS = 30000  # well under Jira's 32k limit on a text field


@dataclass(frozen=True)
class TicketOutcome:
    ticket: Ticket
    created: bool  # False: the ticket already existed for this conversation and incident


def ticket_idempotency_key(*, conversation_id: int, incident_id: str) -> str:
    """One ticket per conversation and incident, however often "file it" is said."""
    return f"conversation-{conversation_id}:incident-{incident_id}"


def ticket_draft(*, incident: dict[str, Any]) -> TicketDraft:
    """The ticket's text from the structured incident the intake built."""
    lines = [
        incident.get("description", ""),
        "",
        f"Severity: {incident.get('severity', '')} ({incident.get('severity_reason', '')})",
        f"Service: {incident.get('service') or 'unknown'}",
        f"Impact: {incident.get('impact', '')}",
        f"Components: {', '.join(incident.get('components', [])) or 'unknown'}",
        f"Reported incident: {incident.get('incident_id', '')}",
    ]
    labels = ("incidentdesk", str(incident.get("severity", "")).lower(), *incident.get("tags", []))
    return TicketDraft(
        title=str(incident.get("title", "")),
        description="\n".join(lines)[:DESCRIPTION_MAX_CHARS],
        severity=str(incident.get("severity", "SEV3")),
        service=str(incident.get("service", "")),
        labels=tuple(label for label in labels if label)[:10],
    )


@transaction.atomic
def ticket_create(
    *,
    conversation: Conversation,
    user: AbstractBaseUser,
    incident: dict[str, Any],
    tracker: Tracker | None = None,
) -> TicketOutcome:
    """File a ticket for `incident` once per conversation; a repeat returns the first.

    The conversation row is locked while the tracker is called, so two "file
    it" at once cannot both file (the lock covers only this conversation).
    """
    Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
    key = ticket_idempotency_key(
        conversation_id=conversation.pk, incident_id=incident["incident_id"]
    )
    existing = ticket_get_by_idempotency_key(idempotency_key=key)
    if existing is not None:
        return TicketOutcome(existing, created=False)
    tracker = tracker or get_tracker()
    draft = ticket_draft(incident=incident)
    remote = tracker.create_issue(draft)
    ticket = Ticket(
        key=remote.key,
        title=draft.title[:500],
        description=draft.description,
        status=remote.status,
        severity=draft.severity,
        service=draft.service[:300],
        conversation=conversation,
        incident_id=incident["incident_id"],
        external_url=remote.url if remote.url.startswith("http") else "",
        tracker=tracker.name,
        created_by_id=user.pk,
        idempotency_key=key,
        report_message_id=_report_message_id(conversation, incident),
    )
    ticket.full_clean()
    ticket.save()
    return TicketOutcome(ticket, created=True)


def _report_message_id(conversation: Conversation, incident: dict[str, Any]) -> int | None:
    """The reporting message, if it is in this conversation (state is not to be trusted blindly)."""
    message_id = incident.get("message_id")
    if not isinstance(message_id, int):
        return None
    return conversation.messages.filter(pk=message_id).values_list("pk", flat=True).first()


# What each status action does: the statuses it applies to, and the one it leads to.
STATUS_ACTIONS: dict[str, tuple[frozenset[str], str]] = {
    "acknowledge": (frozenset({Ticket.Status.OPEN}), Ticket.Status.IN_PROGRESS),
    "resolve": (frozenset({Ticket.Status.OPEN, Ticket.Status.IN_PROGRESS}), Ticket.Status.RESOLVED),
    "reopen": (frozenset({Ticket.Status.RESOLVED, Ticket.Status.CLOSED}), Ticket.Status.OPEN),
}


def ticket_actions(*, ticket: Ticket) -> list[str]:
    """The status actions that apply to the ticket now, for its page's buttons."""
    return [name for name, (allowed, _) in STATUS_ACTIONS.items() if ticket.status in allowed]


ACTION_DONE = {"acknowledge": "acknowledged", "resolve": "resolved", "reopen": "reopened"}


@transaction.atomic
def ticket_status_change(
    *, ticket: Ticket, user: AbstractBaseUser, action: str, tracker: Tracker | None = None
) -> Ticket:
    """acknowledge, resolve or reopen: in the ticket's tracker first, then here.

    The row is locked while Jira is asked, so two clicks cannot both move it;
    if Jira refuses, nothing changes here and the reason is the error.
    """
    if action not in STATUS_ACTIONS:
        raise ValidationError(f"Unknown ticket action {action!r}.", {"action": "unknown"})
    ticket = Ticket.objects.select_for_update().get(pk=ticket.pk)
    allowed, target = STATUS_ACTIONS[action]
    if ticket.status not in allowed:
        raise ConflictError(
            f"{ticket.key} is {ticket.get_status_display().lower()}: "
            f"it cannot be {ACTION_DONE[action]}."
        )
    (tracker or get_tracker(ticket.tracker)).transition(ticket.key, target)
    ticket.status = target
    ticket.full_clean()
    ticket.save(update_fields=["status", "updated_at"])
    logger.info("ticket %s %s by %s", ticket.key, ACTION_DONE[action], user.get_username())
    return ticket


def ticket_comment_add(
    *,
    ticket: Ticket,
    user: AbstractBaseUser,
    body: str,
    source_message: Message | None = None,
    tracker: Tracker | None = None,
) -> TicketComment:
    """Comment in the ticket's own tracker, then keep the comment here."""
    tracker = tracker or get_tracker(ticket.tracker)
    remote = tracker.add_comment(ticket.key, body)
    comment = TicketComment(
        ticket=ticket,
        body=body,
        author_id=user.pk,
        source_message=source_message,
        external_id=remote.external_id,
    )
    comment.full_clean()
    comment.save()
    return comment
