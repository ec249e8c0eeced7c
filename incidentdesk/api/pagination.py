"""One pagination for every list endpoint."""

from typing import Any

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView


class Pagination(LimitOffsetPagination):
    """`?limit=&offset=`, 25 by default; capped so one call cannot dump a table."""

    max_limit = 100


def paginated_response(
    *, queryset: Any, serializer_class: type[BaseSerializer[Any]], request: Request, view: APIView
) -> Response:
    """One page of `queryset`, serialized, in the `{count, next, previous, results}` envelope."""
    paginator = Pagination()
    page: Any = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)
