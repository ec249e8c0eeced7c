"""The one error format of the API: `{"error": {"code", "message", "fields"}}`.

Every failure ends here: the project's IncidentDeskError family, Django's
ValidationError, PermissionDenied and Http404, DRF's own exceptions, a lost
database or Redis (503 with Retry-After, `incidentdesk/unavailable.py`), and
unexpected ones (logged, then a 500 in the same shape).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response

from incidentdesk.errors import (
    ConflictError,
    IncidentDeskError,
    NotFoundError,
    RateLimitedError,
    UnavailableError,
    ValidationError,
)
from incidentdesk.unavailable import MESSAGE, RETRY_AFTER_SECONDS, is_unavailable, unavailable_page

logger = logging.getLogger(__name__)

# Most specific first: the subclasses before their base.
_PROJECT_ERRORS: list[tuple[type[IncidentDeskError], int, str]] = [
    (NotFoundError, status.HTTP_404_NOT_FOUND, "not_found"),
    (ValidationError, status.HTTP_400_BAD_REQUEST, "invalid"),
    (ConflictError, status.HTTP_409_CONFLICT, "conflict"),
    (RateLimitedError, status.HTTP_429_TOO_MANY_REQUESTS, "throttled"),
    (UnavailableError, status.HTTP_503_SERVICE_UNAVAILABLE, "unavailable"),
    (IncidentDeskError, status.HTTP_400_BAD_REQUEST, "rejected"),
]


def error_body(code: str, message: str, fields: dict[str, list[str]] | None = None) -> Any:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: translate any exception into the error format."""
    if isinstance(exc, IncidentDeskError):
        return _project_error(exc)
    if is_unavailable(exc):
        return Response(error_body("unavailable", MESSAGE), status=503, headers=_RETRY_HEADERS)
    if isinstance(exc, DjangoValidationError):
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"non_field": exc.messages}
        return Response(error_body("invalid", "Invalid input.", fields), status=400)
    if isinstance(exc, BadRequest | SuspiciousOperation):
        # Too many fields, a body over the limit: the caller's fault, not a 500.
        return Response(error_body("invalid", _bad_request_message(exc)), status=400)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.APIException):
        return _api_error(exc)
    logger.exception("unexpected error in %s", context.get("view").__class__.__name__)
    return Response(error_body("server_error", "Internal server error."), status=500)


def _project_error(exc: IncidentDeskError) -> Response:
    status_code, code = next((s, c) for kind, s, c in _PROJECT_ERRORS if isinstance(exc, kind))
    fields = _field_messages(exc.extra) if isinstance(exc, ValidationError) else {}
    retry_after = exc.extra.get("retry_after") if isinstance(exc, RateLimitedError) else None
    headers = {"Retry-After": str(int(retry_after))} if retry_after else None
    return Response(error_body(code, exc.message, fields), status=status_code, headers=headers)


def _api_error(exc: exceptions.APIException) -> Response:
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = str(exc.auth_header)  # type: ignore[attr-defined]
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]
    if isinstance(exc, exceptions.ValidationError):
        fields = _field_messages(exc.detail)
        body = error_body("invalid", _first_problem(fields), fields)
    else:
        body = error_body(str(exc.default_code), str(exc.detail))
    return Response(body, status=exc.status_code, headers=headers)


def _first_problem(fields: dict[str, list[str]]) -> str:
    """The message names the first bad field, so a log line alone says what to fix."""
    name, messages = next(iter(fields.items()), ("", [""]))
    return f"Invalid input: {name}: {messages[0]}" if name else "Invalid input."


def _field_messages(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested detail (dicts, lists, strings) as flat `field: [messages]`."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for name, value in detail.items():
            key = f"{prefix}.{name}" if prefix else str(name)
            flat |= _field_messages(value, key)
        return flat
    if isinstance(detail, list | tuple):
        if all(isinstance(item, str) for item in detail):
            return {prefix or "non_field": [str(item) for item in detail]}
        flat = {}
        for index, item in enumerate(detail):
            flat |= _field_messages(item, f"{prefix}.{index}" if prefix else str(index))
        return flat
    return {prefix or "non_field": [str(detail)]}


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: an unknown URL under /api/ answers in the error format, pages as usual."""
    if request.path.startswith("/api/"):
        body = error_body("not_found", f"No endpoint at {request.path}.")
        return JsonResponse(body, status=404)
    return defaults.page_not_found(request, exception)


def _bad_request_message(exc: Exception) -> str:
    return f"Bad request: {exc}" if str(exc) else "Bad request."


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: a request refused before any view (too many fields, a body too large)
    answers in the error format under /api/, with the 400 page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("invalid", _bad_request_message(exception)), status=400)
    return defaults.bad_request(request, exception)


_RETRY_HEADERS = {"Retry-After": str(RETRY_AFTER_SECONDS)}


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: 503 with Retry-After when the exception being handled is a lost
    database or Redis (raised in a view or any middleware), else the usual 500.

    Django calls this inside its `except` block, so `sys.exc_info()` is the exception.
    """
    if not is_unavailable(sys.exc_info()[1] or Exception()):
        return defaults.server_error(request)
    wants_json = "application/json" in request.headers.get("Accept", "")
    if request.path_info.startswith("/api/") or wants_json:
        body = error_body("unavailable", MESSAGE)
        return JsonResponse(body, status=503, headers=_RETRY_HEADERS)
    return unavailable_page()
