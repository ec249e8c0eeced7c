"""Knowledge document endpoints: list, detail and the copilot's search. One view per operation."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from incidentdesk.api.auth import current_user
from incidentdesk.api.pagination import paginated_response
from incidentdesk.api.schema import filter_parameters, paginated
from knowledge import selectors
from knowledge.api.serializers import (
    KnowledgeDocumentDetailSerializer,
    KnowledgeDocumentSerializer,
    KnowledgeGroupsSerializer,
)
from knowledge.filtersets import KnowledgeDocumentFilter
from knowledge.models import KnowledgeDocument
from knowledge.parsing import FILTER_ALIASES

KNOWLEDGE = ["knowledge"]


class FilterValuesField(serializers.ListField):
    """A query parameter with several values: repeated (`?tag_filter=a&tag_filter=b`)
    or separated by commas (`?tag_filter=a,b`); each value is checked by `child`."""

    HOW = (
        "Repeat the parameter or separate values with commas; the design's camelCase "
        "name (typeFilter, serviceFilter, tagFilter) is accepted too."
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, max_length=20, **kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        values = [data] if isinstance(data, str) else data
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            values = [part.strip() for v in values for part in v.split(",") if part.strip()]
        return list(super().to_internal_value(values))


def _design_names(params: QueryDict) -> QueryDict:
    """The query with the design's camelCase filter names (`typeFilter`) under
    their snake_case ones, every value kept."""
    renamed = params.copy()
    for camel, snake in FILTER_ALIASES.items():
        if camel in renamed:
            if snake in renamed:
                raise ValidationError({camel: [f"Give '{snake}' or '{camel}', not both."]})
            renamed.setlist(snake, renamed.pop(camel))
    return renamed


class KnowledgeDocumentListApi(APIView):
    @extend_schema(
        operation_id="knowledge_documents_list",
        tags=KNOWLEDGE,
        summary="List knowledge documents (active versions) by id",
        parameters=filter_parameters(KnowledgeDocumentFilter),
        responses=paginated(KnowledgeDocumentSerializer, "PaginatedKnowledgeDocumentList"),
    )
    def get(self, request: Request) -> Response:
        documents = selectors.knowledge_document_list_for_user(
            user=current_user(request), filters=request.query_params
        )
        return paginated_response(
            queryset=documents,
            serializer_class=KnowledgeDocumentSerializer,
            request=request,
            view=self,
        )


class KnowledgeDocumentDetailApi(APIView):
    class InputSerializer(serializers.Serializer[Any]):
        version = serializers.IntegerField(
            required=False, min_value=1, help_text="Staff: read from this version."
        )

    @extend_schema(
        operation_id="knowledge_documents_retrieve",
        tags=KNOWLEDGE,
        summary="One knowledge document with its body",
        parameters=[InputSerializer],  # documented with its bounds, as it is checked
        responses=KnowledgeDocumentDetailSerializer,
    )
    def get(self, request: Request, doc_id: str) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        document = selectors.knowledge_document_get_for_user(
            doc_id=doc_id,
            user=current_user(request),
            version_id=query.validated_data.get("version"),
        )
        return Response(KnowledgeDocumentDetailSerializer(document).data)


class KnowledgeSearchApi(APIView):
    class InputSerializer(serializers.Serializer[Any]):
        query = serializers.CharField(
            max_length=2000, allow_blank=True, help_text="Empty with a filter: list by id."
        )
        limit = serializers.IntegerField(min_value=1, max_value=50, default=10)
        type_filter = FilterValuesField(
            child=serializers.ChoiceField(choices=KnowledgeDocument.Type.choices),
            help_text="Document types; any of them matches. " + FilterValuesField.HOW,
        )
        service_filter = FilterValuesField(
            child=serializers.CharField(max_length=200),
            help_text="Services (partial, case-insensitive); any of them matches. "
            + FilterValuesField.HOW,
        )
        tag_filter = FilterValuesField(
            child=serializers.CharField(max_length=100),
            help_text="Tags; any of them matches. " + FilterValuesField.HOW,
        )

    class OutputSerializer(serializers.Serializer[Any]):
        query = serializers.CharField()
        filters = serializers.DictField(child=serializers.CharField())
        results = KnowledgeGroupsSerializer()

        class Meta:
            ref_name = "KnowledgeSearch"

    @extend_schema(
        operation_id="knowledge_search",
        tags=KNOWLEDGE,
        summary="Hybrid search over knowledge, grouped by document type",
        parameters=[InputSerializer],
        responses=OutputSerializer,
    )
    def get(self, request: Request) -> Response:
        data = self.InputSerializer(data=_design_names(request.query_params))
        data.is_valid(raise_exception=True)
        search = selectors.knowledge_search(**data.validated_data)
        output = {"query": search.query, "filters": search.filters, "results": search.grouped()}
        return Response(self.OutputSerializer(output).data)
