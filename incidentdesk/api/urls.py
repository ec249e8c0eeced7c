"""/api/: every app's endpoints, the OpenAPI schema and the offline Swagger UI."""

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

app_name = "api"
_DOCS_CSP: dict[str, Any] = {**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]}

urlpatterns = [
    path("", include("incidents.api.urls")),
    path("", include("knowledge.api.urls")),
    path("", include("copilot.api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # A page for people: signed-out visitors go to the login page, not a 401.
    # The split view serves its start-up script as a file (`?script`), so the
    # page needs no inline script under the CSP; Swagger UI's own inline
    # styles are the one relaxation.
    path(
        "docs/",
        csp_override(_DOCS_CSP)(
            login_required(SpectacularSwaggerSplitView.as_view(url_name="api:schema"))
        ),
        name="docs",
    ),
]
