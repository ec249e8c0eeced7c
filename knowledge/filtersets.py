"""Knowledge list filters, defined once: the selector applies them, the API documents them."""

from __future__ import annotations

from django_filters import rest_framework as filters

from incidentdesk.filtering import IntegerFilter
from knowledge.models import KnowledgeDocument


class KnowledgeDocumentFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    type = filters.ChoiceFilter(choices=KnowledgeDocument.Type.choices, label="Document type")
    service = filters.CharFilter(
        field_name="services", lookup_expr="icontains", label="A service the document covers"
    )
    tag = filters.CharFilter(field_name="tags", lookup_expr="icontains", label="A tag")
    dataset = filters.CharFilter(field_name="version__dataset__slug", label="Dataset slug")
    version = IntegerFilter(
        field_name="version_id", label="Dataset version id (staff: any version)"
    )

    class Meta:
        model = KnowledgeDocument
        fields: list[str] = []
