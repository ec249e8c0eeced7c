"""The chat websocket: one browser tab talking to one conversation (STYLE rule 9)."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import ThreadSensitiveContext, async_to_sync
from channels.generic.websocket import JsonWebsocketConsumer

from copilot import asking, selectors, services, streaming
from copilot.models import Conversation
from incidentdesk import errors


class ChatConsumer(JsonWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    """Streams the answers to questions asked here, and to the conversation's
    group, so another tab (or this one after a reload) sees the rest too."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # Channels runs every sync consumer on one shared thread; a context per
        # socket gives each its own, so one user's answer never waits on another's.
        async with ThreadSensitiveContext():
            await super().__call__(scope, receive, send)

    def connect(self) -> None:
        if not self.scope["user"].is_authenticated:
            self.close()
            return
        try:
            conversation = self.conversation()
        except errors.NotFoundError:
            self.close()
            return
        self.conversation_id = conversation.pk
        self.group = f"conversation-{conversation.pk}"
        async_to_sync(self.channel_layer.group_add)(self.group, self.channel_name)
        asking.listener_join(conversation_id=conversation.pk)
        self.accept()

    def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):  # accepted
            asking.listener_leave(conversation_id=self.conversation_id)
            async_to_sync(self.channel_layer.group_discard)(self.group, self.channel_name)

    @classmethod
    def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except ValueError:  # answered by receive_json like any other bad payload
            return None

    def conversation(self) -> Conversation:
        """Read at each question: a rename or delete in another tab must count."""
        wanted = self.scope["url_route"]["kwargs"]["conversation_id"]
        return selectors.conversation_get_for_user(conversation_id=wanted, user=self.scope["user"])

    def receive_json(self, content: Any, **kwargs: Any) -> None:
        user = self.scope["user"]
        try:
            text = asking.ask_text(content)
            asking.question_count_take(user_id=user.pk)
            conversation = self.conversation()
            with asking.conversation_claimed(conversation_id=conversation.pk):
                events = services.conversation_reply(
                    conversation=conversation, user=user, text=text
                )
                for event in streaming.merged_tokens(events):
                    self.publish(event.to_message())
        except errors.IncidentDeskError as exc:
            self.send_json(asking.error_event(exc).to_message())

    def publish(self, message: dict[str, Any]) -> None:
        self.send_json(message)
        if not asking.others_listening(conversation_id=self.conversation_id):
            return
        async_to_sync(self.channel_layer.group_send)(
            self.group, {"type": "chat.event", "event": message, "origin": self.channel_name}
        )

    def chat_event(self, message: dict[str, Any]) -> None:
        """An event of an answer another socket is running in this conversation."""
        if message["origin"] != self.channel_name:
            self.send_json(message["event"])
