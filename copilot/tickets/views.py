"""The built-in tracker's ticket page. Thin: one selector, one template."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from copilot.tickets.selectors import decision_list_for_ticket, ticket_get_by_key


def ticket_detail(request: HttpRequest, key: str) -> HttpResponse:
    """A ticket with its comments and the decisions recorded on it.

    Any signed-in colleague may read it: tickets are how on-call shares an
    incident, unlike the conversation they were filed from.
    """
    ticket = ticket_get_by_key(key=key)
    if ticket is None:
        raise Http404(f"Ticket {key} not found.")
    context = {"ticket": ticket, "decisions": decision_list_for_ticket(ticket=ticket)}
    return render(request, "copilot/tickets/detail.html", context)
