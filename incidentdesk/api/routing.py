"""One URL, one view class per operation (STYLE rule 8), RESTful paths all the same.

`operations(get=IncidentListApi, post=IncidentCreateApi)` serves both on one
path; the schema generator (incidentdesk.api.schema) documents each
operation from its own class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from rest_framework.views import APIView

Endpoint = Callable[..., HttpResponseBase]


def operations(**views: type[APIView]) -> Endpoint:
    handlers = {method.upper(): view.as_view() for method, view in views.items()}
    # Every method of the path, as DRF would list a single view's (HEAD with GET).
    head = ["HEAD"] if "GET" in handlers else []
    allowed = ", ".join([*handlers, *head, "OPTIONS"])

    def endpoint(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        method = "GET" if request.method == "HEAD" else str(request.method)
        # Any operation's view answers OPTIONS, or 405 in the one error format.
        handler = handlers.get(method) or next(iter(handlers.values()))
        response = handler(request, *args, **kwargs)
        # DRF's `Allow` names one view's methods; the path has them all (RFC 9110 10.2.1).
        response["Allow"] = allowed
        return response

    endpoint.operations = handlers  # type: ignore[attr-defined]
    endpoint.csrf_exempt = True  # type: ignore[attr-defined]  # DRF checks CSRF for sessions
    endpoint.login_required = False  # type: ignore[attr-defined]  # DRF authenticates
    return endpoint
