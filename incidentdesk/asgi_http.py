"""Django's ASGI handler, closing a response whose client left while its view ran.

When the client disconnects before the response is sent, Django cancels the
wait for the view. A sync view runs on in its thread, returns its response,
and Django drops it unsent without calling `close()` (it closes only a
response it holds: ticket 35059). Whatever the response holds until its
close stayed held: a chat stream (`POST /api/chat/`, `Accept:
text/event-stream`) holds its user's one running answer, so her next
question was refused with 429 until the turn expired (CHAT_RUN_LOCK_SECONDS,
300 s).
"""

from __future__ import annotations

import asyncio
import logging

import django
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)
_CLOSING: set[asyncio.Future[None]] = set()  # closes under way, kept from the collector


class ClosingASGIHandler(ASGIHandler):
    async def run_get_response(self, request: HttpRequest) -> HttpResponseBase:
        getting = asyncio.ensure_future(super().run_get_response(request))
        try:
            return await asyncio.shield(getting)
        except asyncio.CancelledError:
            # A callback, not an await here: daphne cancels again, the view still
            # running, once the client has been gone for its application_close_timeout.
            getting.add_done_callback(_close_response)
            raise


def _close_response(getting: asyncio.Future[HttpResponseBase]) -> None:
    """Close, on a worker thread, the response of a view whose client left."""
    if getting.cancelled() or getting.exception() is not None:
        return  # no response (get_response_async turns a view's errors into responses)
    closing = asyncio.get_running_loop().run_in_executor(None, getting.result().close)
    _CLOSING.add(closing)
    closing.add_done_callback(_closed)


def _closed(closing: asyncio.Future[None]) -> None:
    _CLOSING.discard(closing)
    if not closing.cancelled() and (error := closing.exception()) is not None:
        logger.error("closing the response of a client that left failed", exc_info=error)


def get_asgi_application() -> ClosingASGIHandler:
    """django.core.asgi.get_asgi_application, with the handler above."""
    django.setup(set_prefix=False)
    return ClosingASGIHandler()
