"""Django's ASGI handler, closing a response whose client left while its view ran.

When the client disconnects before the response is sent, Django cancels the
wait for the view. A sync view runs on in its thread, returns its response,
and Django drops it unsent without calling `close()` (it closes only a
response it holds: ticket 35059). Whatever the response holds until its
close stayed held: a chat stream (`POST /api/chat/`, `Accept:
text/event-stream`) holds its user's one running answer, so her next
question was refused with 429 until the turn expired (CHAT_RUN_LOCK_SECONDS,
300 s).

Under daphne, `leave_request_bodies_to_django` also stops twisted parsing every
POST form into arguments daphne never reads: twisted answered a multipart body
its parser could not split (an empty one, `--boundary--`) with a bare 400, no
body and no content type, before the request reached Django and its error
format; and it held a second parsed copy of every upload.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

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


def leave_request_bodies_to_django() -> bool:
    """Create daphne's requests with twisted's `parsePOSTFormSubmission=False`.

    True when daphne runs this process (it imports its protocol module before
    the application); other ASGI servers do not parse bodies for themselves.
    tests/test_daphne_requests.py sends the bodies twisted refused to a real daphne.
    """
    module = sys.modules.get("daphne.http_protocol")
    if module is None:
        return False
    request_class: Any = module.WebRequest
    if getattr(request_class.__init__, "leaves_bodies", False):
        return True
    create = request_class.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parsePOSTFormSubmission", False)  # Django parses the body
        create(self, *args, **kwargs)

    __init__.leaves_bodies = True  # type: ignore[attr-defined]
    request_class.__init__ = __init__
    return True
