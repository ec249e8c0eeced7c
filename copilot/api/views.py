"""Conversation, feedback, golden-example and chat endpoints. One view per operation.

Conversations are their owner's only: anyone else's is a 404, never a 403,
so ids reveal nothing. Golden examples are for staff.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from copilot import asking, replies, selectors, services
from copilot.api.serializers import (
    ConversationDetailSerializer,
    ConversationSerializer,
    GoldenExampleSerializer,
    MessageSerializer,
    StepSerializer,
)
from copilot.filtersets import GoldenExampleFilter
from copilot.models import GoldenExample, Message
from incidentdesk.api import inputs
from incidentdesk.api.auth import current_user
from incidentdesk.api.pagination import paginated_response
from incidentdesk.api.schema import conflict, filter_parameters, paginated
from incidentdesk.api.sse import (
    FRAME_SCHEMA,
    MEDIA_TYPE,
    EventStreamRenderer,
    event_stream_response,
)

CONVERSATIONS = ["conversations"]
GOLDEN = ["golden examples (staff)"]
CHAT = ["chat"]


# --- conversations (own only) ---------------------------------------------------------


class ConversationListApi(APIView):
    @extend_schema(
        operation_id="conversations_list",
        tags=CONVERSATIONS,
        summary="Your conversations, most recently active first",
        parameters=[
            OpenApiParameter(
                "q", str, description="Full-text search over titles and messages (word prefixes)."
            )
        ],
        responses=paginated(ConversationSerializer, "PaginatedConversationList"),
    )
    def get(self, request: Request) -> Response:
        query = str(request.query_params.get("q", ""))[:200]
        return paginated_response(
            queryset=selectors.conversation_list_for_user(user=current_user(request), query=query),
            serializer_class=ConversationSerializer,
            request=request,
            view=self,
        )


class ConversationDetailApi(APIView):
    @extend_schema(
        operation_id="conversations_retrieve",
        tags=CONVERSATIONS,
        summary="One of your conversations with every message",
        responses=ConversationDetailSerializer,
    )
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.conversation_get_for_user(
            conversation_id=conversation_id, user=current_user(request)
        )
        messages = selectors.conversation_messages(conversation=conversation)
        data = ConversationSerializer(conversation).data
        return Response({**data, "messages": MessageSerializer(messages, many=True).data})


class ConversationRenameApi(APIView):
    class InputSerializer(inputs.InputSerializer):
        title = serializers.CharField(max_length=200)

        class Meta:
            ref_name = "ConversationRename"

    @extend_schema(
        operation_id="conversations_partial_update",
        tags=CONVERSATIONS,
        summary="Rename one of your conversations",
        request=InputSerializer,
        responses=ConversationSerializer,
    )
    def patch(self, request: Request, conversation_id: int) -> Response:
        # Partial, as PATCH is (and as the schema says): no title, nothing to change.
        data = self.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        conversation = selectors.conversation_get_for_user(
            conversation_id=conversation_id, user=current_user(request)
        )
        if "title" in data.validated_data:
            conversation = services.conversation_rename(
                conversation=conversation,
                user=current_user(request),
                title=data.validated_data["title"],
            )
        return Response(ConversationSerializer(conversation).data)


class ConversationDeleteApi(APIView):
    @extend_schema(
        operation_id="conversations_destroy",
        tags=CONVERSATIONS,
        summary="Delete one of your conversations (restorable until purged)",
        responses={204: None},
    )
    def delete(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.conversation_get_for_user(
            conversation_id=conversation_id, user=current_user(request)
        )
        services.conversation_delete(conversation=conversation, user=current_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConversationRestoreApi(APIView):
    @extend_schema(
        operation_id="conversations_restore",
        tags=CONVERSATIONS,
        summary="Undo the delete of one of your conversations (before it is purged)",
        request=None,
        responses=ConversationSerializer,
    )
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.conversation_get_deleted_for_user(
            conversation_id=conversation_id, user=current_user(request)
        )
        conversation = services.conversation_restore(
            conversation=conversation, user=current_user(request)
        )
        return Response(ConversationSerializer(conversation).data)


class ConversationCancelApi(APIView):
    class OutputSerializer(serializers.Serializer[Any]):
        cancelled = serializers.IntegerField(help_text="Running answers asked to stop.")

        class Meta:
            ref_name = "ConversationCancel"

    @extend_schema(
        operation_id="conversations_cancel",
        tags=CONVERSATIONS,
        summary="Stop the answer being written in one of your conversations",
        request=None,
        responses=OutputSerializer,
    )
    def post(self, request: Request, conversation_id: int) -> Response:
        conversation = selectors.conversation_get_for_user(
            conversation_id=conversation_id, user=current_user(request)
        )
        cancelled = services.agent_run_cancel(conversation=conversation, user=current_user(request))
        return Response(self.OutputSerializer({"cancelled": cancelled}).data)


class MessageFeedbackApi(APIView):
    class InputSerializer(inputs.InputSerializer):
        feedback = serializers.ChoiceField(
            choices=["", *Message.Feedback.values], help_text='"up", "down", or "" to clear.'
        )
        comment = serializers.CharField(max_length=4000, required=False, allow_blank=True)

        class Meta:
            ref_name = "MessageFeedback"

    @extend_schema(
        operation_id="messages_feedback",
        tags=CONVERSATIONS,
        summary="Thumbs up or down on an answer of yours (down: it goes to the review queue)",
        request=InputSerializer,
        responses=MessageSerializer,
    )
    def post(self, request: Request, message_id: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        message = selectors.answer_get_for_user(message_id=message_id, user=current_user(request))
        message = services.message_feedback_set(
            message=message,
            user=current_user(request),
            feedback=data.validated_data["feedback"],
            comment=data.validated_data.get("comment", ""),
        )
        return Response(MessageSerializer(message).data)


# --- golden examples (staff) ------------------------------------------------------------


class GoldenExampleInputSerializer(inputs.InputSerializer):
    question = serializers.CharField(max_length=4000)
    answer = serializers.CharField(max_length=20000)
    is_active = inputs.StrictBooleanField(required=False, default=True)
    source = serializers.ChoiceField(  # type: ignore[assignment]  # a field, not Field.source
        choices=GoldenExample.Source.choices, required=False, default=GoldenExample.Source.CURATED
    )


class GoldenExampleListApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="golden_examples_list",
        tags=GOLDEN,
        summary="List golden examples, most recently changed first",
        parameters=filter_parameters(GoldenExampleFilter),
        responses=paginated(GoldenExampleSerializer, "PaginatedGoldenExampleList"),
    )
    def get(self, request: Request) -> Response:
        return paginated_response(
            queryset=selectors.golden_example_list(filters=request.query_params),
            serializer_class=GoldenExampleSerializer,
            request=request,
            view=self,
        )


class GoldenExampleCreateApi(APIView):
    permission_classes = [IsAdminUser]
    InputSerializer = GoldenExampleInputSerializer

    @extend_schema(
        operation_id="golden_examples_create",
        tags=GOLDEN,
        summary="Add a verified question and answer (embedded in the background)",
        request=InputSerializer,
        responses={201: GoldenExampleSerializer, **conflict()},  # a question taken
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        example = services.golden_example_create(user=current_user(request), **data.validated_data)
        return Response(GoldenExampleSerializer(example).data, status=status.HTTP_201_CREATED)


class GoldenExampleDetailApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="golden_examples_retrieve",
        tags=GOLDEN,
        summary="One golden example",
        responses=GoldenExampleSerializer,
    )
    def get(self, request: Request, example_id: int) -> Response:
        example = selectors.golden_example_get(example_id=example_id)
        return Response(GoldenExampleSerializer(example).data)


class GoldenExampleUpdateApi(APIView):
    permission_classes = [IsAdminUser]

    class InputSerializer(GoldenExampleInputSerializer):
        class Meta:
            ref_name = "GoldenExampleUpdate"

    @extend_schema(
        operation_id="golden_examples_partial_update",
        tags=GOLDEN,
        summary="Change a golden example (a new question is re-embedded)",
        request=InputSerializer,
        responses={200: GoldenExampleSerializer, **conflict()},  # a question taken
    )
    def patch(self, request: Request, example_id: int) -> Response:
        data = self.InputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        example = selectors.golden_example_get(example_id=example_id)
        example = services.golden_example_update(example=example, **data.validated_data)
        return Response(GoldenExampleSerializer(example).data)


class GoldenExampleDeleteApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="golden_examples_destroy",
        tags=GOLDEN,
        summary="Delete a golden example",
        responses={204: None},
    )
    def delete(self, request: Request, example_id: int) -> Response:
        services.golden_example_delete(example=selectors.golden_example_get(example_id=example_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- chat ------------------------------------------------------------------------------------

_SSE_EXAMPLE = (
    'event: status\ndata: {"type": "status", "text": "Analyzing your request... please hold on."}'
    '\n\nevent: token\ndata: {"type": "token", "text": "INC-2025-03-04-001 ..."}\n\n'
    'event: done\ndata: {"type": "done", "conversation_id": 7, "message_id": 42, ...}\n\n'
)


class ChatApi(APIView):
    """Ask the copilot. JSON by default; `Accept: text/event-stream` streams its events."""

    throttle_scope = "chat"
    renderer_classes = [JSONRenderer, EventStreamRenderer]

    class InputSerializer(inputs.InputSerializer):
        conversation_id = serializers.IntegerField(
            required=False, allow_null=True, min_value=1, help_text="Default: a new conversation."
        )
        message = serializers.CharField(max_length=replies.QUESTION_MAX_CHARS)

        class Meta:
            ref_name = "ChatRequest"

    class OutputSerializer(serializers.Serializer[Any]):
        conversation_id = serializers.IntegerField()
        message_id = serializers.IntegerField(help_text="The stored answer (for feedback).")
        run_id = serializers.IntegerField()
        answer = serializers.CharField(source="content")
        citations = serializers.ListField(
            child=serializers.CharField(), help_text="Incident and document ids, verified."
        )
        dropped_citations = serializers.ListField(
            child=serializers.CharField(), help_text="Ids the model wrote that no tool returned."
        )
        steps = StepSerializer(many=True)

        class Meta:
            ref_name = "ChatAnswer"

    @extend_schema(
        operation_id="chat",
        tags=CHAT,
        summary="Ask a question; the answer with citations and steps, or its events as SSE",
        request=InputSerializer,
        responses={
            (200, "application/json"): OutputSerializer,
            (200, MEDIA_TYPE): OpenApiResponse(
                FRAME_SCHEMA,
                description="`event: <type>` / `data: <json>` frames: status, token, "
                "tool_call, tool_result, title, then done (or error).",
                examples=[OpenApiExample("stream", value=_SSE_EXAMPLE, media_type=MEDIA_TYPE)],
            ),
            **conflict(),
            503: OpenApiTypes.NONE,
        },
    )
    def post(self, request: Request) -> Any:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user, text = current_user(request), data.validated_data["message"]
        # The websocket's per-user rules, checked before a conversation is created.
        with asking.QuestionTurn(user_id=user.pk) as turn:
            conversation = services.conversation_for_question(
                user=user, conversation_id=data.validated_data.get("conversation_id")
            )
            if isinstance(request.accepted_renderer, EventStreamRenderer):
                events = replies.conversation_reply(conversation=conversation, user=user, text=text)
                return event_stream_response(request, turn.holding(events))
            done = replies.conversation_answer(conversation=conversation, user=user, text=text)
        return Response(self.OutputSerializer(done).data)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        # Refusals before the stream starts are HTTP errors in the one JSON format,
        # whatever the client accepts; errors during a stream are `error` events.
        if response.status_code >= 400 and isinstance(
            getattr(request, "accepted_renderer", None), EventStreamRenderer
        ):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = "application/json"
        return super().finalize_response(request, response, *args, **kwargs)
