"""503, not 500, while PostgreSQL or Redis cannot be reached.

`manage.py serve` restarts an embedded PostgreSQL or Redis that died; until
it is back every request that needs it failed with a 500 and a traceback
page, indefinitely when nothing restarted it. A lost connection is not a bug
of the page: the answer is 503 with `Retry-After`, a short HTML page for
people and the API's error body under /api/. Django's handler500 and the
DRF exception handler (`incidentdesk/api/errors.py`) both ask `is_unavailable`.
"""

from __future__ import annotations

import django.db
import psycopg
import redis.exceptions
from django.http import HttpResponse
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerError

RETRY_AFTER_SECONDS = 5
MESSAGE = "The database or Redis is unreachable; it is being restarted. Try again in a moment."

# SQLSTATE classes of a server that is gone or not accepting connections yet:
# 08 connection exception, 57P01-03 admin/crash shutdown, cannot connect now.
# Other OperationalErrors (deadlock, statement timeout) are real failures.
_DOWN_STATES = ("08", "57P")


def is_unavailable(exc: BaseException) -> bool:
    """True when `exc` (or what it wraps) says the database or Redis cannot be reached."""
    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return True
    if isinstance(exc, BrokerError | django.db.InterfaceError | psycopg.InterfaceError):
        return True  # the broker is Redis; InterfaceError: the connection is closed
    cause = exc.__cause__ if isinstance(exc, django.db.OperationalError) else exc
    if isinstance(cause, psycopg.OperationalError):
        return cause.sqlstate is None or cause.sqlstate.startswith(_DOWN_STATES)
    return False


def unavailable_page() -> HttpResponse:
    """The 503 page, rendered without the request's context (no user, no
    session): those need the database that is down."""
    page = render_to_string("503.html", {"message": MESSAGE, "retry": RETRY_AFTER_SECONDS})
    response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
