"""Probes for a supervisor or a load balancer; no login, no session."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from incidentdesk.health import readiness

RETRY_AFTER_SECONDS = 5


@never_cache
@login_not_required
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: this process answers. Touches nothing else, so a dead
    database never gets the web process restarted for nothing."""
    return JsonResponse({"status": "ok"})


@never_cache
@login_not_required
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when the database, Redis and the embedder all work, else
    503 naming the part that does not, with Retry-After."""
    checks = readiness()
    ready = all(state == "ok" for state in checks.values())
    response = JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )
    if not ready:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
