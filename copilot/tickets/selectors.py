"""Reads over tickets: by key, open ones per service (the duplicate check), their decisions."""

from __future__ import annotations

from django.db.models import QuerySet

from copilot.models import Decision, Ticket

OPEN_STATUSES = (Ticket.Status.OPEN, Ticket.Status.IN_PROGRESS)


def ticket_get_by_key(*, key: str) -> Ticket | None:
    return Ticket.objects.filter(key__iexact=key.strip()).prefetch_related("comments").first()


def ticket_get_by_idempotency_key(*, idempotency_key: str) -> Ticket | None:
    return Ticket.objects.filter(idempotency_key=idempotency_key).first()


def ticket_list_open_for_service(*, service: str, limit: int = 10) -> QuerySet[Ticket]:
    """Open tickets of one service, newest first (uses copilot_ticket_service_status)."""
    return Ticket.objects.filter(service__iexact=service, status__in=OPEN_STATUSES).order_by(
        "-created_at", "-pk"
    )[:limit]


def decision_list_for_ticket(*, ticket: Ticket) -> QuerySet[Decision]:
    """The decisions recorded on a ticket, for its page."""
    return Decision.objects.filter(ticket=ticket).order_by("decided_at", "pk")
