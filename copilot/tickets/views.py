"""Ticket pages: the list, a ticket, its status actions and its screenshot. Thin."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from copilot.models import Ticket
from copilot.tickets import selectors, services
from copilot.tickets.base import TrackerError
from incidentdesk.errors import IncidentDeskError, page_status


def _choice(request: HttpRequest, name: str, choices: list[str]) -> str:
    """A filter's value: "" (any) or one of `choices`; anything else is a 400."""
    value = request.GET.get(name, "")
    if value and value not in choices:
        raise _BadFilter(f"Unknown {name} {value!r}.")
    return value


class _BadFilter(Exception):
    pass


def ticket_list(request: HttpRequest) -> HttpResponse:
    """Tickets the user may see (staff: all), filtered by status, tracker and "mine"."""
    try:
        filters = selectors.TicketListFilters(
            status=_choice(request, "status", list(Ticket.Status.values)),
            tracker=_choice(request, "tracker", list(Ticket.Tracker.values)),
            mine=_choice(request, "mine", ["1"]) == "1",
        )
    except _BadFilter as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    tickets = selectors.ticket_list_for_user(user=request.user, filters=filters)[:200]
    context = {
        "tickets": tickets,
        "filters": filters,
        "statuses": Ticket.Status.choices,
        "trackers": Ticket.Tracker.choices,
    }
    return render(request, "copilot/tickets/list.html", context)


def _ticket_or_404(request: HttpRequest, key: str) -> Ticket:
    ticket = selectors.ticket_get_for_user(key=key, user=request.user)
    if ticket is None:
        raise Http404(f"Ticket {key} not found.")
    return ticket


def ticket_detail(request: HttpRequest, key: str, status: int = 200) -> HttpResponse:
    """A ticket with its status actions, screenshot, comments, decisions and conversation.

    Only the reporter (and whoever commented on it) and staff may open it:
    it quotes the report and its screenshot.
    """
    ticket = _ticket_or_404(request, key)
    conversation = ticket.conversation
    context = {
        "ticket": ticket,
        "decisions": selectors.decision_list_for_ticket(ticket=ticket),
        "screenshot": selectors.ticket_screenshot(ticket=ticket),
        "actions": services.ticket_actions(ticket=ticket),
        # A deleted conversation (awaiting purge) is gone for its owner too: no dead link.
        "conversation_is_yours": conversation is not None
        and conversation.deleted_at is None
        and conversation.owner_id == request.user.pk,
    }
    return render(request, "copilot/tickets/detail.html", context, status=status)


@require_POST
def ticket_status(request: HttpRequest, key: str) -> HttpResponse:
    """acknowledge | resolve | reopen, in the ticket's tracker (Jira) and here."""
    ticket = _ticket_or_404(request, key)
    action = request.POST.get("action", "")
    if action not in services.STATUS_ACTIONS:
        return HttpResponse("Unknown action.", status=400, content_type="text/plain")
    try:
        ticket = services.ticket_status_change(
            ticket=ticket,
            user=request.user,  # type: ignore[arg-type]  # LoginRequiredMiddleware: signed in
            action=action,
        )
    except TrackerError as exc:
        # Jira refused or failed: the ticket page again, unchanged, as a bad gateway.
        messages.error(request, f"{ticket.key} was not changed: {exc.message}")
        return ticket_detail(request, key, status=502)
    except IncidentDeskError as exc:
        messages.error(request, exc.message)
        return ticket_detail(request, key, status=page_status(exc))
    messages.success(request, f"{ticket.key} is {ticket.get_status_display().lower()}.")
    return redirect("ticket-detail", key=ticket.key)


def ticket_screenshot(request: HttpRequest, key: str) -> FileResponse:
    """The report's screenshot, to the same people as the ticket; a 404 for anyone else."""
    ticket = _ticket_or_404(request, key)
    shot = selectors.ticket_screenshot(ticket=ticket)
    if shot is None:
        raise Http404("This ticket has no screenshot.")
    response = FileResponse(shot.image.open("rb"), content_type=shot.content_type)
    response["Cache-Control"] = "private, max-age=3600"
    extension = "png" if shot.content_type == "image/png" else "jpg"
    response["Content-Disposition"] = f'inline; filename="{ticket.key}.{extension}"'
    return response
