"""The built-in tracker: tickets live in our own tables, keyed DESK-1, DESK-2, ..."""

from __future__ import annotations

from django.db import connection
from django.urls import reverse

from copilot.models import TICKET_KEY_SEQUENCE, Ticket
from copilot.tickets.base import RemoteComment, RemoteTicket, TicketDraft

KEY_PREFIX = "DESK"


class BuiltinTracker:
    """Mints keys from a PostgreSQL sequence; the Ticket row is the ticket."""

    name = Ticket.Tracker.BUILTIN.value

    def create_issue(self, draft: TicketDraft) -> RemoteTicket:
        key = f"{KEY_PREFIX}-{_next_number()}"
        return RemoteTicket(key, reverse("ticket-detail", kwargs={"key": key}))

    def add_comment(self, key: str, body: str) -> RemoteComment:
        return RemoteComment("")

    def transition(self, key: str, status: str) -> None:
        return  # the row's status is the ticket's status


def _next_number() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(%s)", [TICKET_KEY_SEQUENCE])
        row = cursor.fetchone()
    if row is None:  # nextval always returns a row; this satisfies the type checker
        raise RuntimeError(f"{TICKET_KEY_SEQUENCE} returned nothing")
    return int(row[0])
