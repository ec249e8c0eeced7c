"""503, not 500, while PostgreSQL or Redis cannot be reached.

`manage.py serve` restarts an embedded PostgreSQL or Redis that died; until
it is back every request that needs it failed with a 500 and a traceback
page, indefinitely when nothing restarted it. A lost connection is not a bug
of the page: the answer is 503 with `Retry-After`, a short HTML page for
people and the API's error body under /api/. Django's handler500 and the
DRF exception handler (`incidentdesk/api/errors.py`) both ask `is_unavailable`.
The chat websocket has no status code: `UnavailableWebsocket` answers its
handshake or message with an `error` event and closes it cleanly instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import django.db
import psycopg
import redis.exceptions
from django.http import HttpResponse
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerError

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5
MESSAGE = "The database or Redis is unreachable; it is being restarted. Try again in a moment."
SOCKET_MESSAGE = f"The service is temporarily unavailable; retry in {RETRY_AFTER_SECONDS} s."
# The websocket's 503, in the range RFC 6455 leaves to applications (4000 +
# the HTTP status). Chosen while daphne's autobahn turned the registry's 1013
# "Try Again Later" into a 1011 "internal error" (it sends 1013 now:
# incidentdesk/websocket_close.py); kept, as documented and sent by any server.
CLOSE_UNAVAILABLE = 4503

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


Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class UnavailableWebsocket:
    """ASGI middleware around the websocket stack: a lost database or Redis, in the
    handshake (the session read by AuthMiddleware, the consumer's `connect`) or in
    a message, is an `error` event (code `unavailable`) and a close with 4503.

    Without it the handshake failed with a 500 and an open socket closed with
    1011 and a traceback in the log. Here, outside the consumer, one guard sees
    every place the socket touches PostgreSQL or Redis, the channel layer included.
    """

    def __init__(self, inner: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        socket = _SocketState(receive, send)
        try:
            await self.inner(scope, socket.receive, socket.send)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            logger.warning("websocket %s refused: %s", scope.get("path"), exc)
            await socket.refuse()


class _SocketState:
    """What the application has received and sent, to end the socket properly."""

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive, self._send = receive, send
        self.connected = self.accepted = self.closed = False

    async def receive(self) -> dict[str, Any]:
        message = await self._receive()
        self.connected |= message["type"] == "websocket.connect"
        self.closed |= message["type"] == "websocket.disconnect"
        return message

    async def send(self, message: dict[str, Any]) -> None:
        self.accepted |= message["type"] == "websocket.accept"
        self.closed |= message["type"] == "websocket.close"
        await self._send(message)

    async def refuse(self) -> None:
        """Accept if need be (only an accepted socket can carry the event), say
        why, and close; nothing when the socket is already closed."""
        if not self.connected and not self.closed:
            await self.receive()  # the handshake the failing middleware never read
        if self.closed:
            return
        if not self.accepted:
            await self.send({"type": "websocket.accept"})
        event = {"type": "error", "message": SOCKET_MESSAGE, "code": "unavailable"}
        await self.send({"type": "websocket.send", "text": json.dumps(event)})
        await self.send({"type": "websocket.close", "code": CLOSE_UNAVAILABLE})
