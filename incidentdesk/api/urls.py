"""/api/: every app's endpoints, the OpenAPI schema and the offline Swagger UI."""

from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

app_name = "api"

urlpatterns = [
    path("", include("incidents.api.urls")),
    path("", include("knowledge.api.urls")),
    path("", include("copilot.api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # A page for people: signed-out visitors go to the login page, not a 401.
    path(
        "docs/",
        login_required(SpectacularSwaggerView.as_view(url_name="api:schema")),
        name="docs",
    ),
]
