"""URL routes: the app pages, accounts (allauth), the admin and the API."""

from django.contrib import admin
from django.urls import include, path

from incidentdesk import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),  # liveness (no database)
    path("readyz", views.readyz, name="readyz"),  # readiness: database, Redis, embedder
    path("", include("copilot.urls")),
    path("incidents/", include("incidents.urls")),
    path("knowledge/", include("knowledge.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("copilot.intake.urls")),  # POST /api/incident
    path("tickets/", include("copilot.tickets.urls")),  # the built-in tracker's pages
    path("api/", include("incidentdesk.api.urls")),
]

handler400 = "incidentdesk.api.errors.bad_request"
handler404 = "incidentdesk.api.errors.page_not_found"
# 503 with Retry-After while the database or Redis is down, else the usual 500.
handler500 = "incidentdesk.api.errors.server_error"
