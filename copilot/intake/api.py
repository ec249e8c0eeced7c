"""`POST /api/incident`: report an incident (text, screenshot, voice note) in one request.

Validates, makes one service call (`intake_report`), serializes. The same
steps, tickets and ledger as the chat; errors in the API's common format.
"""

from __future__ import annotations

from typing import Any

from django.core.files.uploadedfile import UploadedFile
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from copilot import services
from copilot.asking import QuestionTurn
from copilot.intake import media
from copilot.intake.services import MAX_TEXT_CHARS
from copilot.replies import intake_report
from incidentdesk.api import inputs
from incidentdesk.api.auth import current_user

INTAKE = ["incident intake"]


class _StepSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    outcome = serializers.CharField()
    ms = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)

    class Meta:
        ref_name = "IntakeStep"


class _TicketSerializer(serializers.Serializer[Any]):
    key = serializers.CharField()
    url = serializers.CharField()
    status = serializers.CharField()
    tracker = serializers.CharField()

    class Meta:
        ref_name = "IntakeTicket"


class IncidentReportApi(APIView):
    """Report a new incident, or follow up on the conversation's current one."""

    throttle_scope = "chat"
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    class InputSerializer(inputs.InputSerializer):
        conversation_id = serializers.IntegerField(
            required=False, allow_null=True, min_value=1, help_text="Default: a new conversation."
        )
        text = serializers.CharField(
            required=False, allow_blank=True, max_length=MAX_TEXT_CHARS, default=""
        )
        # Plain files: the type is checked from the content, not the name (media.py).
        image = serializers.FileField(required=False, help_text="A PNG or JPEG screenshot.")
        audio = serializers.FileField(
            required=False, help_text="A voice note; needs the online model (OPENAI_API_KEY)."
        )

        class Meta:
            ref_name = "IncidentReport"

    class OutputSerializer(serializers.Serializer[Any]):
        conversation_id = serializers.IntegerField()
        message_id = serializers.IntegerField()
        reply_text = serializers.CharField()
        kind = serializers.CharField(source="payload.kind")
        incident = serializers.DictField(source="payload.incident")
        similar_incidents = serializers.ListField(
            child=serializers.DictField(), source="payload.similar_incidents"
        )
        actions = serializers.ListField(child=serializers.DictField(), source="payload.actions")
        owner_team = serializers.CharField(source="payload.owner_team")
        ticket_info = _TicketSerializer(source="payload.ticket", allow_null=True)
        ticket_error = serializers.CharField(source="payload.ticket_error")
        decisions = serializers.ListField(child=serializers.DictField(), source="payload.decisions")
        steps_executed = _StepSerializer(many=True, source="payload.steps")

        class Meta:
            ref_name = "IncidentReportResult"

    @extend_schema(
        operation_id="incident_report",
        tags=INTAKE,
        summary="Report an incident: structured fields, similar incidents, actions, ticket",
        request={"multipart/form-data": InputSerializer},
        responses=OutputSerializer,
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = current_user(request)
        audio = data.validated_data.get("audio")
        # The websocket's per-user rules, checked before a conversation is created.
        with QuestionTurn(user_id=user.pk):
            conversation = services.conversation_for_question(
                user=user, conversation_id=data.validated_data.get("conversation_id")
            )
            result = intake_report(
                conversation=conversation,
                user=user,
                text=data.validated_data["text"],
                image=_read(data.validated_data.get("image"), "image"),
                audio=_read(audio, "audio"),
                audio_name=audio.name if audio else "",
            )
        return Response(self.OutputSerializer(result).data)


def _read(upload: UploadedFile[bytes] | None, field: str) -> bytes | None:
    if upload is None:
        return None
    media.check_size(size=upload.size or 0, field=field)
    return bytes(upload.read())
