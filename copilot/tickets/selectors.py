"""Reads over tickets: by key, open ones per service (the duplicate check), their decisions."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet
from django.urls import reverse

from copilot.models import Decision, ReportScreenshot, Ticket, TicketComment

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


def ticket_url(*, ticket: Ticket) -> str:
    """Where people open the ticket: Jira's page, or ours."""
    return ticket.external_url or reverse("ticket-detail", kwargs={"key": ticket.key})


def decision_list_for_ticket(*, ticket: Ticket) -> QuerySet[Decision]:
    """The decisions recorded on a ticket, for its page."""
    return Decision.objects.filter(ticket=ticket).order_by("decided_at", "pk")


def _visible_to(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Ticket]:
    """Staff see every ticket; others the ones they filed, whose conversation is theirs,
    or that they commented on (a second report of the same problem comments on the
    first reporter's ticket, and its author follows it from then on)."""
    tickets = Ticket.objects.all()
    if getattr(user, "is_staff", False):
        return tickets
    commented = TicketComment.objects.filter(author_id=user.pk).values("ticket_id")
    return tickets.filter(
        Q(created_by_id=user.pk) | Q(conversation__owner_id=user.pk) | Q(pk__in=commented)
    )


@dataclass(frozen=True)
class TicketListFilters:
    """The ticket list's filters: "" is any; `mine` narrows staff to their own."""

    status: str = ""
    tracker: str = ""
    mine: bool = False


def ticket_list_for_user(
    *, user: AbstractBaseUser | AnonymousUser, filters: TicketListFilters
) -> QuerySet[Ticket]:
    """The tickets this user may see, filtered, newest first, with who filed them."""
    tickets = _visible_to(user).select_related("created_by", "conversation")
    if filters.status:
        tickets = tickets.filter(status=filters.status)
    if filters.tracker:
        tickets = tickets.filter(tracker=filters.tracker)
    if filters.mine:
        tickets = tickets.filter(Q(created_by_id=user.pk) | Q(conversation__owner_id=user.pk))
    return tickets.order_by("-created_at", "-pk")


def ticket_get_for_user(*, key: str, user: AbstractBaseUser | AnonymousUser) -> Ticket | None:
    """One ticket by key (any case) if this user may see it, else None (a 404: no hint)."""
    return (
        _visible_to(user)
        .filter(key__iexact=key.strip())
        .select_related("created_by", "conversation")
        .prefetch_related("comments__author")
        .first()
    )


def ticket_screenshot(*, ticket: Ticket) -> ReportScreenshot | None:
    """The screenshot of the report the ticket was filed for, if it had one."""
    if ticket.report_message_id is None:
        return None
    return ReportScreenshot.objects.filter(message_id=ticket.report_message_id).first()
