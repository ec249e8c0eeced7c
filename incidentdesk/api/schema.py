"""OpenAPI helpers: the error format on every operation, filters and pages documented.

Used by drf-spectacular (settings.SPECTACULAR_SETTINGS) and the API views.
"""

from __future__ import annotations

from typing import Any

import django_filters
from drf_spectacular import generators
from drf_spectacular.generators import EndpointEnumerator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers

from incidentdesk.api.pagination import MAX_PAGE_NUMBER, Pagination

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every error has this shape.",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "fields"],
            "properties": {
                "code": {"type": "string", "example": "not_found"},
                "message": {"type": "string", "example": "Conversation 7 not found."},
                "fields": {
                    "type": "object",
                    "description": "Per input field, what is wrong with it.",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_REASONS = {
    "400": "Invalid input",
    "401": "Not authenticated",
    "403": "Not allowed (staff only)",
    "404": "Not found, or not yours",
    "409": "Conflicts with the current state",
    "429": "Too many requests",
    "503": "The chat model is unavailable; try again",
}


def add_error_responses(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: the error responses every operation can return."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            # A path id, or an id in the body (a version, a conversation), may not be found.
            names_an_object = "{" in path or method != "get"
            codes = ["400", "401", "403", "429"] + (["404"] if names_an_object else [])
            for code in codes:
                operation["responses"].setdefault(code, _error_response(code))
            for code, response in operation["responses"].items():
                if code in _REASONS and not _has_schema(response):
                    operation["responses"][code] = _error_response(code)
    return result


def add_page_parameters(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: `limit` and `offset` on every paginated list, with their bounds.

    The views are plain APIViews, so drf-spectacular does not see the paginator;
    Pagination answers 400 outside these bounds.
    """
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            ok = operation["responses"].get("200", {}).get("content", {})
            ref = ok.get("application/json", {}).get("schema", {}).get("$ref", "")
            if ref.startswith("#/components/schemas/Paginated"):
                parameters = operation.setdefault("parameters", [])
                parameters += [_page_parameter(name, low) for name, low in _PAGE_BOUNDS]
    return result


# What a request's text may hold: no C0/C1 control character but tab, LF and CR, as
# incidentdesk.middleware (path, query, forms) and incidentdesk.api.inputs (bodies) check.
NO_CONTROL_CHARACTERS = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"


def strict_requests(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: requests as the API reads them (incidentdesk.api.inputs).

    Request bodies take no field they do not declare, no text parameter or field
    holds a control character, and an optional query parameter may be sent empty.
    Left out, the schema allowed what every operation answers 400 to (and refused
    an empty value it takes). Runs after the enum hook, which moves choices to
    components of their own.
    """
    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request"):  # COMPONENT_SPLIT_REQUEST: the request side only
            _strict_body(schema)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                _plain_text(parameter.get("schema", {}))
                _plain_text(parameter.get("schema", {}).get("items", {}))  # repeated ones
                _empty_is_absent(parameter)
            for media in operation.get("requestBody", {}).get("content", {}).values():
                _strict_body(media.get("schema", {}))  # inline ones; a $ref is done above
    return result


def _empty_is_absent(parameter: dict[str, Any]) -> None:
    """`?version=&limit=`: an optional query parameter sent empty counts as not sent
    (django-filter, DRF and Pagination all read it so); a text one is "" already."""
    optional = parameter.get("in") == "query" and not parameter.get("required")
    schema = parameter.get("schema", {})
    if optional and (schema.get("type") != "string" or "format" in schema):  # dates too
        parameter["allowEmptyValue"] = True


def _strict_body(schema: dict[str, Any]) -> None:
    if schema.get("type") != "object":
        return
    schema["additionalProperties"] = False
    for field in schema.get("properties", {}).values():
        _plain_text(field)
        _plain_text(field.get("items", {}))


def _plain_text(schema: dict[str, Any]) -> None:
    """A free text string gets the pattern; enums, dates and files say enough already."""
    if schema.get("type") == "string" and not {"enum", "format", "pattern"} & schema.keys():
        schema["pattern"] = NO_CONTROL_CHARACTERS


_PAGE_BOUNDS = [("limit", 1), ("offset", 0)]
_PAGE_DESCRIPTIONS = {
    "limit": f"Results per page (default 25; above {Pagination.max_limit} is capped).",
    "offset": "Results to skip before this page.",
}


def _page_parameter(name: str, minimum: int) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": _PAGE_DESCRIPTIONS[name],
        "schema": {"type": "integer", "minimum": minimum, "maximum": MAX_PAGE_NUMBER},
    }


def _has_schema(response: dict[str, Any]) -> bool:
    """`OpenApiTypes.NONE` (how views mark an error status) leaves no schema."""
    content = response.get("content") or {}
    return any(media.get("schema") is not None for media in content.values())


def _error_response(code: str) -> dict[str, Any]:
    return {
        "description": _REASONS.get(code, "Error"),
        "content": {"application/json": {"schema": _ERROR_REF}},
    }


def conflict() -> dict[int, Any]:
    """`responses=` entry for operations that can clash with the current state (409)."""
    return {409: OpenApiTypes.NONE}


_FILTER_TYPES: list[tuple[type[django_filters.Filter], Any]] = [
    (django_filters.NumberFilter, OpenApiTypes.INT),
    (django_filters.DateFilter, OpenApiTypes.DATE),
    (django_filters.BooleanFilter, OpenApiTypes.BOOL),
]


def filter_parameters(filterset: type[django_filters.FilterSet]) -> list[OpenApiParameter]:
    """Query parameters documented from the FilterSet itself, so filters live in one place."""
    parameters = []
    for name, field in filterset.base_filters.items():
        kind = next((t for cls, t in _FILTER_TYPES if isinstance(field, cls)), OpenApiTypes.STR)
        choices = getattr(field, "extra", {}).get("choices")
        parameters.append(
            OpenApiParameter(
                name,
                kind,
                description=str(field.label or ""),
                enum=[value for value, _ in choices] if choices else None,
            )
        )
    return parameters


def paginated(serializer: type[serializers.BaseSerializer[Any]], name: str) -> Any:
    """The page envelope of LimitOffsetPagination around `serializer`."""
    return inline_serializer(
        name=name,
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer(many=True),
        },
    )


class _Endpoints(EndpointEnumerator):
    """Expands `operations(...)` URLs into one endpoint per method, each with its own view."""

    def should_include_endpoint(self, path: str, callback: Any) -> bool:
        return hasattr(callback, "operations") or bool(
            super().should_include_endpoint(path, callback)
        )

    def get_allowed_methods(self, callback: Any) -> list[str]:
        if hasattr(callback, "operations"):
            return list(callback.operations)
        return list(super().get_allowed_methods(callback))  # type: ignore[no-untyped-call]

    def get_api_endpoints(self, patterns: Any = None, prefix: str = "") -> list[Any]:
        endpoints = super().get_api_endpoints(patterns, prefix)  # type: ignore[no-untyped-call]
        return [
            (path, regex, method, getattr(callback, "operations", {}).get(method, callback))
            for path, regex, method, callback in endpoints
        ]


class SchemaGenerator(generators.SchemaGenerator):
    endpoint_inspector_cls = _Endpoints
