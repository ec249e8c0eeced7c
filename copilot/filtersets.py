"""Golden-example list filters, defined once: the selector applies them, the API documents them."""

from __future__ import annotations

from django_filters import rest_framework as filters

from copilot.models import GoldenExample
from incidentdesk.filtering import StrictBooleanFilter


class GoldenExampleFilter(filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped
    is_active = StrictBooleanFilter(label="Active examples only (or inactive only)")
    source = filters.ChoiceFilter(choices=GoldenExample.Source.choices, label="Where it came from")
    q = filters.CharFilter(field_name="question", lookup_expr="icontains", label="Question text")

    class Meta:
        model = GoldenExample
        fields: list[str] = []
