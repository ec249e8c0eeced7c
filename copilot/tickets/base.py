"""The interface every ticket tracker implements (`trackers.get_tracker` picks one).

A tracker only talks to where tickets live (our tables' key sequence, or
Jira's REST API); `copilot.tickets.services` keeps the local rows, the
idempotency and the comments, whichever tracker it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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
