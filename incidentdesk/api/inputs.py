"""Request bodies, read strictly: an unknown field, a control character or a JSON value of
the wrong type is a 400 naming the field.

The schema says the same (`incidentdesk.api.schema.strict_request_bodies`): no
additional properties, no control characters in strings. Before, a typo such
as `activte=true` was dropped without a word, and a control character was a
400 in a form (`incidentdesk.middleware`) but stored from JSON.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from django.core.validators import RegexValidator
from django.http import QueryDict
from rest_framework import serializers

from incidentdesk.middleware import has_control_character

UNKNOWN = "Unknown field."
CONTROL = "Contains a control character."
WRONG_TYPE = "Not of the type the schema gives."
# An http(s) address with no space or control character, or nothing. Django's
# URLValidator refused addresses the schema's `format: uri` admits (and a `uri`
# may be `javascript:...`, which a page would link).
WEB_ADDRESS = r"^(https?://[^\s\x00-\x1f\x7f-\x9f]+)?$"


class InputSerializer(serializers.Serializer[Any]):
    """The base of every view's request-body serializer (query parameters use plain ones,
    since `format` and the page parameters ride along)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            problems = {name: [UNKNOWN] for name in data if name not in self.fields}
            problems |= {name: [CONTROL] for name in _controlled(data) if name not in problems}
            if not isinstance(data, QueryDict):  # JSON: in a form every value is text
                problems |= {
                    name: [WRONG_TYPE]
                    for name, value in data.items()
                    if name not in problems and _wrong_type(self.fields[name], value)
                }
            if problems:
                raise serializers.ValidationError(problems)
        return super().to_internal_value(data)


def _wrong_type(field: serializers.Field[Any, Any, Any, Any], value: Any) -> bool:
    """A JSON value of another type than the field's: DRF turns 0 into "0" for a
    CharField and "7" into 7 for an IntegerField, where the schema says text or number."""
    if value is None:
        return False  # the field's allow_null decides
    if isinstance(field, serializers.ListField):
        return not isinstance(value, list) or any(_wrong_type(field.child, v) for v in value)
    if isinstance(field, serializers.CharField):
        return not isinstance(value, str)
    if isinstance(field, serializers.IntegerField):
        return isinstance(value, bool) or not isinstance(value, int)
    return False


def _controlled(data: Mapping[str, Any]) -> Iterator[str]:
    """Top-level fields whose value holds a control character at any depth."""
    for name, value in data.items():
        if any(has_control_character(text) for text in _strings(value)):
            yield str(name)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


class StrictBooleanField(serializers.BooleanField):
    """true or false: a JSON boolean, or those words in a multipart form.

    DRF's own also takes 0, 1, "yes", "on"..., where the schema says boolean.
    """

    default_error_messages = {"invalid": "Must be true or false."}
    _WORDS = {"true": True, "false": False}

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        if isinstance(data, str) and data in self._WORDS:
            return self._WORDS[data]
        self.fail("invalid")
        raise AssertionError  # fail() raises; for the type checker


class WebAddressField(serializers.CharField):
    """An http:// or https:// address, or empty (WEB_ADDRESS, which the schema shows)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_blank", True)
        super().__init__(**kwargs)
        self.validators.append(RegexValidator(WEB_ADDRESS, "Enter an http:// or https:// address."))
