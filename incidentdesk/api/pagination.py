"""One pagination for every list endpoint."""

from typing import Any, cast

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView


class Pagination(LimitOffsetPagination):
    """`?limit=&offset=`, 25 by default; capped so one call cannot dump a table.

    DRF falls back to the defaults on a bad value (`?limit=abc` gave 25 rows);
    here a value that is not a whole number in range is a 400 naming the field.
    """

    max_limit = 100

    def get_limit(self, request: Request) -> int:
        limit = _whole_number(request, self.limit_query_param, minimum=1)
        # Above the cap is still served, capped: the page's `next` link says so.
        return cast(int, self.default_limit) if limit is None else min(limit, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _whole_number(request, self.offset_query_param, minimum=0) or 0


# Far past any table; also keeps int() away from 100k-digit strings.
MAX_PAGE_NUMBER = 1_000_000_000


def _whole_number(request: Request, name: str, *, minimum: int) -> int | None:
    """The query parameter `name` as an int in range, None when absent or empty."""
    raw = request.query_params.get(name) or ""
    if not raw:
        return None
    fits = raw.isascii() and raw.isdigit() and len(raw) <= len(str(MAX_PAGE_NUMBER))
    if not fits or not minimum <= int(raw) <= MAX_PAGE_NUMBER:
        message = f"Must be a whole number from {minimum} to {MAX_PAGE_NUMBER}."
        raise ValidationError({name: [message]})
    return int(raw)


def paginated_response(
    *, queryset: Any, serializer_class: type[BaseSerializer[Any]], request: Request, view: APIView
) -> Response:
    """One page of `queryset`, serialized, in the `{count, next, previous, results}` envelope."""
    paginator = Pagination()
    page: Any = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
