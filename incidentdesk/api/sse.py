"""Server-sent events: the copilot's events as `event: <type>` / `data: <json>` frames."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

from copilot.events import Event

MEDIA_TYPE = "text/event-stream"
# One frame, as OpenAPI 3.0 documents an event stream (`schema` describes each event,
# read as its SSE fields): its `event:` line names the type, its `data:` is the event's
# JSON. Declared as a plain string, every frame was off the schema.
FRAME_SCHEMA = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": [kind.type for kind in Event.__subclasses__()]},
        "data": {"type": "string", "description": "The event as JSON, its `type` first."},
    },
}


class EventStreamRenderer(BaseRenderer):
    """Lets `Accept: text/event-stream` through content negotiation.

    Views stream the events themselves (`event_stream_response`); a plain
    Response rendered with it is sent as one `data:` frame.
    """

    media_type = MEDIA_TYPE
    format = "sse"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> Any:
        return f"data: {json.dumps(data, cls=DjangoJSONEncoder)}\n\n".encode()


def sse_frame(event: Event) -> bytes:
    message = event.to_message()
    data = json.dumps(message, cls=DjangoJSONEncoder)
    return f"event: {message['type']}\ndata: {data}\n\n".encode()


def event_stream_response(request: HttpRequest, events: Iterator[Event]) -> StreamingHttpResponse:
    """Stream `events` as SSE, each frame sent as soon as it is yielded."""
    frames = _Frames(events)
    django_request = getattr(request, "_request", request)  # a DRF Request wraps it
    # Under ASGI (daphne) Django would read a sync iterator to the end before
    # sending anything; pulling it step by step keeps the stream live.
    content: Any = _AsyncFrames(frames) if isinstance(django_request, ASGIRequest) else frames
    response = StreamingHttpResponse(content, content_type=MEDIA_TYPE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # tell nginx-style proxies not to buffer
    return response


class _Frames(Iterator[bytes]):
    """Frames of `events`; closing it closes `events` (the agent stops and records
    why, the user's turn is freed), even before the first frame: a generator here,
    closed unstarted, closed nothing."""

    def __init__(self, events: Iterator[Event]) -> None:
        self._events = events

    def __next__(self) -> bytes:
        return sse_frame(next(self._events))

    def close(self) -> None:
        close = getattr(self._events, "close", None)
        if close:
            close()


def _advance(frames: Iterator[bytes]) -> bytes | None:
    return next(frames, None)


class _AsyncFrames:
    """An async iterator over a sync one, advanced in Django's sync thread.

    The agent behind the events uses the ORM, which must run in that thread.
    `close()` (called by Django when the client goes away) stops the agent.
    """

    def __init__(self, frames: Iterator[bytes]) -> None:
        self._frames = frames
        self._next = sync_to_async(_advance, thread_sensitive=True)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        frame = await self._next(self._frames)
        if frame is None:
            raise StopAsyncIteration
        return frame

    def close(self) -> None:
        close = getattr(self._frames, "close", None)
        if close:
            close()
