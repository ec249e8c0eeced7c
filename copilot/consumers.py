"""The chat websocket: one browser tab talking to one conversation.

Async, departing from STYLE rule 9's sync consumer: answers run on a small shared
thread pool (`asking.answer_question`), one per user at a time (`asking.user_turn`),
so a socket holds no thread (bench/ws_bench.py). No prompts, clients or queries here.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from copilot import asking, streaming
from incidentdesk.unavailable import is_unavailable

# A few answering threads, not one per socket: fifty took turns on the GIL (ws_bench).
_ANSWERS = ThreadPoolExecutor(settings.CHAT_ANSWER_THREADS, thread_name_prefix="chat-answer")
_answer_question = sync_to_async(asking.answer_question, thread_sensitive=False, executor=_ANSWERS)
_join = database_sync_to_async(asking.conversation_join)
_leave = database_sync_to_async(asking.listener_leave)


class ChatConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    """Streams the answers to questions asked here, and to the conversation's
    group, so another tab (or this one after a reload) sees the rest too."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The socket stops being counted however it ends. `disconnect()` runs only when
        daphne reports a close, not after PostgreSQL or Redis went down (UnavailableWebsocket
        closes with 4503), a bug (1011), or daphne cancelling an answer still running
        10 s after its client left."""
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.stop_listening()

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' own, without its `aclose_old_connections()` before every message:
        a trip to the one thread-sensitive thread at every question, which fifty
        sockets queued on (ws_bench), for connections this consumer never holds
        there (`_join` and `_leave` close theirs; answers close theirs on their thread)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        wanted = self.scope["url_route"]["kwargs"]["conversation_id"]
        self.conversation_id = await _join(self.scope["user"], wanted, self.channel_name)
        if self.conversation_id is None:
            await self.close()
            return
        self.group = f"conversation-{self.conversation_id}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def stop_listening(self) -> None:
        if getattr(self, "conversation_id", None) is None:  # refused, or never connected
            return
        await _leave(conversation_id=self.conversation_id, socket=self.channel_name)
        try:  # Redis down: the group keeps a dead member, sent to in vain, until it expires
            await self.channel_layer.group_discard(self.group, self.channel_name)
        except Exception as exc:
            if not is_unavailable(exc):
                raise

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        try:  # JSON that is no question is answered by receive_json like any other
            content = asking.frame_payload(text_data, bytes_data)
        except asking.FrameRejected as exc:
            await self.send_json(asking.error_event(exc).to_message())
            await self.close(code=exc.close_code)
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        user = self.scope["user"]
        async with asking.user_turn(user_id=user.pk, payload=content, waiting=self.send_json):
            outbox = streaming.Outbox(asyncio.get_running_loop())
            answering = asyncio.ensure_future(_answer_question(
                user=user, conversation_id=self.conversation_id, payload=content, post=outbox.post
            ))  # fmt: skip
            async for message, relay in outbox.messages():
                await self.publish(message, relay)
            await answering  # a crash on the thread surfaces here

    async def publish(self, message: dict[str, Any], relay: bool) -> None:
        await self.send_json(message)
        if relay:
            await self.channel_layer.group_send(
                self.group, {"type": "chat.event", "event": message, "origin": self.channel_name}
            )

    async def chat_event(self, message: dict[str, Any]) -> None:
        """An event of an answer another socket is running in this conversation."""
        if message["origin"] != self.channel_name:
            await self.send_json(message["event"])
