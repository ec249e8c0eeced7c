"""How conversations, messages, golden examples and answers look in the API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from copilot.models import Conversation, GoldenExample, Message


class ConversationSerializer(serializers.ModelSerializer[Conversation]):
    class Meta:
        model = Conversation
        fields = ["id", "title", "created_at", "updated_at"]
        read_only_fields = fields


class ToolCallRequestSerializer(serializers.Serializer[Any]):
    id = serializers.CharField()
    name = serializers.CharField()
    arguments = serializers.DictField()


class MessageSerializer(serializers.ModelSerializer[Message]):
    """A stored message: the user's question, a tool's result or an answer."""

    tool_calls = ToolCallRequestSerializer(many=True, read_only=True)
    citations = serializers.ListField(child=serializers.CharField(), read_only=True)
    # Declared fields are popped from the class: `data` does not hide Serializer.data.
    data = serializers.DictField(  # type: ignore[assignment]
        read_only=True, help_text="Tool results as structured data."
    )
    # Declared for allow_blank: a read-only model field drops it, and the schema then
    # said "up" or "down" where a message without feedback sends "".
    feedback = serializers.ChoiceField(
        choices=Message.Feedback.choices, allow_blank=True, read_only=True
    )

    class Meta:
        model = Message
        fields = [
            "id", "role", "content", "tool_calls", "tool_call_id", "tool_name", "data",
            "citations", "is_complete", "feedback", "feedback_comment", "created_at", "run",
        ]  # fmt: skip
        read_only_fields = fields


class ConversationDetailSerializer(ConversationSerializer):
    messages = MessageSerializer(many=True, read_only=True)

    class Meta(ConversationSerializer.Meta):
        fields = [*ConversationSerializer.Meta.fields, "messages"]
        read_only_fields = fields


class GoldenExampleSerializer(serializers.ModelSerializer[GoldenExample]):
    is_embedded = serializers.SerializerMethodField(
        help_text="False until the background job has embedded the current question."
    )
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

    class Meta:
        model = GoldenExample
        fields = [
            "id", "question", "answer", "is_active", "source", "is_embedded", "created_by",
            "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_is_embedded(self, example: GoldenExample) -> bool:
        return not example.needs_embedding


class StepSerializer(serializers.Serializer[Any]):
    """One tool call of the answer (what the agent did, in order)."""

    tool = serializers.CharField()
    arguments = serializers.DictField()
    count = serializers.IntegerField(help_text="Results the tool returned.")
    ms = serializers.IntegerField(help_text="How long the tool took.")
    error = serializers.CharField(allow_blank=True)
