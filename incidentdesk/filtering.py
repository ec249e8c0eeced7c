"""Apply a FilterSet inside a selector, with bad values as the project's ValidationError."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import Model, QuerySet
from django_filters import FilterSet

from incidentdesk.errors import ValidationError


def filter_queryset[M: Model](
    filterset: type[FilterSet], filters: Mapping[str, Any] | None, queryset: QuerySet[M]
) -> QuerySet[M]:
    """`queryset` narrowed by `filters` (query parameters); unknown keys are ignored."""
    bound = filterset(filters or {}, queryset=queryset)
    if not bound.is_valid():
        raise ValidationError("Invalid filters.", dict(bound.errors))
    result: QuerySet[M] = bound.qs
    return result
