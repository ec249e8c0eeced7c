"""The interface every ticket tracker implements, and the one that is configured.

A tracker only talks to where tickets live (our tables' key sequence, or
Jira's REST API); `copilot.tickets.services` keeps the local rows, the
idempotency and the comments, whichever tracker it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

from incidentdesk.errors import IncidentDeskError


@dataclass(frozen=True)
class TicketDraft:
    """What a new ticket says; `labels` help find it in the tracker."""

    title: str
    description: str
    severity: str
    service: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class RemoteTicket:
    key: str
    url: str
    status: str = "open"


@dataclass(frozen=True)
class RemoteComment:
    external_id: str  # "" for the built-in tracker: the row's own id is the id


class TrackerError(IncidentDeskError):
    """The tracker refused or failed. `kind`: auth, rejected, timeout or unavailable."""

    def __init__(self, message: str, *, kind: str = "unavailable") -> None:
        super().__init__(message, {"kind": kind})
        self.kind = kind


class Tracker(Protocol):
    name: str  # a Ticket.Tracker value

    def create_issue(self, draft: TicketDraft) -> RemoteTicket:
        """File the ticket; raises TrackerError with a reason fit for the user."""
        ...

    def add_comment(self, key: str, body: str) -> RemoteComment:
        """Comment on ticket `key`; raises TrackerError."""
        ...

    def transition(self, key: str, status: str) -> None:
        """Move ticket `key` to `status` (a Ticket.Status value); raises TrackerError."""
        ...


def get_tracker(name: str | None = None) -> Tracker:
    """The tracker holding tickets named `name`, else the configured one.

    JIRA_URL switches Jira on (settings then require the rest); without it
    tickets stay in the built-in tracker.
    """
    # A real cycle: both trackers import this module's interface.
    from copilot.tickets.builtin import BuiltinTracker
    from copilot.tickets.jira import JiraTracker

    wanted = name or ("jira" if settings.JIRA_URL else "builtin")
    if wanted == "builtin":
        return BuiltinTracker()
    if not settings.JIRA_URL:
        raise TrackerError("This ticket is in Jira, and Jira is no longer configured.")
    return JiraTracker.from_settings()
