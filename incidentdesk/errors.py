"""The project's one error base, translated by the API and the consumer alike."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied


class IncidentDeskError(Exception):
    """An expected failure with a message fit to show the user.

    `extra` carries structured detail (field names, row errors) for the API.
    """

    def __init__(self, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class NotFoundError(IncidentDeskError):
    """The object does not exist, or is not the caller's to see (no leak either way)."""


class ValidationError(IncidentDeskError):
    """Input that cannot be used; `extra` names the fields and reasons."""


class ConflictError(IncidentDeskError):
    """The request clashes with the current state (e.g. a run already in progress)."""


class RateLimitedError(IncidentDeskError):
    """The caller asked too often; `extra["retry_after"]` says how many seconds to wait."""


class UnavailableError(IncidentDeskError):
    """Something the answer depends on (the chat model) failed; trying again may work."""


class StaffOnlyError(PermissionDenied):
    """Only staff may do this (curation: validating documents, reviewing reports)."""


def page_status(exc: IncidentDeskError) -> int:
    """The HTTP status a server-rendered page answers with when a service refuses:
    the caller's input is a 4xx (as in the API's handler), never a 200 or a redirect."""
    statuses = [(NotFoundError, 404), (ConflictError, 409), (RateLimitedError, 429)]
    return next((code for kind, code in statuses if isinstance(exc, kind)), 400)
