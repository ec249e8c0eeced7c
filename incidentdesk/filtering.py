"""Apply a FilterSet inside a selector, with bad values as the project's ValidationError."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.db.models import Model, QuerySet
from django_filters import FilterSet
from django_filters import rest_framework as filters

from incidentdesk.errors import ValidationError


class StrictBooleanField(forms.NullBooleanField):
    """true/false (or 1/0, any case), or absent; anything else is an error.

    django-filter's own field turns `?repeat=junk` into "no filter", so a typo
    silently returned every row.
    """

    widget = forms.TextInput  # the select widget maps unknown values to None first
    _VALUES = {"true": True, "1": True, "false": False, "0": False}

    # The stubs give NullBooleanField BooleanField's `-> bool`; None is its point.
    def to_python(self, value: Any) -> bool | None:  # type: ignore[override]
        if value in (None, ""):
            return None
        try:
            return self._VALUES[str(value).lower()]
        except KeyError:
            raise forms.ValidationError("Must be true or false.", code="invalid") from None


class StrictBooleanFilter(filters.BooleanFilter):  # type: ignore[misc]  # django-filter is untyped
    """A BooleanFilter whose bad values are a 400 naming the field, not ignored."""

    field_class = StrictBooleanField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # django-filter's DRF flavour sets a widget that maps unknown values to None.
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


class IntegerFilter(filters.NumberFilter):  # type: ignore[misc]  # django-filter is untyped
    """A NumberFilter for ids: `?version=0.5` is a 400 naming the field.

    django-filter's own reads a decimal, so 0.5 matched no id and the list came
    back empty, where the schema (an integer) says the value is wrong.
    """

    field_class = forms.IntegerField


def filter_queryset[M: Model](
    filterset: type[FilterSet], filters: Mapping[str, Any] | None, queryset: QuerySet[M]
) -> QuerySet[M]:
    """`queryset` narrowed by `filters` (query parameters); unknown keys are ignored."""
    bound = filterset(filters or {}, queryset=queryset)
    if not bound.is_valid():
        # The message names the first bad field, as the API's other 400s do.
        name, messages = next(iter(bound.errors.items()))
        raise ValidationError(f"Invalid filter: {name}: {messages[0]}", dict(bound.errors))
    result: QuerySet[M] = bound.qs
    return result
